/// An error reported by MediaEvents or libvlc.
public enum VLCError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `libvlc_new` failed: usually an unknown or malformed argument, or missing plugins.
    case libraryInitializationFailed(arguments: [String], reason: String)
    /// libvlc could not create the object (media, player, list …).
    case creationFailed(what: String, reason: String)
    /// The operation needs something the object does not have (for example no media).
    case invalidState(String)
    /// Parsing a media failed, or did not finish before the timeout.
    case parseFailed(mrl: String, status: String)
    /// libvlc refused an operation (for example a VLM call on a media name it does not know).
    case operationFailed(what: String, reason: String)
    /// Waiting for an event timed out.
    case timedOut(waitingFor: String, seconds: Double)
    /// The object was torn down while waiting for one of its events.
    case sourceEnded(waitingFor: String)

    /// A sentence saying what went wrong, with libvlc's reason for the errors that carry one.
    public var description: String {
        switch self {
        case let .libraryInitializationFailed(arguments, reason):
            return "libvlc could not start with arguments \(arguments): \(reason)"
        case let .creationFailed(what, reason):
            return "libvlc could not create \(what): \(reason)"
        case let .invalidState(message):
            return message
        case let .parseFailed(mrl, status):
            return "parsing \(mrl) ended with status \(status)"
        case let .operationFailed(what, reason):
            return "libvlc could not \(what): \(reason)"
        case let .timedOut(what, seconds):
            return "\(what) did not happen within \(seconds) s"
        case let .sourceEnded(what):
            return "the object was torn down while waiting for \(what)"
        }
    }

    /// libvlc's last error message on this thread, or a fallback.
    static func lastMessage(or fallback: String) -> String {
        NativeLibrary.takeLastError() ?? fallback
    }
}
