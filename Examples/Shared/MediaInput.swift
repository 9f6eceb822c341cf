import Foundation
import MediaEvents

/// Turns a command-line or playlist entry into a media.
public enum MediaInput {
    /// The most media a playlist (or a run of `log` through playlists and directories) may
    /// hold: a bound on what a wrong file given as a playlist can make the programs do.
    public static let maximumEntries = 10_000

    /// A URL when `text` has a scheme (`http://…`, `file:///…`), otherwise a local path.
    /// `nil` when it looks like a URL but is not a valid one.
    public static func media(
        _ text: String, library: VLCLibrary,
        configuration: (any EventsConfiguring)? = nil
    ) -> VLCMedia? {
        if text.contains("://") {
            guard let url = URL(string: text) else { return nil }
            return VLCMedia(url: url, library: library, configuration: configuration)
        }
        return VLCMedia(path: text, library: library, configuration: configuration)
    }

    /// The bytes of the local file `text` names, NUL-terminated for `open(2)`: a path, or a
    /// `file://` URL with its percent escapes decoded (how `RawArguments` passes a path that
    /// is not UTF-8).
    public static func localPathBytes(_ text: String) -> [CChar] {
        var bytes = Array(text.utf8)
        if text.hasPrefix("file://") {
            bytes = Array(bytes.dropFirst("file://".count).drop { $0 != UInt8(ascii: "/") })
            var decoded: [UInt8] = []
            var index = 0
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                    let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
                {
                    decoded.append(value)
                    index += 3
                } else {
                    decoded.append(bytes[index])
                    index += 1
                }
            }
            bytes = decoded
        }
        return bytes.map { CChar(bitPattern: $0) } + [0]
    }

    /// libvlc's arguments: headless, with the dummy audio output unless `audio` is set.
    public static func libraryArguments(audio: Bool) -> [String] {
        audio ? VLCLibrary.headlessArguments.filter { !$0.hasPrefix("--aout") } : VLCLibrary.headlessArguments
    }
}
