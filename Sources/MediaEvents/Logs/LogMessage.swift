/// How severe a libvlc log message is (`libvlc_log_level`), from `debug` to `error`.
public enum LogLevel: Int, VLCEventKind, Comparable {
    /// Details for debugging libvlc (most messages).
    case debug
    /// Important information (`LIBVLC_NOTICE`).
    case notice
    /// A potential error.
    case warning
    /// An error: this is where libvlc says why an input failed.
    case error

    /// libvlc's own value of the level (`LIBVLC_DEBUG` 0, `LIBVLC_NOTICE` 2, `LIBVLC_WARNING` 3,
    /// `LIBVLC_ERROR` 4).
    public var libvlcLevel: Int32 {
        switch self {
        case .debug: 0
        case .notice: 2
        case .warning: 3
        case .error: 4
        }
    }

    /// The level of a libvlc level value; levels libvlc may add later count as `debug`.
    init(libvlcLevel: Int32) {
        switch libvlcLevel {
        case 4: self = .error
        case 3: self = .warning
        case 2: self = .notice
        default: self = .debug
        }
    }

    /// Log levels are no libvlc event type: this is `libvlcLevel` moved out of the range of
    /// `libvlc_event_e` (0x1000 + level), so it never names an event.
    public var nativeType: Int32 { 0x1000 + libvlcLevel }
    /// The level's position among the levels (0 to 3).
    public var index: Int { rawValue }

    /// `debug` and `notice` are the frequent, droppable levels: an `EventStream` with the
    /// default buffering keeps only the latest pending message of each (the others count as
    /// `coalesced` in its statistics) and every `warning` and `error`.
    public var isProgress: Bool { self < .warning }

    /// The level's name: "debug", "notice", "warning" or "error".
    public var name: String {
        switch self {
        case .debug: "debug"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }

    /// The level's name, as `name`.
    public var description: String { name }

    /// Whether `lhs` is less severe than `rhs`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// This level and the more severe ones.
    var andAbove: [LogLevel] { LogLevel.allCases.filter { $0 >= self } }
}

/// One message of libvlc's log, formatted and copied inside libvlc's log callback.
public struct LogMessage: VLCEvent, Hashable {
    /// How severe it is.
    public let level: LogLevel
    /// The formatted text, for example `cannot open file /x (No such file or directory)`.
    public let text: String
    /// The libvlc module (plugin) that logged it, for example `filesystem`; `nil` when unknown.
    public let module: String?
    /// libvlc's source file, for example `access/file.c`; `nil` when unknown.
    public let file: String?
    /// The line in `file`; `nil` when unknown.
    public let line: Int?
    /// The type of the libvlc object that logged it (`libvlc_log_get_object`'s name), for
    /// example `input`, `stream`, `demux`; `generic` when unknown.
    public let objectType: String
    /// The header of the object or of its nearest ancestor that has one (libvlc uses it for
    /// VLM inputs); usually `nil`.
    public let objectHeader: String?
    /// The address of the libvlc object that logged it: unique only while that object lives
    /// (libvlc reuses addresses), 0 when the message belongs to no object.
    public let objectID: UInt
    /// The thread that logged it (`pthread_self()` inside the callback). libvlc runs one
    /// thread per input, which is what ties messages to a player's failure
    /// (`FailureCauseRecorder`); thread identities are reused once a thread has ended.
    public let threadID: UInt

    /// A message built by hand (for tests and for programs that show messages).
    public init(
        level: LogLevel, text: String, module: String? = nil, file: String? = nil, line: Int? = nil,
        objectType: String = "generic", objectHeader: String? = nil, objectID: UInt = 0, threadID: UInt = 0
    ) {
        self.level = level
        self.text = text
        self.module = module
        self.file = file
        self.line = line
        self.objectType = objectType
        self.objectHeader = objectHeader
        self.objectID = objectID
        self.threadID = threadID
    }

    /// The message's level (its kind, for streams and subscriptions).
    public var kind: LogLevel { level }

    /// The level's name ("error", …).
    public var name: String { level.name }

    /// `level module (objectType): text`, for example
    /// `error filesystem (stream): cannot open file /x (No such file or directory)`.
    public var description: String {
        "\(level.name) \(module ?? "-") (\(objectType)): \(text)"
    }
}
