import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// `.freed` (libvlc's `MediaFreed`, which a wrapper can never receive from libvlc) is sent by
/// the wrapper's teardown: once, to the subscribers of that kind, before their completions.
final class MediaTeardownEventTests: XCTestCase {
    func testFreed_whenMediaTornDown_deliveredOnceBeforeCompletion() throws {
        for mode in DispatchMode.allCases {
            let order = Locked<[String]>([])
            var media: VLCMedia? = makeMedia(SharedMedia.shortWAV, configuration: mode.make().configuration)
            let freed = media!.observe(.freed, onCompletion: { order.withLock { $0.append("completion") } }) { event in
                order.withLock { $0.append(event.name) }
            }
            let others = media!.observe(
                .metaChanged, onCompletion: { order.withLock { $0.append("other completion") } }
            ) { event in
                order.withLock { $0.append("unexpected \(event.name)") }
            }
            media = nil
            XCTAssertTrue(waitUntil(10) { order.withLock { $0.count } >= 3 }, "\(mode): \(order.withLock { $0 })")
            let seen = order.withLock { $0 }
            XCTAssertEqual(seen.filter { $0 == "MediaFreed" }.count, 1, "\(mode): \(seen)")
            XCTAssertFalse(seen.contains { $0.hasPrefix("unexpected") }, "\(mode): \(seen)")
            if let freedAt = seen.firstIndex(of: "MediaFreed"), let doneAt = seen.firstIndex(of: "completion") {
                XCTAssertLessThan(freedAt, doneAt, "\(mode): \(seen)")
            } else {
                XCTFail("\(mode): \(seen)")
            }
            withExtendedLifetime((freed, others)) {}
        }
    }

    func testFreed_whenStreamOpen_isTheLastElementBeforeTheEnd() async throws {
        var media: VLCMedia? = makeMedia(SharedMedia.shortWAV)
        let stream = media!.events(.freed, .metaChanged)
        media = nil
        let names = try await withTimeout(10) { () async -> [String] in
            var names: [String] = []
            for await event in stream { names.append(event.name) }
            return names
        }
        XCTAssertEqual(names, ["MediaFreed"])
    }

    func testFreed_whenSubscriptionCancelledFirst_notDelivered() throws {
        let seen = Locked(0)
        var media: VLCMedia? = makeMedia(SharedMedia.shortWAV)
        let token = media!.observe(.freed) { _ in seen.withLock { $0 += 1 } }
        token.cancel()
        media = nil
        XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 10))
        XCTAssertEqual(seen.withLock { $0 }, 0)
    }
}
