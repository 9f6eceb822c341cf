import CLibVLC
import Foundation

/// An audio output device, as libvlc's audio output lists it.
public struct AudioOutputDevice: Sendable, Hashable {
    /// The identifier to pass to `setAudioOutputDevice` (ALSA: `null`, `default`, …).
    public let id: String
    /// A human-readable description.
    public let description: String
}

/// Snapshots, audio devices, and the waiting forms of volume and mute.
extension VLCMediaPlayer {
    // MARK: Snapshots

    /// Writes a snapshot of the current video to `path` (PNG; `width` and `height` 0 keep the
    /// video's size, one of them 0 keeps its aspect ratio) and returns the path libvlc reports
    /// in its `snapshotTaken` event.
    ///
    /// libvlc sends `snapshotTaken` to every player of the library, not only to the one that
    /// took the snapshot: this call takes the event whose path is the one asked for (or lies
    /// in it, when `path` is a directory and libvlc chose the file name); a subscriber of
    /// another player of the same library receives it too.
    ///
    /// While the player is opening, or has reported a video output that libvlc is replacing
    /// (it briefly has none while it reconfigures, even after `voutChanged(count: 1)`), the
    /// call tries again every 50 ms until `timeout`.
    ///
    /// - Throws: `VLCError.operationFailed` when libvlc cannot take it (no video output, or a
    ///   path it cannot write); `VLCError.timedOut` when its event does not arrive within
    ///   `timeout`.
    public func takeSnapshot(
        to path: String, width: Int = 0, height: Int = 0,
        timeout: Duration = .seconds(5)
    ) async throws -> String {
        let stream = events(kinds: [.snapshotTaken], buffering: .default)
        let deadline = ContinuousClock.now + timeout
        while true {
            let failure: String? = await control.performAndWait { player in
                let status = path.withCString {
                    libvlc_video_take_snapshot(player, 0, $0, UInt32(clamping: width), UInt32(clamping: height))
                }
                return status == 0 ? nil : VLCError.lastMessage(or: "no video output")
            }
            guard let failure else { break }
            let values = cachedValues
            let mayGetOne = values.state == .opening || values.state == .buffering || values.videoOutputs > 0
            if !mayGetOne || ContinuousClock.now + .milliseconds(50) >= deadline || Task.isCancelled {
                stream.cancel()
                throw VLCError.operationFailed(what: "snapshot to \(path)", reason: failure)
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        let directory = path.hasSuffix("/") ? path : path + "/"
        let event = try await stream.first(timeout: timeout, describing: "SnapshotTaken for \(path)") { event in
            guard case .snapshotTaken(let taken) = event else { return false }
            return taken == path || taken.hasPrefix(directory)
        }
        guard case .snapshotTaken(let taken) = event else { preconditionFailure("only snapshotTaken is accepted") }
        return taken
    }

    // MARK: Audio output

    /// The devices of the current audio output (empty before the output exists, that is
    /// before the first audio of a playback).
    public func audioOutputDevices() async -> [AudioOutputDevice] {
        await control.performAndWait { player in
            guard let list = libvlc_audio_output_device_enum(player) else { return [] }
            defer { libvlc_audio_output_device_list_release(list) }
            var devices: [AudioOutputDevice] = []
            var next: UnsafeMutablePointer<libvlc_audio_output_device_t>? = list
            while let entry = next {
                devices.append(
                    AudioOutputDevice(
                        id: entry.pointee.psz_device.map { String(cString: $0) } ?? "",
                        description: entry.pointee.psz_description.map { String(cString: $0) } ?? ""))
                next = entry.pointee.p_next
            }
            return devices
        }
    }

    /// The identifier of the current audio output device, `nil` when libvlc cannot tell.
    public func audioOutputDevice() async -> String? {
        await control.performAndWait { player in
            guard let device = libvlc_audio_output_device_get(player) else { return nil }
            defer { free(device) }
            return String(cString: device)
        }
    }

    /// Switches the current audio output to device `id` (queued); libvlc sends `audioDevice`.
    public func setAudioOutputDevice(_ id: String) {
        perform { player in id.withCString { libvlc_audio_output_device_set(player, nil, $0) } }
    }

    /// Sets the volume (0 to 200 percent) and returns whether libvlc took it (`false` without
    /// an audio output, or for a value out of range). `adummy` takes it and reports nothing:
    /// `AudioVolume`, `Muted` and `Unmuted` come only from an output with a volume (ALSA's
    /// `null` device works headless: `--aout=alsa --alsa-audio-device=null`).
    @discardableResult
    public func setVolumeAndWait(_ percent: Int) async -> Bool {
        await control.performAndWait { libvlc_audio_set_volume($0, Int32(clamping: percent)) == 0 }
    }

    /// Mutes or unmutes, returning once libvlc has carried it out.
    public func setMutedAndWait(_ muted: Bool) async {
        await control.performAndWait { libvlc_audio_set_mute($0, muted ? 1 : 0) }
    }
}
