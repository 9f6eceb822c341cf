/// Runs at process exit, before the generated media are removed. The example tests run
/// libvlc in child processes only: nothing to wait for here.
enum ProcessExit {
    static func register() {}
    static func beforeCleanUp() {}
}
