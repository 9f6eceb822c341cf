import Foundation
import MediaEvents

extension EventRecord {
    /// A libvlc log message, in the order received: `"source":"libvlc","event":"LogMessage"`,
    /// then `level`, `module` (when known), `object` (the type of the object that logged it)
    /// and `text`.
    public init(_ message: LogMessage) {
        var fields: [(String, JSONValue)] = [("level", .string(message.level.name))]
        if let module = message.module { fields.append(("module", .string(module))) }
        fields += [("object", .string(message.objectType)), ("text", .string(message.text))]
        self.init(source: "libvlc", name: "LogMessage", fields: fields)
    }
}

extension EventLog {
    /// Writes every libvlc log message of `minimumLevel` or above to this log (whatever the
    /// event filter says: they were asked for by name) until the subscription ends.
    public func printLibvlcLog(of library: VLCLibrary, minimumLevel: LogLevel) -> EventSubscription {
        library.logs.observe(minimumLevel: minimumLevel) { [self] message in
            writeAlways(EventRecord(message))
        }
    }
}

extension PlaybackEnd {
    /// libvlc's own words for why the input ended: the texts of the error messages logged
    /// for it, joined with "; "; `nil` when none could be associated with it.
    public var causeText: String? {
        cause.map { $0.errors.map(\.text).joined(separator: "; ") }
    }
}

extension ArgumentReader {
    /// The value of `option` as a log level: debug, notice, warning or error.
    public mutating func logLevel(for option: String) throws -> LogLevel {
        let value = try value(for: option)
        guard let level = LogLevel.allCases.first(where: { $0.name == value }) else {
            throw UsageError(
                "\(option) must be \(LogLevel.allCases.map(\.name).joined(separator: "|")), not '\(value)'")
        }
        return level
    }
}

/// Says once on standard error that `--audio` plays without sound because libvlc could open
/// no audio output (a headless machine: no sound card, no PulseAudio server).
///
/// What libvlc 3.0.24 logs then, at error level: each output module it tries, under an
/// "audio output" object, says why it failed (`vlcpulse`: `PulseAudio server connection
/// failure: Connection refused`, `alsa`: `cannot open ALSA device "default": No such file or
/// directory`); then the decoder (module `main`, object `decoder`) gives up with `failed to
/// create audio output` and the input plays on, silently. The warning is printed on that
/// last message, with the modules' texts as the cause:
///
///     media-events: no audio output could be opened (PulseAudio server connection failure:
///     Connection refused; cannot open ALSA device "default": No such file or directory);
///     playing without sound
///
/// (one line). A module's failure alone warns of nothing: libvlc goes on to the next module.
public enum AudioOutputWarning {
    /// Watches `library`'s log until the subscription ends; `program` starts the line.
    public static func watch(_ library: VLCLibrary, program: String) -> EventSubscription {
        let state = Guarded((causes: [String](), warned: false))
        return library.logs.observe(minimumLevel: .error) { message in
            let line: String? = state.withLock { state in
                guard !state.warned else { return nil }
                if message.objectType == "audio output", let module = message.module, module != "main" {
                    let text = oneLine(message.text)
                    if !state.causes.contains(text) { state.causes.append(text) }
                    return nil
                }
                guard message.objectType == "decoder", message.text == "failed to create audio output" else {
                    return nil
                }
                state.warned = true
                let cause = state.causes.isEmpty ? message.text : state.causes.joined(separator: "; ")
                return "\(program): no audio output could be opened (\(cause)); playing without sound"
            }
            if let line { printError(line) }
        }
    }

    /// `text` with its line breaks (libvlc has some in its messages) as spaces.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }
}
