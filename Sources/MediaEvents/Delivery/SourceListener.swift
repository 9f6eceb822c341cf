/// What one source does inside libvlc's callback before its event takes the generic way to the
/// subscribers: the source's typed hook (the list's copy that follows the list, the list
/// player's advance gate). Delivery knows only this protocol, never what a hook is.
protocol CallbackHook<Event>: Sendable {
    associatedtype Event
    /// Runs inside libvlc's callback, on libvlc's thread with the send site's locks held,
    /// before the event is delivered: it never blocks for long, calls libvlc or user code.
    /// Returns `true` when it took the delivery over (the callback then delivers nothing).
    func inCallback(_ event: Event) -> Bool
}

/// The hook of a source that does nothing inside libvlc's callback.
struct NoCallbackHook<Event>: CallbackHook {
    func inCallback(_ event: Event) -> Bool { false }
}

/// The receiver of a source's native listeners: runs the source's hook, then delivers the event
/// to the source's subscribers as its `EventsConfiguring` says, through the source's
/// `EventsHandler` (which holds the source weakly).
final class SourceListener<Source: VLCEventSource, Hook: CallbackHook>: NativeEventReceiver
where Hook.Event == Source.Event, Source.Event: NativeEventConvertible {
    let handler: EventsHandler<Source>
    let hook: Hook

    init(handler: EventsHandler<Source>, hook: Hook) {
        self.handler = handler
        self.hook = hook
    }

    @inline(__always)
    func receive(_ event: consuming Source.Event, sender: UInt) {
        let event = event
        if !hook.inCallback(event) {
            handler.handle(event, sender: sender) { source, event in source.eventHub.publish(event) }
        }
        // The wrappers an event carries (a media it lends, list items) were made for it inside
        // the callback; their last reference must not go on this libvlc thread.
        if event.holdsWrappers { ServiceQueues.releaseLater(consume event) }
    }
}

extension NativeEventTable {
    /// Listeners for every kind of `source`'s events on `manager`, whose receiver is a new
    /// `SourceListener` of `source` with `hook`: what each object makes in its `init` and binds
    /// to its hub. `callback` must forward to that very `SourceListener` type.
    convenience init<Source: VLCEventSource, Hook: CallbackHook>(
        everyKindOf source: Source, manager: NativeEventManager, callback: NativeCallback,
        configuration: any EventsConfiguring, hook: Hook
    ) where Hook.Event == Source.Event, Source.Event: NativeEventConvertible {
        self.init(
            manager: manager, types: Source.Event.Kind.allCases.map(\.nativeType), callback: callback,
            receiver: SourceListener(
                handler: EventsHandler(object: source, configuration: configuration), hook: hook))
    }

    /// The same with no hook.
    convenience init<Source: VLCEventSource>(
        everyKindOf source: Source, manager: NativeEventManager, callback: NativeCallback,
        configuration: any EventsConfiguring
    ) where Source.Event: NativeEventConvertible {
        self.init(
            everyKindOf: source, manager: manager, callback: callback, configuration: configuration,
            hook: NoCallbackHook<Source.Event>())
    }
}
