import Dispatch
import Glibc

/// Writes events one per line, as text or JSON Lines, in the order `write` is called.
///
/// One lock serializes numbering and writing, so a line's `seq` is its position in the output
/// even when events arrive on several libvlc threads or queues. Each line is one `write(2)`:
/// nothing is buffered, so the log is complete whenever the process exits.
public final class EventLog: Sendable {
    /// The output format.
    public enum Format: Sendable {
        /// `   0.012s  player  MediaPlayerPlaying` lines.
        case text
        /// One JSON object per line.
        case json
    }

    private struct State {
        var fd: Int32
        var outputName: String
        /// The `seq` of the last line: the previous run's last line when appending to its log.
        var seq: Int
        var written = 0
        var counts: [String: Int] = [:]
        var closed = false
        var tap: (@Sendable (EventRecord, String) -> Void)?
    }

    /// The output format.
    public let format: Format
    /// Which events are written.
    public let filter: EventFilter
    private let start = DispatchTime.now()
    private let wallClock: Bool
    private let state: Guarded<State>

    /// A log writing to `fd` (standard output by default), named `outputName` in the message
    /// when a write fails, which ends the process (see `Output`). The log does not close `fd`.
    ///
    /// - Parameters:
    ///   - lastSeq: the `seq` the first line follows (the last line of a log appended to).
    ///   - wallClock: JSON lines get a `ts` field, the UTC time they were written.
    public init(
        format: Format, filter: EventFilter = EventFilter(), fd: Int32 = STDOUT_FILENO,
        outputName: String = "standard output", lastSeq: Int = 0, wallClock: Bool = false
    ) {
        self.format = format
        self.filter = filter
        self.wallClock = wallClock
        state = Guarded(State(fd: fd, outputName: outputName, seq: lastSeq))
    }

    /// The `seq` of the last complete JSON line of the log file open as `fd`, 0 when there is
    /// none: a run appending to a log continues its numbering.
    public static func lastSeq(inLogFile fd: Int32) -> Int {
        let size = lseek(fd, 0, SEEK_END)
        guard size > 0 else { return 0 }
        let length = Int(min(size, 65536))
        var bytes = [UInt8](repeating: 0, count: length)
        guard pread(fd, &bytes, length, size - off_t(length)) == length else { return 0 }
        let lines = bytes.split(separator: UInt8(ascii: "\n"))
        let prefix = Array(#"{"seq":"#.utf8)
        for line in lines.reversed() where line.starts(with: prefix) {
            let digits = line.dropFirst(prefix.count).prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            if let seq = Int(String(decoding: digits, as: UTF8.self)) { return seq }
        }
        return 0
    }

    /// Seconds since the log was created.
    public var elapsed: Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    /// Writes `record` if the filter allows it, with `context` fields (such as the item
    /// number) between the event name and its payload. Returns whether it was written.
    @discardableResult
    public func write(_ record: EventRecord, context: [(String, JSONValue)] = []) -> Bool {
        writeNumbered(record, context: context) != nil
    }

    /// Writes `record` as `write` does; returns the line's `seq`, `nil` when it was not
    /// written (filtered out, or the log is closed).
    @discardableResult
    public func writeNumbered(_ record: EventRecord, context: [(String, JSONValue)] = []) -> Int? {
        guard filter.allows(record) else { return nil }
        return append(record, context: context, closing: false)
    }

    /// Writes `record` whatever the filter says (a program's own lines); returns its `seq`,
    /// `nil` when the log is closed.
    @discardableResult
    public func writeAlways(_ record: EventRecord) -> Int? {
        append(record, context: [], closing: false)
    }

    /// Writes `record` as the last line: later writes are dropped, so a log that ends with it
    /// is known to be complete. Returns `false` if the log was already closed.
    @discardableResult
    public func close(with record: EventRecord) -> Bool {
        append(record, context: [], closing: true) != nil
    }

    /// Writes the line; returns its `seq`, `nil` when the log is closed.
    @discardableResult
    private func append(_ record: EventRecord, context: [(String, JSONValue)], closing: Bool) -> Int? {
        state.withLock { state in
            if state.closed { return nil }
            state.closed = closing
            state.seq += 1
            state.written += 1
            state.counts[record.name, default: 0] += 1
            let t = elapsed
            let line: String
            switch format {
            case .json:
                let head: [(String, JSONValue)] =
                    [
                        ("seq", .int(Int64(state.seq))), ("t", .double((t * 1e6).rounded() / 1e6)),
                    ] + (wallClock ? [("ts", .string(TextFormat.utcTimestamp()))] : []) + [
                        ("source", .string(record.source)), ("event", .string(record.name)),
                    ]
                line = JSON.line(head + context + record.fields)
            case .text:
                let time = String(t, decimals: 3)
                let source = record.source.padding(toLength: 11, withPad: " ", startingAt: 0)
                let extra = (context.isEmpty ? "" : " " + EventRecord(source: "", name: "", fields: context).fieldText)
                let payload = record.fields.isEmpty ? "" : " " + record.fieldText
                line =
                    "\(String(repeating: " ", count: max(0, 8 - time.count)))\(time)s  \(source) \(record.name)\(extra)\(payload)"
            }
            // Under the lock, so that a failed write ends the process before a later line
            // could be written after a missing one.
            Output.write(line + "\n", to: state.fd, name: state.outputName)
            // Under the lock too: the tap sees the lines in the log's order.
            state.tap?(record, line)
            return state.seq
        }
    }

    /// Calls `tap` with every line written from now on (the record and its text without the
    /// newline), in the log's order, under the log's lock: it must return at once (queue the
    /// line, never wait) and must not write to this log.
    public func setTap(_ tap: (@Sendable (EventRecord, String) -> Void)?) {
        state.withLock { $0.tap = tap }
    }

    /// How many times each event name was written so far.
    public var counts: [String: Int] { state.withLock { $0.counts } }

    /// The number of lines written so far by this process.
    public var lineCount: Int { state.withLock { $0.written } }

    /// Points the log at another file descriptor (after reopening a log file); returns the
    /// previous one, which the caller closes.
    public func replaceOutput(with fd: Int32) -> Int32 {
        state.withLock { state in
            defer { state.fd = fd }
            return state.fd
        }
    }

    /// Waits until everything written has reached the file (no-op for a pipe or terminal);
    /// a failure ends the process like a failed write.
    public func sync() {
        state.withLock { state in Output.sync(state.fd, name: state.outputName) }
    }
}

extension String {
    /// `value` with exactly `decimals` digits after the point (no Foundation formatting).
    public init(_ value: Double, decimals: Int) {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((value * scale).rounded())
        let whole = scaled / Int64(scale)
        let fraction = String(abs(scaled % Int64(scale)))
        self = "\(whole).\(String(repeating: "0", count: decimals - fraction.count))\(fraction)"
    }
}

/// Writes one line to standard error.
public func printError(_ message: String) {
    Output.writeError(message)
}

/// Writes `text` and a newline to standard output; a failed write ends the process (see
/// `Output`). The programs use it instead of `print`, whose buffered errors are lost.
public func printOutput(_ text: String) {
    Output.write(text + "\n")
}
