import Foundation

/// The entries the daemon plays: the lines of a playlist file, then the arguments.
struct Playlist {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Paths and URLs, in order.
    let entries: [String]

    /// Reads `file` (if any) and appends `arguments`.
    static func load(file: String?, arguments: [String]) throws -> Playlist {
        var entries: [String] = []
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw Failure(description: "\(file): cannot read the playlist")
            }
            let base = URL(fileURLWithPath: file).deletingLastPathComponent()
            for rawLine in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
                let line = rawLine.trimmingCharacters(in: .whitespaces)
                // M3U directives and comments both start with '#'.
                if line.isEmpty || line.hasPrefix("#") { continue }
                if line.contains("://") || line.hasPrefix("/") {
                    entries.append(line)
                } else {
                    entries.append(base.appendingPathComponent(line).path)
                }
            }
        }
        entries += arguments
        return Playlist(entries: entries)
    }
}
