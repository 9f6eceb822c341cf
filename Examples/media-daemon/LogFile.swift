import ExampleSupport
import Glibc

/// The `--log` file: appended to, and created with `--log-mode` (0600 unless told otherwise).
///
/// The mode is set with `fchmod` on the file just created, so that neither the umask nor a
/// systemd `UMask=` changes it; an existing file keeps its own mode (its owner chose it).
enum LogFile {
    /// Opens `path` for appending (and reading, when allowed: the last line's seq is read back
    /// to continue the numbering); returns the descriptor, or -1 with `errno` set.
    static func open(_ path: String, mode: mode_t, readable: Bool = true) -> Int32 {
        let bytes = MediaInput.localPathBytes(path)
        let access = readable ? O_RDWR : O_WRONLY
        // O_EXCL first: only a file made here gets the mode.
        var fd = Glibc.open(bytes, access | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, mode)
        if fd >= 0 {
            if fchmod(fd, mode) != 0 {
                let code = errno
                close(fd)
                errno = code
                return -1
            }
            return fd
        }
        guard errno == EEXIST else { return -1 }
        fd = Glibc.open(bytes, access | O_APPEND | O_CLOEXEC)
        if fd < 0 && errno == EACCES && readable {
            fd = Glibc.open(bytes, O_WRONLY | O_APPEND | O_CLOEXEC)
        }
        return fd
    }
}
