/// The state of a playlist: its entries, the current one, whether it plays, and every decision
/// about what plays next. Pure: each transition returns its effects (the events to publish, the
/// entry to start, a stop), which the owner carries out after unlocking. Generic over the media
/// so that its logic can be tested without libvlc.
struct PlaylistState<Media: Sendable>: Sendable {
    struct Item: Sendable {
        let entry: PlaylistEntry
        let media: Media
        /// How many expansions made it (0 for an entry added by a call).
        let depth: Int
    }

    /// What the owner does after a transition.
    struct Effects: Sendable {
        var events: [PlaylistEvent] = []
        /// Start this item's media; the start is dropped if another transition bumped the
        /// generation before it runs. `afterBackoff`: wait first (every entry failed in a row).
        var start: (item: Item, generation: UInt64, afterBackoff: Bool)?
        /// Stop the player (the playlist ended, was stopped or cleared).
        var stop = false
        /// Resume a paused player.
        var resume = false
    }

    private(set) var items: [Item] = []
    private(set) var current: PlaylistEntryID?
    /// Whether the playlist plays: started and neither stopped nor at its end.
    private(set) var isActive = false
    var loop: PlaylistLoop = .off
    /// Bumped by every transition that starts an entry or stops: a queued start whose
    /// generation is no longer the current one is dropped.
    private(set) var generation: UInt64 = 0
    private var nextID: UInt64 = 1
    private var consecutiveFailures = 0
    let maximumEntries: Int
    let maximumDepth: Int

    init(maximumEntries: Int = 10_000, maximumDepth: Int = 8) {
        self.maximumEntries = maximumEntries
        self.maximumDepth = maximumDepth
    }

    var entries: [PlaylistEntry] { items.map(\.entry) }

    func index(of id: PlaylistEntryID) -> Int? { items.firstIndex { $0.entry.id == id } }

    var currentItem: Item? { current.flatMap(index(of:)).map { items[$0] } }

    // MARK: Edits

    /// Adds `media` before the entry at `index` (the end when `nil`); at most `maximumEntries`
    /// in all. Returns the new entries (empty when none fit) and the effects.
    mutating func insert(
        _ media: [(media: Media, mrl: String)], at index: Int? = nil, parent: PlaylistEntryID? = nil, depth: Int = 0
    ) -> ([PlaylistEntry], Effects) {
        let room = max(0, maximumEntries - items.count)
        let position = min(max(index ?? items.count, 0), items.count)
        let new = media.prefix(room).map { media, mrl in
            defer { nextID += 1 }
            return Item(
                entry: PlaylistEntry(id: PlaylistEntryID(rawValue: nextID), mrl: mrl, parent: parent),
                media: media, depth: depth)
        }
        var effects = Effects()
        guard !new.isEmpty else { return ([], effects) }
        items.insert(contentsOf: new, at: position)
        effects.events.append(.entriesAdded(new.map(\.entry), index: position))
        return (new.map(\.entry), effects)
    }

    /// Removes the entry `id`; the current one gives its place to the next (started when the
    /// playlist plays). `nil` when there is no such entry.
    mutating func remove(_ id: PlaylistEntryID) -> Effects? {
        guard let index = index(of: id) else { return nil }
        let removed = items.remove(at: index)
        var effects = Effects(events: [.entryRemoved(removed.entry, index: index)])
        if current == id {
            // The entry that took its index, if any: what comes after it.
            let next = index < items.count ? items[index] : (loop == .list ? items.first : nil)
            moveCurrent(to: next, &effects)
        }
        return effects
    }

    /// Moves the entry `id` to `index` (counted after its removal, as mpv's `playlist-move`
    /// counts before it: see the caller). `nil` when there is no such entry.
    mutating func move(_ id: PlaylistEntryID, to index: Int) -> Effects? {
        guard let from = self.index(of: id) else { return nil }
        let item = items.remove(at: from)
        let to = min(max(index, 0), items.count)
        items.insert(item, at: to)
        return Effects(events: [.entryMoved(item.entry, from: from, to: to)])
    }

    /// Removes every entry and stops.
    mutating func clear() -> Effects {
        items = []
        var effects = Effects(events: [.cleared])
        if isActive { effects.stop = true }
        isActive = false
        generation += 1
        if current != nil {
            current = nil
            effects.events.append(.currentEntryChanged(nil))
        }
        return effects
    }

    /// Replaces the entry `parent` (a playlist file or a directory that played as one) by
    /// `children`, and starts the first when the parent was current and the playlist plays.
    /// Children beyond `maximumDepth` or `maximumEntries` are left out.
    mutating func expand(_ parent: PlaylistEntryID, into children: [(media: Media, mrl: String)]) -> Effects {
        guard let index = index(of: parent) else { return Effects() }
        let item = items.remove(at: index)
        let allowed = item.depth < maximumDepth ? children : []
        var (added, effects) = insert(allowed, at: index, parent: parent, depth: item.depth + 1)
        effects.events = [.expanded(parent: item.entry, children: added)]
        if current == parent {
            let first = index < items.count ? items[index] : (loop == .list ? items.first : nil)
            moveCurrent(to: first, &effects)
        }
        return effects
    }

    // MARK: Control

    /// Starts the current entry (the first when there is none) unless the playlist plays,
    /// where it resumes a paused player.
    mutating func play() -> Effects {
        var effects = Effects()
        if isActive, current != nil {
            effects.resume = true
            return effects
        }
        guard let item = currentItem ?? items.first else { return effects }
        isActive = true
        consecutiveFailures = 0
        start(item, &effects)
        return effects
    }

    /// Starts the entry `id`. `nil` when there is no such entry.
    mutating func play(_ id: PlaylistEntryID) -> Effects? {
        guard let index = index(of: id) else { return nil }
        isActive = true
        consecutiveFailures = 0
        var effects = Effects()
        start(items[index], &effects)
        return effects
    }

    /// Moves to the entry after the current one (the first after the last with `loop ==
    /// .list`). `nil` when there is none: nothing changed.
    mutating func next() -> Effects? {
        guard let current, let index = index(of: current) else { return nil }
        let target = index + 1 < items.count ? items[index + 1] : (loop == .list ? items.first : nil)
        guard let target else { return nil }
        consecutiveFailures = 0
        return moved(to: target)
    }

    /// Moves to the entry before the current one (the last before the first with `loop ==
    /// .list`). `nil` when there is none: nothing changed.
    mutating func previous() -> Effects? {
        guard let current, let index = index(of: current) else { return nil }
        let target = index > 0 ? items[index - 1] : (loop == .list ? items.last : nil)
        guard let target else { return nil }
        consecutiveFailures = 0
        return moved(to: target)
    }

    /// Stops; the current entry stays (a `play()` starts it again).
    mutating func stop() -> Effects {
        isActive = false
        generation += 1
        return Effects(stop: true)
    }

    // MARK: Playback ends

    /// The playback of the entry `entry`, started in generation `started`, ended with `outcome`: what
    /// plays next. Ends that are not of the current entry or of the current generation (a
    /// call overtook the playback: a stop, then a play of the same entry), or while the
    /// playlist does not play, change nothing; a skip and a teardown are what a call did.
    mutating func ended(_ entry: PlaylistEntryID, _ outcome: PlaybackOutcome, started: UInt64) -> Effects {
        guard isActive, started == generation, entry == current, let index = index(of: entry) else {
            return Effects()
        }
        var effects = Effects()
        let target: Item?
        switch outcome {
        case .ended:
            consecutiveFailures = 0
            target = loop == .entry ? items[index] : after(index)
        case .failed:
            consecutiveFailures += 1
            target = after(index) ?? (loop == .entry ? items[index] : nil)
        case .stopped:
            // An input that died on its own (libvlc stops an input that cannot pause when
            // asked to): go on as after an end.
            target = after(index)
        case .expanded, .skipped, .quit:
            return effects
        }
        guard let target else {
            isActive = false
            generation += 1
            current = nil
            // The player is stopped before the end is announced: once `endReached` arrives,
            // its state, time and position are those of a stopped player (libvlc's own
            // `Stopped` after an end comes from the dying input, at a moment of its choosing).
            effects.stop = true
            effects.events = [.currentEntryChanged(nil), .endReached]
            return effects
        }
        start(target, &effects)
        return effects
    }

    /// Whether a start queued with `generation` is still the one to carry out.
    func isCurrent(_ generation: UInt64) -> Bool { generation == self.generation }

    // MARK: Helpers

    private func after(_ index: Int) -> Item? {
        index + 1 < items.count ? items[index + 1] : (loop != .off ? items.first : nil)
    }

    private mutating func moved(to target: Item) -> Effects {
        var effects = Effects()
        if isActive {
            start(target, &effects)
        } else {
            setCurrent(target.entry, &effects)
        }
        return effects
    }

    private mutating func moveCurrent(to target: Item?, _ effects: inout Effects) {
        if let target, isActive {
            start(target, &effects)
        } else if let target {
            setCurrent(target.entry, &effects)
        } else {
            if isActive { effects.stop = true }
            isActive = false
            generation += 1
            setCurrent(nil, &effects)
        }
    }

    private mutating func start(_ item: Item, _ effects: inout Effects) {
        setCurrent(item.entry, &effects)
        generation += 1
        // Every entry failed in a row: wait before the next round instead of spinning.
        let backoff = consecutiveFailures > 0 && consecutiveFailures >= items.count
        if backoff { consecutiveFailures = 0 }
        effects.start = (item, generation, backoff)
    }

    private mutating func setCurrent(_ entry: PlaylistEntry?, _ effects: inout Effects) {
        guard current != entry?.id else { return }
        current = entry?.id
        effects.events.append(.currentEntryChanged(entry))
    }
}
