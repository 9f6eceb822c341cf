import MediaEvents

/// What `--version` prints after the program's name.
public enum ProgramVersion {
    /// The version of the MediaEvents package the programs are part of. The package has no
    /// release yet and the library exposes no version of its own: kept here until it does.
    public static let mediaEvents = "0.1.0-dev"

    /// "(MediaEvents 0.1.0-dev, libvlc 3.0.24 Vetinari)".
    public static var text: String { "(MediaEvents \(mediaEvents), libvlc \(VLCLibrary.version))" }
}
