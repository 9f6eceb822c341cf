import Foundation
import MediaEvents
import XCTest

final class VLCMediaListTests: XCTestCase {
    private static func media(_ name: String, _ library: VLCLibrary) -> VLCMedia {
        VLCMedia(path: "/nonexistent/\(name).wav", library: library)
    }

    private func media(_ name: String, _ library: VLCLibrary) -> VLCMedia {
        Self.media(name, library)
    }

    /// 8 threads append, insert at 0 and remove at once; every edit gives exactly one
    /// Will… event then its …Added/…Deleted event with the same item and the right index,
    /// and replaying the events reproduces the list.
    func testEdits_whenManyThreadsEditAtOnce() throws {
        let library = try VLCLibrary()
        for round in 0..<5 {
            let list = VLCMediaList(library: library)
            let events = Recorder<MediaListEvent>()
            let token = list.observe { events.record($0) }
            let threads = 8, perThread = 40
            let ok = startThreads(count: threads, timeout: 60, name: "list edits") { t in
                for k in 0..<perThread {
                    let item = Self.media("r\(round)-t\(t)-\(k)", library)
                    if k % 2 == 0 { list.append(item) } else { list.insert(item, at: 0) }
                    if k % 4 == 3 { list.remove(at: 0) }
                }
            }
            XCTAssertTrue(ok)
            list.waitForPendingEdits()
            token.cancel()
            let recorded = events.values
            var model: [String] = []
            var adds = 0, removes = 0
            var index = 0
            while index < recorded.count {
                let will = recorded[index]
                XCTAssertLessThan(index + 1, recorded.count, "a Will… event without its pair")
                guard index + 1 < recorded.count else { break }
                let did = recorded[index + 1]
                switch (will, did) {
                case let (.willAddItem(a, i), .itemAdded(b, j)):
                    XCTAssertTrue(a.isSameMedia(as: b))
                    XCTAssertEqual(i, j)
                    XCTAssertTrue((0...model.count).contains(i))
                    model.insert(a.mrl, at: min(max(i, 0), model.count))
                    adds += 1
                case let (.willDeleteItem(a, i), .itemDeleted(b, j)):
                    XCTAssertTrue(a.isSameMedia(as: b))
                    XCTAssertEqual(i, j)
                    XCTAssertTrue(model.indices.contains(i))
                    if model.indices.contains(i) {
                        XCTAssertEqual(model[i], a.mrl)
                        model.remove(at: i)
                    }
                    removes += 1
                default:
                    XCTFail("unexpected pair \(will) / \(did)")
                }
                index += 2
            }
            XCTAssertEqual(adds, threads * perThread)
            XCTAssertEqual(removes, threads * (perThread / 4))
            XCTAssertEqual(model, list.items.map(\.mrl))
            XCTAssertEqual(list.count, threads * perThread - threads * (perThread / 4))
        }
    }

    /// A handler that reads and edits the list it observes, under every configuration:
    /// reads answer at once from the edits requested so far, edits are carried out after
    /// the event, nothing deadlocks.
    func testHandlerEditsObservedList_whenDeliveredInlineSyncOrAsync() throws {
        let library = try VLCLibrary()
        let configurations: [(String, any EventsConfiguring)] = [
            ("inline", EventsDefaultConfiguration()),
            ("sync", EventsQueueConfiguration(queue: DispatchQueue(label: "sync handlers"), isAsync: false)),
            ("async", EventsQueueConfiguration(queue: DispatchQueue(label: "async handlers"), isAsync: true)),
        ]
        for (label, configuration) in configurations {
            let list = VLCMediaList(library: library, configuration: configuration)
            let countsSeen = Recorder<Int>()
            let echoes = Counter()
            let token = list.observe(.itemAdded, .willDeleteItem) { [weak list] event in
                guard let list else { return }
                switch event {
                case .itemAdded(let item, let index):
                    countsSeen.record(list.count - index)
                    _ = list.items
                    _ = list.media(at: index)
                    if item.mrl.hasSuffix("trigger.wav") {
                        list.append(Self.media("echo-after-\(index)", library))
                        if let own = list.index(of: item) { list.remove(at: own) }
                        // Counted once both edits are requested: the wait below needs them.
                        echoes.increment()
                    }
                case .willDeleteItem:
                    _ = list.index(of: event.item!)
                default:
                    break
                }
            }
            let finished = runWithDeadline(20, "\(label): edits from handlers") {
                for k in 0..<20 {
                    list.append(Self.media(k % 2 == 0 ? "plain-\(k)" : "\(k)-trigger", library))
                }
            }
            XCTAssertTrue(finished, label)
            XCTAssertTrue(waitUntil(20) { echoes.count == 10 }, "\(label): echoes \(echoes.count)")
            let drained = runWithDeadline(20, "\(label): wait for queued edits") {
                list.waitForPendingEdits()
            }
            XCTAssertTrue(drained)
            // 20 appended, 10 echoes appended, the 10 triggers removed by their own handlers.
            let names = list.items.map { URL(string: $0.mrl)!.lastPathComponent }
            XCTAssertEqual(names.filter { $0.hasPrefix("echo-") }.count, 10, "\(label): \(names)")
            XCTAssertEqual(names.filter { $0.hasPrefix("plain-") }.count, 10, "\(label): \(names)")
            XCTAssertEqual(list.count, 20, label)
            if configuration.isAsync {
                XCTAssertTrue(countsSeen.wait(forCount: 30, timeout: 20))
            } else {
                // Delivered before waitForPendingEdits returned; reads include the item.
                XCTAssertEqual(countsSeen.count, 30, label)
            }
            token.cancel()
        }
    }

    /// Dropping the last reference while asynchronous deliveries are still queued: every
    /// subscription completes exactly once and nothing crashes.
    func testTeardown_whenEventsInFlight() throws {
        let library = try VLCLibrary()
        let queue = DispatchQueue(label: "slow handlers")
        let completions = Counter()
        let delivered = Counter()
        let iterations = 30
        let tokens = Recorder<EventSubscription>()
        let finished = runWithDeadline(60, "teardown with events in flight") {
            for round in 0..<iterations {
                var list: VLCMediaList? = VLCMediaList(
                    library: library, configuration: EventsQueueConfiguration(queue: queue, isAsync: true))
                tokens.record(
                    list!.observe(onCompletion: { completions.increment() }) { _ in
                        delivered.increment()
                        usleep(200)
                    })
                for k in 0..<20 { list!.append(Self.media("t\(round)-\(k)", library)) }
                // libvlc has sent the events; their deliveries are still queued behind the
                // slow handlers when the last reference goes.
                list!.waitForPendingEdits()
                list = nil
            }
        }
        XCTAssertTrue(finished)
        XCTAssertTrue(completions.wait(forAtLeast: iterations, timeout: 30), "completions: \(completions.count)")
        XCTAssertEqual(delivered.count, iterations * 40)
        usleep(100_000)
        XCTAssertEqual(completions.count, iterations)
    }

    func testReadsAndIndexChecks_whenOutOfRange() throws {
        let library = try VLCLibrary()
        let first = media("a", library), second = media("b", library)
        let list = VLCMediaList(media: [first, second], library: library)
        XCTAssertEqual(list.count, 2)
        XCTAssertNil(list.media(at: 2))
        XCTAssertNil(list.media(at: -1))
        XCTAssertEqual(list.index(of: second), 1)
        XCTAssertNil(list.index(of: media("c", library)))
        list.insert(media("x", library), at: 5)
        list.remove(at: 7)
        XCTAssertEqual(list.count, 2)
        XCTAssertFalse(list.isReadOnly)
        XCTAssertTrue(list.media(at: 0)!.isSameMedia(as: first))
        list.removeAll()
        XCTAssertTrue(list.isEmpty)
    }
}
