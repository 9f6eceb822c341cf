import Foundation
import MediaEvents
import Synchronization
import XCTest

final class SmokeTests: XCTestCase {
    func testPlaysAWav() throws {
        let library = try VLCLibrary()
        let url = URL(fileURLWithPath: "/tmp/sample.keep.wav")
        let player = VLCMediaPlayer(media: VLCMedia(url: url, library: library), library: library)
        let names = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let token = player.observe { event in
            if event.kind.isProgress { return }
            names.withLock { $0.append(event.description) }
            if event.kind == .endReached { done.signal() }
        }
        player.play()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        print(names.withLock { $0 })
        token.cancel()
    }
}
