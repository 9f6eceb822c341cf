import MediaEvents

/// Runs at process exit, before the generated media are removed.
enum ProcessExit {
    /// A test process exits right after its last test; libvlc teardowns queued by that test
    /// (a media released while its parse runs) must finish first, or libvlc's threads still
    /// run while the process's static destructors do (seen: a crash in libtag at exit).
    static func beforeCleanUp() {
        VLCLibrary.waitForPendingTeardowns(timeout: 10)
    }
}
