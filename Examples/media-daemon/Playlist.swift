import ExampleSupport
import Foundation
import Glibc

/// The entries the daemon plays: the lines of a playlist file, then the arguments.
///
/// The file is read as text, and refused when it is not: a media file or any binary data
/// given by mistake would otherwise turn into thousands of junk entries (some of them `/`,
/// which libvlc expands to the whole file system), and its bytes would reach the log.
struct Playlist {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Paths and URLs, in order.
    let entries: [String]

    /// A playlist larger than this is refused unread: 10000 entries of 400 bytes.
    static let maximumBytes = 4 << 20

    /// Reads `file` (if any) and appends `arguments`.
    static func load(file: String?, arguments: [String]) throws -> Playlist {
        var entries: [String] = []
        if let file {
            entries = try parse(try read(file), file: file)
        }
        entries += arguments
        guard entries.count <= MediaInput.maximumEntries else {
            throw Failure(description: "more than \(MediaInput.maximumEntries) entries: not played")
        }
        return Playlist(entries: entries)
    }

    /// The entries of the playlist text `bytes` read from `file`.
    static func parse(_ bytes: [UInt8], file: String) throws -> [String] {
        func refuse(_ reason: String) -> Failure { Failure(description: "\(file): not a text playlist: \(reason)") }
        if let format = mediaFormat(bytes) {
            throw refuse("it looks like \(format) media (give media files as MEDIA arguments)")
        }
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        if let nul = body.firstIndex(of: 0) { throw refuse("binary data (a NUL byte at byte \(nul))") }
        guard let text = String(validating: body, as: UTF8.self) else { throw refuse("not UTF-8 text") }
        let base = URL(fileURLWithPath: file).deletingLastPathComponent()
        var entries: [String] = []
        for (number, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated()
        {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if let control = line.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
                throw refuse(
                    "control character U+\(String(control.value, radix: 16, uppercase: true)) on line \(number + 1)")
            }
            // M3U directives and comments both start with '#'.
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard entries.count < MediaInput.maximumEntries else {
                throw Failure(description: "\(file): more than \(MediaInput.maximumEntries) entries: not played")
            }
            if line.contains("://") || line.hasPrefix("/") {
                entries.append(line)
            } else {
                entries.append(base.appendingPathComponent(line).path)
            }
        }
        return entries
    }

    /// The kind of media `bytes` starts like, if any.
    static func mediaFormat(_ bytes: [UInt8]) -> String? {
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let magic = Array(text.utf8)
            return bytes.count >= offset + magic.count && Array(bytes[offset..<(offset + magic.count)]) == magic
        }
        if starts("RIFF") { return "RIFF (WAV, AVI)" }
        if starts("OggS") { return "Ogg" }
        if starts("fLaC") { return "FLAC" }
        if starts("ID3") || bytes.starts(with: [0xFF, 0xFB]) || bytes.starts(with: [0xFF, 0xF3]) { return "MP3" }
        if starts("ftyp", at: 4) { return "MP4" }
        if bytes.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return "Matroska/WebM" }
        return nil
    }

    /// At most `maximumBytes` of `file`; a local path, or a `file://` URL (which is how a
    /// path that is not UTF-8 reaches the program, see `RawArguments`).
    private static func read(_ file: String) throws -> [UInt8] {
        let path = MediaInput.localPathBytes(file)
        let fd = path.withUnsafeBufferPointer { open($0.baseAddress!, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            throw Failure(description: "\(file): cannot read the playlist (\(String(cString: strerror(errno))))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= maximumBytes {
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw Failure(description: "\(file): cannot read the playlist (\(String(cString: strerror(errno))))")
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
        }
        throw Failure(description: "\(file): not a text playlist: larger than \(maximumBytes >> 20) MiB")
    }
}
