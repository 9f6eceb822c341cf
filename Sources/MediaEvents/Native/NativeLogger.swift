import CLibVLCLog
import Synchronization

/// The C logger of one libvlc instance (the CLibVLCLog target: libvlc's log callback takes a
/// `va_list`, which Swift cannot) and its one `libvlc_log_set` / `libvlc_log_unset` pair.
///
/// The phase is a state machine under a lock with a condition: "exactly once" is a transition,
/// a teardown that meets an install in progress sleeps until it is complete, and no lock is
/// held while libvlc runs.
final class NativeLogger: Sendable {
    /// The C function the logger calls with each formatted message (`mel_log_deliver_fn`).
    typealias Callback = mel_log_deliver_fn

    private enum Phase {
        case idle, installing, installed, ended
    }

    /// A reference of its own (`libvlc_retain`): the log outlives the `VLCLibrary` wrapper
    /// until it is unset, so the instance must too.
    private let instance: NativeLibrary
    /// The C `mel_logger_t`; freed after the unset has returned.
    let logger: NativePointer
    /// What the callback receives as its context, held here so that it outlives every call
    /// of the callback: this object is freed only after the unset has returned, while the
    /// Swift object that made it may go first (a library dropped while libvlc still logs).
    private let context: AnyObject & Sendable
    private let phase = Waitable(Phase.idle)
    /// Identifies this logger in `finishedCounts`.
    let id: Int

    private static let nextID = Atomic<Int>(1)
    /// `libvlc_log_set` and `libvlc_log_unset` calls of each logger torn down, by `id`: the
    /// test hook for "exactly once per instance".
    static let finishedCounts = Protected<[Int: (sets: Int, unsets: Int)]>([:])

    /// Calls `mel_logger_create` with `callback` and `context` (borrowed by the callback, held
    /// by this object), and `libvlc_retain` on `instance`.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread (the library's initializer).
    init(instance: NativeLibrary, callback: Callback, context: AnyObject & Sendable) {
        instance.retain()
        self.instance = instance
        self.context = context
        guard let logger = mel_logger_create(callback, Unmanaged.passUnretained(context).toOpaque()) else {
            preconditionFailure("mel_logger_create: out of memory")
        }
        self.logger = NativePointer(raw: logger)
        id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Calls `libvlc_log_set` (through `mel_logger_install`) unless that was done already.
    ///
    /// A caller that races the first install does not wait for it: libvlc logs from inside
    /// `libvlc_log_set` (its version banner), and a handler of that banner running on a
    /// synchronous queue may subscribe while the installing thread waits for that queue. Such
    /// a caller may miss the messages logged before the install takes effect (once per
    /// instance, a matter of microseconds).
    /// - Sends: log messages, from inside the call. Locks: the logger's rwlock, write side (G31).
    /// - Queue: never a log callback: the first subscriber's thread.
    func installIfNeeded() {
        let install = phase.withLock { phase -> Bool in
            guard phase == .idle else { return false }
            phase = .installing
            return true
        }
        guard install else { return }
        mel_logger_install(logger.raw, instance.pointer)
        phase.change { $0 = .installed }
    }

    /// Ends a logger that was never installed: releases at once and returns `true`.
    func endIfNeverInstalled() -> Bool {
        let ended = phase.withLock { phase -> Bool in
            guard phase == .idle else { return false }
            phase = .ended
            return true
        }
        if ended { finish(unset: false) }
        return ended
    }

    /// Calls `libvlc_log_unset` (through `mel_logger_uninstall`), which waits for running
    /// callbacks, then `libvlc_release` and `mel_logger_destroy`.
    /// - Sends: nothing. Locks: the logger's rwlock, write side (G31).
    /// - Queue: a MediaEvents queue (the teardown queue), never a log callback (rule 11).
    func tearDown() {
        let installed = phase.wait(until: { $0 != .installing }) { phase, _ -> Bool? in
            defer { phase = .ended }
            switch phase {
            case .installed: return true
            case .idle: return false
            case .installing, .ended: return nil
            }
        }
        if let installed { finish(unset: installed) }
    }

    private func finish(unset: Bool) {
        if unset { mel_logger_uninstall(logger.raw, instance.pointer) }
        let counts = (sets: Int(mel_logger_set_count(logger.raw)), unsets: Int(mel_logger_unset_count(logger.raw)))
        Self.finishedCounts.withLock { $0[id] = counts }
        instance.release()
        mel_logger_destroy(logger.raw)
    }

    /// Calls `mel_logger_set_mask`: the libvlc levels (bit `1 << level`) formatted and delivered.
    /// - Sends: nothing. Locks: none (an atomic store).
    /// - Queue: any thread.
    func setMask(_ mask: UInt32) { mel_logger_set_mask(logger.raw, mask) }

    /// Calls `mel_logger_mask`.
    /// - Sends: nothing. Locks: none. Queue: any thread.
    var mask: UInt32 { mel_logger_mask(logger.raw) }

    /// Calls `mel_logger_log_text_for_testing`: the C callback with `text` at `level`, as libvlc
    /// would call it but without libvlc.
    /// - Sends: the message to the callback, on the calling thread. Locks: none.
    /// - Queue: any thread.
    func logThroughCallback(level: Int32, _ text: UnsafePointer<CChar>) {
        mel_logger_log_text_for_testing(logger.raw, level, text)
    }
}

/// One message as the C logger lends it to `NativeLogger.Callback`: valid only during the call.
struct NativeLogMessage {
    private let raw: UnsafePointer<mel_log_message_t>

    init(_ raw: UnsafePointer<mel_log_message_t>) { self.raw = raw }

    /// Its level, read without copying anything.
    var level: LogLevel { LogLevel(libvlcLevel: raw.pointee.level) }

    /// A copy of the message, logged on `threadID`.
    func copy(threadID: UInt) -> LogMessage {
        let message = raw.pointee
        return LogMessage(
            level: LogLevel(libvlcLevel: message.level),
            text: message.text.map {
                String(decoding: UnsafeRawBufferPointer(start: $0, count: message.text_length), as: UTF8.self)
            } ?? "",
            module: message.module.map { String(cString: $0) },
            file: message.file.map { String(cString: $0) },
            line: message.line == 0 ? nil : Int(message.line),
            objectType: message.object_type.map { String(cString: $0) } ?? "generic",
            objectHeader: message.object_header.map { String(cString: $0) },
            objectID: UInt(message.object_id), threadID: threadID)
    }
}
