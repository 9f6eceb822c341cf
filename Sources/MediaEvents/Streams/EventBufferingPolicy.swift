/// How an `EventStream` buffers the events its consumer has not taken yet.
///
/// libvlc sends events from its own threads and must never wait for a consumer, so a stream
/// cannot slow the source down; it can only decide what to keep. An event is buffered only
/// while no consumer is waiting in `next()`: a waiting consumer gets it directly.
public struct EventBufferingPolicy: Sendable, Hashable, CustomStringConvertible {
    enum Limit: Sendable, Hashable {
        case unbounded
        /// When full, the oldest pending event is dropped to make room.
        case newest(Int)
        /// When full, the arriving event is dropped.
        case oldest(Int)
    }

    /// Whether a new value of a progress kind replaces the pending one of the same kind.
    let coalescesProgress: Bool
    let limit: Limit

    /// Lossless for state events, coalescing for progress events (the default).
    ///
    /// Every event whose kind is not a progress kind (`VLCEventKind.isProgress`: for a player
    /// `TimeChanged`, `PositionChanged`, `Buffering`, `AudioVolume`) is kept. Of each progress
    /// kind at most one value is pending: a new value removes the pending one and is queued
    /// behind everything that arrived before it, so the stream stays in libvlc's order and
    /// its memory grows only with state events, which libvlc sends a few at a time.
    public static var `default`: EventBufferingPolicy {
        EventBufferingPolicy(coalescesProgress: true, limit: .unbounded)
    }

    /// Keeps every event. Memory grows for as long as the consumer falls behind.
    public static var unbounded: EventBufferingPolicy {
        EventBufferingPolicy(coalescesProgress: false, limit: .unbounded)
    }

    /// Keeps at most `count` pending events of any kind; when full, the oldest pending event
    /// is dropped to make room for the new one.
    public static func keepNewest(_ count: Int) -> EventBufferingPolicy {
        precondition(count >= 0, "keepNewest needs a count of 0 or more, not \(count)")
        return EventBufferingPolicy(coalescesProgress: false, limit: .newest(count))
    }

    /// Keeps at most `count` pending events of any kind; when full, new events are dropped
    /// until the consumer takes one.
    public static func keepOldest(_ count: Int) -> EventBufferingPolicy {
        precondition(count >= 0, "keepOldest needs a count of 0 or more, not \(count)")
        return EventBufferingPolicy(coalescesProgress: false, limit: .oldest(count))
    }

    /// How the policy was made: `default`, `unbounded`, `keepNewest(8)`, `keepOldest(8)` …,
    /// with `+coalescing` when a limited policy also coalesces progress.
    public var description: String {
        switch (coalescesProgress, limit) {
        case (true, .unbounded): "default"
        case (false, .unbounded): "unbounded"
        case (let coalesces, .newest(let count)): "keepNewest(\(count))" + (coalesces ? "+coalescing" : "")
        case (let coalesces, .oldest(let count)): "keepOldest(\(count))" + (coalesces ? "+coalescing" : "")
        }
    }
}

/// What an `EventStream` did with the events it received; read it at any time with
/// `EventStream.statistics`.
public struct EventStreamStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Events returned by `next()`.
    public var delivered: Int = 0
    /// Progress values replaced by a newer value of the same kind before they were taken.
    public var coalesced: Int = 0
    /// Events thrown away by a `keepNewest` or `keepOldest` limit.
    public var dropped: Int = 0
    /// Events waiting to be taken now.
    public var pending: Int = 0
    /// Events still pending when the consumer stopped (cancelled, stopped iterating or
    /// dropped the stream), which nobody will take.
    public var discarded: Int = 0

    /// Statistics with every count 0.
    public init() {}

    /// Every count on one line: `delivered 3, coalesced 0, dropped 0, pending 1, discarded 0`.
    public var description: String {
        "delivered \(delivered), coalesced \(coalesced), dropped \(dropped), pending \(pending), discarded \(discarded)"
    }
}
