// Native/ — the one layer through which MediaEvents calls libvlc: a thin type per libvlc object
// (NativeLibrary, NativeMedia, NativeMediaList, NativeMediaPlayer, NativeMediaListPlayer, the
// discoverers, NativeVLM, NativeLogger, NativeAudioOutput), the event managers' listener tables
// (NativeEventTable), and the conversion of each `libvlc_event_t` into its typed event
// (NativeEvents). Each member names the C function it calls, the send sites of
// <doc:SendSites> it triggers, the locks it takes there (its G row) and the queue it must run on.
// Nothing here decides anything: when to call, and what to do around a call, is the business of
// Objects/ and Workarounds/. Scripts/check-native-layer.sh fails on a libvlc call anywhere else.

import CLibVLC
import Glibc
import Synchronization

/// A libvlc object as MediaEvents holds it: its pointer, passed between threads. libvlc's own
/// objects are thread-safe; which thread may make which call is on each call.
protocol NativeObject: Sendable {
    /// The object at `pointer`, which the caller owns a reference of or borrows.
    init(_ pointer: OpaquePointer)
    /// The `libvlc_…_t` pointer.
    var pointer: OpaquePointer { get }
}

extension NativeObject {
    /// The pointer's bits: what a delivery frame and a libvlc event (`p_obj`) call the object.
    var address: UInt { UInt(bitPattern: UnsafeRawPointer(pointer)) }
}

/// The native object behind a wrapper: known when the wrapper is made, or created later by the
/// first block of its control queue (a player made inside a handler, where creating it could
/// wait for a libvlc callback that waits for the handler). Set once, before any other block of
/// that queue runs.
final class NativeSlot<Native: NativeObject>: Sendable {
    private let bits: Atomic<UInt>

    init(_ native: Native?) {
        bits = Atomic(native?.address ?? 0)
    }

    /// The object, `nil` until it is created.
    var current: Native? {
        UnsafeRawPointer(bitPattern: bits.load(ordering: .acquiring)).map { Native(OpaquePointer($0)) }
    }

    /// On the control queue, once: the object is created.
    func set(_ native: Native) {
        bits.store(native.address, ordering: .releasing)
    }
}

/// A C listener of a libvlc event manager (`libvlc_callback_t`): what each event source hands
/// `NativeEventTable`. Each is a one-line closure that calls `NativeEvents.forward`.
typealias NativeCallback = libvlc_callback_t

/// One event as libvlc lends it to a listener: valid only until the callback returns.
struct NativeEvent {
    fileprivate(set) var raw: UnsafePointer<libvlc_event_t>

    init(_ raw: UnsafePointer<libvlc_event_t>) { self.raw = raw }

    /// `libvlc_event_t.type`.
    var type: Int32 { raw.pointee.type }

    /// The object that sent it (`p_obj`): the address delivery frames record.
    var sender: UInt { UInt(bitPattern: raw.pointee.p_obj) }
}

/// Calls `body` with `strings` as a C array of C strings (valid only during the call).
func withCStringArray<Result>(
    _ strings: [String], _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?) -> Result
) -> Result {
    let copies = strings.map { UnsafePointer(strdup($0)) }
    defer { copies.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
    return copies.withUnsafeBufferPointer { body(Int32($0.count), $0.baseAddress) }
}

/// A `malloc`ed C string libvlc hands over, as a Swift string; freed.
func takeCString(_ text: UnsafeMutablePointer<CChar>?) -> String? {
    guard let text else { return nil }
    defer { free(text) }
    return String(cString: text)
}

/// A C pointer that may cross threads (the C logger, a pointer a test hands around); libvlc
/// objects are thread-safe, MediaEvents only passes the pointer along.
struct NativePointer: @unchecked Sendable {
    // @unchecked: an immutable pointer; what it points to guards itself.
    let raw: OpaquePointer
}
