import CLibVLC

/// An event type that can be made from what libvlc lends a listener.
protocol NativeEventConvertible {
    /// Copies the payload (or retains the objects it lends) inside the callback, where the
    /// pointers are valid; `nil` for a type this source does not know.
    init?(native event: NativeEvent)
}

/// The user data of one table's listeners: what libvlc's callback hands the converted event to,
/// on libvlc's thread, with the locks of the event's send site held (<doc:SendSites>).
protocol NativeEventReceiver: AnyObject, Sendable {
    associatedtype Event: NativeEventConvertible
    /// Called once per event, inside libvlc's callback.
    func receive(_ event: consuming Event, sender: UInt)
}

enum NativeEvents {
    /// The body of every C listener: borrows the receiver from libvlc's user data, converts the
    /// event inside the callback (where lent pointers are valid) and hands it over.
    @inline(__always)
    static func forward<Receiver: NativeEventReceiver>(
        _ event: UnsafePointer<libvlc_event_t>?, _ userData: UnsafeMutableRawPointer?, to receiver: Receiver.Type
    ) {
        guard let event, let userData, let typed = Receiver.Event(native: NativeEvent(event)) else { return }
        // Borrowed without a retain: the native event table holds the receiver until every
        // listener is detached.
        Unmanaged<Receiver>.fromOpaque(userData)._withUnsafeGuaranteedRef {
            $0.receive(typed, sender: UInt(bitPattern: event.pointee.p_obj))
        }
    }
}

// MARK: The conversions, one per source

extension MediaEvent: NativeEventConvertible {
    /// Copies the payload out of libvlc's event; retains the sub-item libvlc lends (it releases
    /// a nested node's right after the send, M6).
    init?(native event: NativeEvent) {
        let u = event.raw.pointee.u
        switch event.type {
        case 0: self = .metaChanged(MetaKey(rawValue: u.media_meta_changed.meta_type.rawValue))
        case 1:
            guard let child = u.media_subitem_added.new_child else { return nil }
            self = .subItemAdded(VLCMedia(retaining: NativeMedia(child)))
        case 2: self = .durationChanged(milliseconds: u.media_duration_changed.new_duration)
        case 3: self = .parsedChanged(ParsedStatus(native: u.media_parsed_changed.new_status))
        case 4: self = .freed
        case 5: self = .stateChanged(PlaybackState(native: u.media_state_changed.new_state))
        case 6:
            guard let item = u.media_subitemtree_added.item else { return nil }
            self = .subItemTreeAdded(VLCMedia(retaining: NativeMedia(item)))
        default: return nil
        }
    }
}

extension MediaPlayerEvent: NativeEventConvertible {
    /// Copies the payload out of libvlc's event; the strings and the media it lends
    /// (`MediaChanged`, `SnapshotTaken`, `AudioDevice`) are valid only during the callback.
    init?(native event: NativeEvent) {
        let u = event.raw.pointee.u
        switch event.type - 0x100 {
        case 0:
            self = .mediaChanged(u.media_player_media_changed.new_media.map { VLCMedia(retaining: NativeMedia($0)) })
        case 1: self = .nothingSpecial
        case 2: self = .opening
        case 3: self = .buffering(percent: u.media_player_buffering.new_cache)
        case 4: self = .playing
        case 5: self = .paused
        case 6: self = .stopped
        case 7: self = .forward
        case 8: self = .backward
        case 9: self = .endReached
        case 10: self = .encounteredError
        case 11: self = .timeChanged(milliseconds: u.media_player_time_changed.new_time)
        case 12: self = .positionChanged(u.media_player_position_changed.new_position)
        case 13: self = .seekableChanged(u.media_player_seekable_changed.new_seekable != 0)
        case 14: self = .pausableChanged(u.media_player_pausable_changed.new_pausable != 0)
        case 15: self = .titleChanged(Int(u.media_player_title_changed.new_title))
        case 16:
            self = .snapshotTaken(path: u.media_player_snapshot_taken.psz_filename.map { String(cString: $0) } ?? "")
        case 17: self = .lengthChanged(milliseconds: u.media_player_length_changed.new_length)
        case 18: self = .voutChanged(count: Int(u.media_player_vout.new_count))
        case 19: self = .scrambledChanged(u.media_player_scrambled_changed.new_scrambled != 0)
        case 20, 21, 22:
            let type = TrackType(native: u.media_player_es_changed.i_type.rawValue)
            let id = Int(u.media_player_es_changed.i_id)
            self =
                event.type - 0x100 == 20
                ? .esAdded(type: type, id: id)
                : event.type - 0x100 == 21 ? .esDeleted(type: type, id: id) : .esSelected(type: type, id: id)
        case 23: self = .corked
        case 24: self = .uncorked
        case 25: self = .muted
        case 26: self = .unmuted
        case 27: self = .audioVolume(u.media_player_audio_volume.volume)
        case 28: self = .audioDevice(u.media_player_audio_device.device.map { String(cString: $0) })
        case 29: self = .chapterChanged(Int(u.media_player_chapter_changed.new_chapter))
        default: return nil
        }
    }
}

extension MediaListEvent: NativeEventConvertible {
    /// Retains the item libvlc lends (it is released right after a delete, L2).
    init?(native event: NativeEvent) {
        let u = event.raw.pointee.u
        func item(_ media: OpaquePointer?) -> VLCMedia? { media.map { VLCMedia(retaining: NativeMedia($0)) } }
        switch event.type {
        case 0x200:
            guard let media = item(u.media_list_item_added.item) else { return nil }
            self = .itemAdded(media, index: Int(u.media_list_item_added.index))
        case 0x201:
            guard let media = item(u.media_list_will_add_item.item) else { return nil }
            self = .willAddItem(media, index: Int(u.media_list_will_add_item.index))
        case 0x202:
            guard let media = item(u.media_list_item_deleted.item) else { return nil }
            self = .itemDeleted(media, index: Int(u.media_list_item_deleted.index))
        case 0x203:
            guard let media = item(u.media_list_will_delete_item.item) else { return nil }
            self = .willDeleteItem(media, index: Int(u.media_list_will_delete_item.index))
        case 0x204:
            self = .endReached
        default:
            return nil
        }
    }
}

extension MediaListPlayerEvent: NativeEventConvertible {
    /// Retains the item libvlc lends for the callback only.
    init?(native event: NativeEvent) {
        switch event.type {
        case 0x400: self = .played
        case 0x401:
            guard let item = event.raw.pointee.u.media_list_player_next_item_set.item else { return nil }
            self = .nextItemSet(VLCMedia(retaining: NativeMedia(item)))
        case 0x402: self = .stopped
        default: return nil
        }
    }
}

extension MediaDiscovererEvent: NativeEventConvertible {
    init?(native event: NativeEvent) {
        switch event.type {
        case 0x500: self = .started
        case 0x501: self = .ended
        default: return nil
        }
    }
}

extension RendererDiscovererEvent: NativeEventConvertible {
    /// Holds the item inside the callback, as libvlc requires for keeping it.
    init?(native event: NativeEvent) {
        let u = event.raw.pointee.u
        switch event.type {
        case 0x502:
            guard let item = u.renderer_discoverer_item_added.item else { return nil }
            self = .itemAdded(VLCRendererItem(holding: NativeRendererItem(item)))
        case 0x503:
            guard let item = u.renderer_discoverer_item_deleted.item else { return nil }
            self = .itemDeleted(VLCRendererItem(holding: NativeRendererItem(item)))
        default:
            return nil
        }
    }
}

extension VLMEvent: NativeEventConvertible {
    /// Copies the names libvlc lends for the callback only.
    init?(native event: NativeEvent) {
        guard event.type >= 0x600, let kind = Kind(rawValue: Int(event.type - 0x600)) else { return nil }
        let payload = event.raw.pointee.u.vlm_media_event
        self.init(
            kind: kind,
            mediaName: payload.psz_media_name.map { String(cString: $0) },
            instanceName: payload.psz_instance_name.map { String(cString: $0) })
    }
}
