/// The last log lines, for clients that reconnect and subscribe `since` the last seq they read.
///
/// Bounded: it keeps `capacity` lines, oldest out first. Lines are kept as the log wrote them
/// (same bytes, same seq); `lines(after:)` says how many of those a client asks for are gone.
struct CatchUpRing {
    struct Line {
        let seq: Int
        let name: String
        let isProgress: Bool
        /// The line with its newline.
        let bytes: [UInt8]
    }

    /// What a client that read up to some seq has missed.
    struct Missed {
        /// Lines after that seq no longer kept (0 when all are).
        let lost: Int
        /// The lines after that seq that are kept, in order.
        let lines: [Line]
    }

    let capacity: Int
    private var storage: [Line] = []
    /// Index of the oldest line in `storage` once it is full.
    private var head = 0
    /// The seq of the last line added; 0 before any.
    private(set) var lastSeq = 0

    init(capacity: Int, lastSeq: Int) {
        self.capacity = capacity
        self.lastSeq = lastSeq
        storage.reserveCapacity(min(capacity, 4096))
    }

    mutating func add(_ line: Line) {
        lastSeq = line.seq
        guard capacity > 0 else { return }
        if storage.count < capacity {
            storage.append(line)
        } else {
            storage[head] = line
            head = (head + 1) % capacity
        }
    }

    /// The lines after `seq` (which must not be past `lastSeq`), and how many of them are gone.
    func lines(after seq: Int) -> Missed {
        let ordered = Array(storage[head...] + storage[..<head])
        let kept = ordered.filter { $0.seq > seq }
        let wanted = lastSeq - seq
        return Missed(lost: max(0, wanted - kept.count), lines: kept)
    }
}
