import ExampleSupport
@testable import media_events
import Synchronization
import XCTest

/// `ProgressGate` on a clock the test moves: at most one progress event of each name per
/// interval, state events always, and a repeated duration counted as progress.
final class ProgressGateTests: XCTestCase {
    /// A clock that stands still until moved (nanoseconds).
    private final class TestClock: Sendable {
        private let nanoseconds = Atomic<UInt64>(1_000_000_000)

        var now: UInt64 { nanoseconds.load(ordering: .relaxed) }

        func advance(milliseconds: UInt64) {
            nanoseconds.add(milliseconds * 1_000_000, ordering: .relaxed)
        }

        func set(_ value: UInt64) { nanoseconds.store(value, ordering: .relaxed) }
    }

    private func time(_ ms: Int) -> EventRecord {
        EventRecord(
            source: "player", name: "MediaPlayerTimeChanged", fields: [("ms", .int(Int64(ms)))], isProgress: true)
    }

    private func position() -> EventRecord {
        EventRecord(
            source: "player", name: "MediaPlayerPositionChanged", fields: [("position", .double(0.5))],
            isProgress: true)
    }

    private func length(_ ms: Int) -> EventRecord {
        EventRecord(source: "player", name: "MediaPlayerLengthChanged", fields: [("ms", .int(Int64(ms)))])
    }

    private let playing = EventRecord(source: "player", name: "MediaPlayerPlaying")

    func testInterval_admitsOneProgressEventOfANamePerInterval_fromTheLastAdmitted() {
        let clock = TestClock()
        let gate = ProgressGate(dropProgress: false, intervalMs: 250, now: { clock.now })
        XCTAssertTrue(gate.admits(time(0)), "the first is printed")
        clock.advance(milliseconds: 249)
        XCTAssertFalse(gate.admits(time(249)), "within the interval")
        clock.advance(milliseconds: 1)
        XCTAssertTrue(gate.admits(time(250)), "a whole interval after the last printed")
        clock.advance(milliseconds: 100)
        XCTAssertFalse(gate.admits(time(350)), "measured from the last printed, not the last seen")
        clock.advance(milliseconds: 150)
        XCTAssertTrue(gate.admits(time(500)))
    }

    func testInterval_isKeptPerEventName_andNeverHoldsBackAStateEvent() {
        let clock = TestClock()
        let gate = ProgressGate(dropProgress: false, intervalMs: 250, now: { clock.now })
        XCTAssertTrue(gate.admits(time(0)))
        XCTAssertTrue(gate.admits(position()), "another name has an interval of its own")
        XCTAssertFalse(gate.admits(time(1)))
        XCTAssertTrue(gate.admits(playing))
        XCTAssertTrue(gate.admits(playing), "state events are printed every time")
    }

    func testRepeatedLength_isProgress_aNewOneIsAlwaysPrinted() {
        let clock = TestClock()
        let gate = ProgressGate(dropProgress: false, intervalMs: 250, now: { clock.now })
        XCTAssertTrue(gate.admits(length(3_000)), "the first of a value")
        clock.advance(milliseconds: 10)
        XCTAssertTrue(gate.admits(length(3_100)), "a new value")
        XCTAssertTrue(gate.admits(length(3_100)), "the first repeat: the name's first progress event")
        clock.advance(milliseconds: 10)
        XCTAssertFalse(gate.admits(length(3_100)), "a repeat within the interval")
        XCTAssertTrue(gate.admits(length(3_200)), "a new value within the interval")
        clock.advance(milliseconds: 240)
        XCTAssertTrue(gate.admits(length(3_200)), "a repeat, an interval after the last printed repeat")
    }

    func testNoProgress_dropsProgressAndRepeats_keepsStateEvents() {
        let gate = ProgressGate(dropProgress: true, intervalMs: 250, now: { 0 })
        XCTAssertFalse(gate.admits(time(0)))
        XCTAssertTrue(gate.admits(length(3_000)))
        XCTAssertFalse(gate.admits(length(3_000)))
        XCTAssertTrue(gate.admits(playing))
    }

    func testZeroInterval_admitsEveryProgressEvent_withTheClockStill() {
        let gate = ProgressGate(dropProgress: false, intervalMs: 0, now: { 7 })
        for ms in 0..<5 { XCTAssertTrue(gate.admits(time(ms)), "event \(ms)") }
    }

    /// A time read on another thread before one stored under the gate's lock can be older
    /// than it: that counts as no time passed, never as a trap or a wrap-around.
    func testClockReadingEarlierThanTheLastAdmitted_countsAsNoTimePassed() {
        let clock = TestClock()
        let gate = ProgressGate(dropProgress: false, intervalMs: 250, now: { clock.now })
        clock.set(5_000_000_000)
        XCTAssertTrue(gate.admits(time(0)))
        clock.set(4_000_000_000)
        XCTAssertFalse(gate.admits(time(1)))
        clock.set(5_250_000_000)
        XCTAssertTrue(gate.admits(time(2)))
    }
}
