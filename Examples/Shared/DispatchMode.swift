import Dispatch
import MediaEvents

/// The `--dispatch` option: where event handlers run.
public enum DispatchMode: String, Sendable, CaseIterable {
    /// On libvlc's own thread (`EventsDefaultConfiguration`).
    case inline
    /// Queued on a private serial queue; libvlc's thread goes on at once.
    case queueAsync = "queue-async"
    /// On a private serial queue; libvlc's thread waits for the handler.
    case queueSync = "queue-sync"

    /// The configuration for this mode. Every object of a run shares `queue`, so that the
    /// events of a player and of its media keep their relative order in async mode too.
    public func configuration(queue: DispatchQueue) -> any EventsConfiguring {
        switch self {
        case .inline: EventsDefaultConfiguration()
        case .queueAsync: EventsQueueConfiguration(queue: queue, isAsync: true)
        case .queueSync: EventsQueueConfiguration(queue: queue, isAsync: false)
        }
    }

    /// The accepted values, for usage messages.
    public static var choices: String { allCases.map(\.rawValue).joined(separator: "|") }
}

/// A command-line mistake: the programs print it with their usage and exit 2.
public struct UsageError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Reads command-line arguments one at a time, with the value of an option either next
/// (`--limit 5`) or attached (`--limit=5`).
public struct ArgumentReader {
    private var arguments: [String]
    private var pendingValue: String?
    private var onlyPositionals = false

    public init(_ arguments: [String]) { self.arguments = arguments }

    /// The next argument; for `--name=value` returns `--name` and keeps `value` for `value(for:)`.
    public mutating func next() -> String? {
        guard !arguments.isEmpty else { return nil }
        let argument = arguments.removeFirst()
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            pendingValue = String(argument[argument.index(after: equals)...])
            return String(argument[..<equals])
        }
        pendingValue = nil
        return argument
    }

    /// The next option, handing every positional argument before it (a lone `-`, and all
    /// arguments after `--`) to `positional`; `nil` at the end.
    public mutating func nextOption(positional: (String) -> Void) -> String? {
        while let argument = next() {
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positional(argument)
            } else if argument == "--" {
                onlyPositionals = true
            } else {
                return argument
            }
        }
        return nil
    }

    /// The value of `option`.
    public mutating func value(for option: String) throws -> String {
        if let value = pendingValue {
            pendingValue = nil
            return value
        }
        guard !arguments.isEmpty else { throw UsageError("\(option) needs a value") }
        return arguments.removeFirst()
    }

    /// The value of `option` as a dispatch mode.
    public mutating func dispatchMode(for option: String) throws -> DispatchMode {
        let value = try value(for: option)
        guard let mode = DispatchMode(rawValue: value) else {
            throw UsageError("\(option) must be \(DispatchMode.choices), not '\(value)'")
        }
        return mode
    }

    /// The value of `option` as a positive number.
    public mutating func number(for option: String) throws -> Double {
        let text = try value(for: option)
        guard let number = Double(text), number > 0, number.isFinite else {
            throw UsageError("\(option) needs a positive number, not '\(text)'")
        }
        return number
    }

    /// The value of `option` as a list of event names (comma-separated, short forms allowed).
    public mutating func eventNames(for option: String) throws -> Set<String> {
        var names: Set<String> = []
        for token in try value(for: option).split(separator: ",") {
            let resolved = EventCatalog.resolve(String(token))
            guard !resolved.isEmpty else {
                throw UsageError("\(option): unknown event '\(token)' (see `media-events events`)")
            }
            names.formUnion(resolved)
        }
        // `--only ""` would otherwise keep every event: the opposite of what it says.
        guard !names.isEmpty else { throw UsageError("\(option) needs at least one event name") }
        return names
    }

    /// Whether `value(for:)` would use an attached `=value` the option does not take.
    public var hasAttachedValue: Bool { pendingValue != nil }
}
