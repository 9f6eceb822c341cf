import Glibc

/// Where the programs' output goes, and what they do when it cannot be written.
///
/// libvlc blocks SIGPIPE in its threads, so a write to a closed pipe from an event handler
/// only fails with EPIPE; ignored, the program would play on to the end of the media. Every
/// write of the programs goes through `Output.write`, which ends the process at the first
/// failed write:
/// - EPIPE (the reader went away, `… | head -3`): silently, status 141, what a shell reports
///   for a tool killed by SIGPIPE (128 + 13), so pipelines read the same as with `cat`;
/// - any other error (ENOSPC on a full disk, EIO): one line on stderr naming the output and
///   the cause, status 1.
///
/// `_exit`, not `exit`: the write may fail on a libvlc thread while playback runs, and
/// `exit` would run static destructors under libvlc's running threads. Nothing is lost: no
/// output is buffered in the process (each line is one `write(2)`).
public enum Output {
    /// The exit status after EPIPE: 128 + SIGPIPE, as a shell reports a tool killed by SIGPIPE.
    public static let brokenPipeStatus: Int32 = 141

    /// Makes a write to a closed pipe fail with EPIPE on every thread (the main thread
    /// included), instead of killing the process on some threads and not on others.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// The program name in messages: the last component of the path it was started by.
    public static let programName: String = {
        let path = CommandLine.arguments.first ?? ""
        return path.split(separator: "/").last.map(String.init) ?? path
    }()

    /// Writes `text` to `fd` completely; `name` (such as "standard output" or the log file's
    /// path) names the output in the message when the write fails, which ends the process.
    public static func write(_ text: String, to fd: Int32 = STDOUT_FILENO, name: String = "standard output") {
        if let error = writeAll(fd, text) {
            fail(errno: error, name: name)
        }
    }

    /// Writes one line to standard error. A failure there has nowhere to be reported: the
    /// status says it (141 or 1).
    public static func writeError(_ line: String) {
        if let error = writeAll(STDERR_FILENO, line + "\n") {
            _exit(error == EPIPE ? brokenPipeStatus : 1)
        }
    }

    /// Ends the process for a failed write with `errno` `error` on the output `name`.
    public static func fail(errno error: Int32, name: String) -> Never {
        if error == EPIPE { _exit(brokenPipeStatus) }
        _ = writeAll(STDERR_FILENO, "\(programName): cannot write to \(name): \(String(cString: strerror(error)))\n")
        _exit(1)
    }

    /// Makes sure what was written to `fd` reached its file: `fsync` reports a full disk that
    /// the writes themselves did not (NFS, delayed allocation). A pipe or terminal cannot be
    /// synced (EINVAL): nothing to report there.
    public static func sync(_ fd: Int32, name: String) {
        if fsync(fd) != 0, errno != EINVAL, errno != EROFS {
            fail(errno: errno, name: name)
        }
    }

    /// Writes all of `text`; the errno of the first failed write, `nil` when all was written.
    static func writeAll(_ fd: Int32, _ text: String) -> Int32? {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }
}
