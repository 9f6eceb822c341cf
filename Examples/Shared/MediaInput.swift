import Foundation
import MediaEvents

/// Turns a command-line or playlist entry into a media.
public enum MediaInput {
    /// The most media a playlist (or a run of `log` through playlists and directories) may
    /// hold: a bound on what a wrong file given as a playlist can make the programs do.
    public static let maximumEntries = 10_000

    /// A URL when `text` has a scheme (`http://…`, `file:///…`), otherwise a local path.
    /// `nil` when it looks like a URL but is not a valid one.
    public static func media(_ text: String, library: VLCLibrary,
                             configuration: (any EventsConfiguring)? = nil) -> VLCMedia? {
        if text.contains("://") {
            guard let url = URL(string: text) else { return nil }
            return VLCMedia(url: url, library: library, configuration: configuration)
        }
        return VLCMedia(path: text, library: library, configuration: configuration)
    }

    /// libvlc's arguments: headless, with the dummy audio output unless `audio` is set.
    public static func libraryArguments(audio: Bool) -> [String] {
        audio ? VLCLibrary.headlessArguments.filter { !$0.hasPrefix("--aout") } : VLCLibrary.headlessArguments
    }
}
