import Glibc

/// libvlccore's interruption of the calling thread (`vlc_interrupt_register` and
/// `vlc_interrupt_unregister`, what libvlc's own network reads use), looked up at run time: no
/// header of libvlc declares them.
enum NativeInterrupt {
    /// Called on the thread that kills the interrupt context, with the data registered.
    typealias Callback = @convention(c) (UnsafeMutableRawPointer?) -> Void
    private typealias Register = @convention(c) (Callback, UnsafeMutableRawPointer?) -> Void
    private typealias Unregister = @convention(c) () -> Int32

    private static let functions: (register: Register, unregister: Unregister)? = {
        let everywhere = UnsafeMutableRawPointer(bitPattern: 0)
        guard let register = dlsym(everywhere, "vlc_interrupt_register"),
            let unregister = dlsym(everywhere, "vlc_interrupt_unregister")
        else { return nil }
        return (unsafeBitCast(register, to: Register.self), unsafeBitCast(unregister, to: Unregister.self))
    }()

    /// Calls `vlc_interrupt_register` on the calling thread's interrupt context; `false` when
    /// the function was not found.
    /// - Sends: nothing. Locks: the context's lock, briefly.
    /// - Queue: the libvlc thread that is about to wait (a stream's read or seek).
    static func register(_ callback: Callback, _ data: UnsafeMutableRawPointer) -> Bool {
        guard let functions else { return false }
        functions.register(callback, data)
        return true
    }

    /// Calls `vlc_interrupt_unregister`; waits for a running callback.
    /// - Sends: nothing. Locks: the context's lock.
    /// - Queue: the thread that registered.
    static func unregister() {
        _ = functions?.unregister()
    }
}
