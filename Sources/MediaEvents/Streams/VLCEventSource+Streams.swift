/// Event streams and waiting for one event.
extension VLCEventSource {
    /// The object's events of the given kinds (all kinds when none are given) as an
    /// `AsyncSequence`, subscribed from now on.
    ///
    /// ```swift
    /// for await event in player.events() { print(event) }
    /// ```
    ///
    /// - Parameters:
    ///   - kinds: the kinds to deliver; none means every kind.
    ///   - buffering: what to keep while the consumer is busy; the default keeps every state
    ///     event and only the latest value of each progress kind.
    /// - Returns: a stream for one consumer; it ends when the object is torn down, when the
    ///   consuming task is cancelled or when the consumer stops iterating. Made after the
    ///   object was torn down it ends at once.
    public func events(_ kinds: Event.Kind..., buffering: EventBufferingPolicy = .default) -> EventStream<Event> {
        events(kinds: kinds, buffering: buffering)
    }

    /// The same as `events(_:buffering:)` with the kinds as an array.
    public func events(kinds: [Event.Kind], buffering: EventBufferingPolicy = .default) -> EventStream<Event> {
        let sink = EventStreamSink(mask: KindMask(kinds), policy: buffering, hub: eventHub)
        if !eventHub.add(sink) {
            sink.finishNow()
        }
        return EventStream(sink: sink)
    }

    /// Waits for the next event of one of the given kinds (any kind when none are given).
    ///
    /// Only events sent after the call are seen. To wait for the effect of an action, use
    /// `waitFor(_:timeout:after:)`, which subscribes before running the action.
    ///
    /// - Throws: `VLCError.timedOut` when no such event arrives within `timeout`;
    ///   `VLCError.sourceEnded` when the object is torn down first; `CancellationError` when
    ///   the calling task is cancelled.
    public func nextEvent(_ kinds: Event.Kind..., timeout: Duration) async throws -> Event {
        try await events(kinds: kinds, buffering: .keepOldest(1)).first(kinds: kinds, timeout: timeout)
    }

    /// Subscribes, runs `trigger`, then waits for the first event of one of the given kinds
    /// (any kind when none are given), so an event caused by `trigger` cannot be missed.
    ///
    /// ```swift
    /// let end = try await player.waitFor(.endReached, .encounteredError, timeout: .seconds(30)) {
    ///     player.play()
    /// }
    /// ```
    ///
    /// - Throws: what `trigger` throws; `VLCError.timedOut` when no such event arrives within
    ///   `timeout` after `trigger` returned; `VLCError.sourceEnded` when the object is torn
    ///   down first; `CancellationError` when the calling task is cancelled.
    public func waitFor(
        _ kinds: Event.Kind...,
        timeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        after trigger: () async throws -> Void
    ) async throws -> Event {
        let stream = events(kinds: kinds, buffering: .keepOldest(1))
        try await trigger()
        return try await stream.first(kinds: kinds, timeout: timeout)
    }
}

extension EventStream {
    /// The first event, or an error when the stream ends or `timeout` passes first.
    func first(kinds: [Event.Kind], timeout: Duration) async throws -> Event {
        try await first(
            timeout: timeout, describing: kinds.isEmpty ? "any event" : kinds.map(\.name).joined(separator: " or ")
        ) { _ in true }
    }

    /// The first event that `accept` takes, or an error when the stream ends or `timeout`
    /// passes first. Ends the stream.
    func first(
        timeout: Duration, describing what: String,
        accept: @escaping @Sendable (Event) -> Bool
    ) async throws -> Event {
        defer { cancel() }
        return try await withThrowingTaskGroup(of: Event.self) { group in
            group.addTask {
                for await event in self where accept(event) {
                    return event
                }
                try Task.checkCancellation()
                throw VLCError.sourceEnded(waitingFor: what)
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw VLCError.timedOut(waitingFor: what, seconds: timeout.seconds)
            }
            defer { group.cancelAll() }
            guard let event = try await group.next() else { throw CancellationError() }
            return event
        }
    }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
