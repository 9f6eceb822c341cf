import Glibc

/// The command line as bytes: `CommandLine.arguments` replaces bytes that are not UTF-8 with
/// U+FFFD, so a file named `bad\xff\xfe.wav` would become `bad%EF%BF%BD%EF%BF%BD.wav`, a file
/// that does not exist.
public enum RawArguments {
    /// The arguments after the program name. One that is not valid UTF-8 (only a path can be:
    /// options and URLs are ASCII) is given as the `file://` URL of its absolute path, each
    /// byte percent-encoded, which libvlc decodes back to the same bytes.
    public static func arguments() -> [String] {
        (1..<Int(CommandLine.argc)).map { index in
            let argument = CommandLine.unsafeArgv[index]!
            let bytes = Array(
                UnsafeBufferPointer(
                    start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self),
                    count: strlen(argument)))
            return String(validating: bytes, as: UTF8.self) ?? fileURL(path: bytes)
        }
    }

    /// `file://` and the absolute form of `path`, percent-encoded byte by byte.
    public static func fileURL(path: [UInt8]) -> String {
        var absolute = path
        if path.first != UInt8(ascii: "/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            if getcwd(&buffer, buffer.count) != nil {
                absolute = Array(buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }) + [UInt8(ascii: "/")] + path
            }
        }
        var url = "file://"
        for byte in absolute {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                url.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                url += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return url
    }
}
