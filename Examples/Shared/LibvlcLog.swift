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
            throw UsageError("\(option) must be \(LogLevel.allCases.map(\.name).joined(separator: "|")), not '\(value)'")
        }
        return level
    }
}
