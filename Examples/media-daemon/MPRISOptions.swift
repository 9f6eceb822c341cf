import ExampleSupport

/// `--mpris`, `--mpris-name` and `--mpris-bus`: where media-daemon appears on D-Bus.
struct MPRISOptions: Sendable {
    /// The name after `org.mpris.MediaPlayer2.` when none is given: `playerctl -p media_daemon`.
    static let defaultName = "media_daemon"

    /// The last part of the bus name: `org.mpris.MediaPlayer2.<name>`.
    var name = defaultName
    var bus = DBusBusKind.session

    /// The well-known name to request.
    var busName: String { "org.mpris.MediaPlayer2.\(name)" }

    /// The name for a further instance when `busName` is taken, as the specification suggests:
    /// a dot and an identifier that does not begin with a digit.
    func instanceBusName(pid: Int32) -> String { "\(busName).instance\(pid)" }

    /// Checks `name` as `--mpris-name` takes it: one or more elements separated by dots, each of
    /// `[A-Za-z0-9_-]` not beginning with a digit (D-Bus's rule for bus names), at most 200
    /// bytes (a bus name has at most 255, with the prefix and an instance suffix).
    static func validated(name: String) throws -> String {
        let elements = name.split(separator: ".", omittingEmptySubsequences: false)
        let valid =
            !name.isEmpty && name.utf8.count <= 200
            && elements.allSatisfy { element in
                guard let first = element.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
                return element.unicodeScalars.allSatisfy { scalar in
                    scalar.isASCII
                        && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
                            || scalar == "-")
                }
            }
        guard valid else {
            throw UsageError(
                "--mpris-name needs dot-separated elements of letters, digits, '_' or '-', none starting"
                    + " with a digit (at most 200 bytes), not '\(name)'")
        }
        return name
    }

    static func bus(_ text: String) throws -> DBusBusKind {
        guard let bus = DBusBusKind(rawValue: text) else {
            throw UsageError("--mpris-bus takes session or system, not '\(text)'")
        }
        return bus
    }
}
