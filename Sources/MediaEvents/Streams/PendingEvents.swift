/// The events of one stream that its consumer has not taken yet, in arrival order.
///
/// Coalescing removes a pending progress value from the middle of the queue; to keep that
/// O(1) the removed value leaves an empty slot behind, which `popFirst` skips. Empty slots
/// are squeezed out once they outnumber the live events, so a consumer that stalls while
/// only progress values arrive cannot make the queue grow.
struct PendingEvents<Event: VLCEvent> {
    private var slots: [Event?] = []
    /// Slots before `head` have been taken.
    private var head = 0
    /// The arrival number of `slots[0]`; arrival numbers survive compaction, slot indexes don't.
    private var firstArrival = 0
    /// The arrival number of the pending value of each progress kind (by `kind.index`),
    /// tracked only for values appended with `replacesProgress`.
    private var progressArrival: [Int: Int] = [:]

    /// Slots in use, live or empty; lets tests check that coalescing keeps memory bounded.
    var storageCount: Int { slots.count - head }

    /// The live events pending.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Appends `event`. With `replacesProgress` and a progress kind, removes the pending value
    /// of the same kind first and returns it (the caller releases it outside the lock).
    mutating func append(_ event: Event, replacesProgress: Bool) -> Event? {
        var replaced: Event?
        if replacesProgress && event.kind.isProgress {
            let key = event.kind.index
            if let arrival = progressArrival[key] {
                let index = arrival - firstArrival
                replaced = slots[index]
                slots[index] = nil
                count -= 1
            }
            progressArrival[key] = firstArrival + slots.count
        }
        slots.append(event)
        count += 1
        compactIfSparse()
        return replaced
    }

    /// Removes and returns the oldest live event.
    mutating func popFirst() -> Event? {
        while head < slots.count {
            let index = head
            head += 1
            guard let event = slots[index] else { continue }
            slots[index] = nil
            count -= 1
            let key = event.kind.index
            if event.kind.isProgress, progressArrival[key] == firstArrival + index {
                progressArrival[key] = nil
            }
            if head == slots.count {
                firstArrival += slots.count
                slots.removeAll(keepingCapacity: true)
                head = 0
            }
            return event
        }
        return nil
    }

    /// Moves the oldest live events into `batch` for as long as `take` accepts the oldest;
    /// returns how many it moved.
    mutating func moveLeading(into batch: inout ContiguousArray<Event>, while take: (Event) -> Bool) -> Int {
        var moved = 0
        while head < slots.count {
            guard let event = slots[head] else {
                head += 1
                continue
            }
            guard take(event), let taken = popFirst() else { break }
            batch.append(taken)
            moved += 1
        }
        if head == slots.count, head > 0 {
            firstArrival += slots.count
            slots.removeAll(keepingCapacity: true)
            head = 0
        }
        return moved
    }

    /// Removes every event and returns them, oldest first.
    mutating func removeAll() -> [Event] {
        var events: [Event] = []
        events.reserveCapacity(count)
        while let event = popFirst() { events.append(event) }
        return events
    }

    private mutating func compactIfSparse() {
        let holes = slots.count - count
        guard holes > 32, holes > count else { return }
        var live: [Event?] = []
        live.reserveCapacity(count)
        progressArrival.removeAll(keepingCapacity: true)
        firstArrival += slots.count
        for case let event? in slots[head...] {
            if event.kind.isProgress { progressArrival[event.kind.index] = firstArrival + live.count }
            live.append(event)
        }
        slots = live
        head = 0
    }
}
