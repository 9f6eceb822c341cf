// What a pipe holds, for tests that wait on a reader at the other end of one: libvlc's
// access reading a FIFO, or a test's own reader falling behind a program's output.

import Glibc

/// How many bytes wait unread in the pipe or FIFO `fd` is open on (-1 if that cannot be told).
public func unreadBytes(_ fd: Int32) -> Int {
    var count: Int32 = 0
    return ioctl(fd, UInt(FIONREAD), &count) == 0 ? Int(count) : -1
}
