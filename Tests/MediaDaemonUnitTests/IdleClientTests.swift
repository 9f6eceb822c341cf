@testable import media_daemon
import XCTest

/// The control server's idle check (`--client-timeout`), on times the test gives: which limit a
/// client has passed, at the boundary and with a clock read out of order.
final class IdleClientTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000

    private func limit(idle seconds: Double, isOperator: Bool = false, takesEvents: Bool = false, timeout: Double = 300)
        -> Double?
    {
        let start: UInt64 = 100 * second
        return ControlServer.idleLimitPassed(
            lastActivity: start, now: start + UInt64(seconds * 1e9), isOperator: isOperator,
            takesEvents: takesEvents, clientTimeout: timeout)
    }

    func testClient_isPastItsLimitOnceIdleForTheWholeTimeout() {
        XCTAssertNil(limit(idle: 299.999))
        XCTAssertEqual(limit(idle: 300), 300)
        XCTAssertEqual(limit(idle: 301), 300)
    }

    func testOperator_getsAtMostTheOperatorTimeout_orTheClientTimeoutWhenShorter() {
        XCTAssertNil(limit(idle: ControlServer.operatorTimeout - 0.001, isOperator: true))
        XCTAssertEqual(limit(idle: ControlServer.operatorTimeout, isOperator: true), ControlServer.operatorTimeout)
        XCTAssertEqual(limit(idle: 2, isOperator: true, timeout: 2), 2)
        XCTAssertNil(limit(idle: 2, isOperator: false, timeout: 3))
    }

    func testSubscriber_isNeverIdle() {
        XCTAssertNil(limit(idle: 1e6, takesEvents: true))
        XCTAssertNil(limit(idle: 1e6, isOperator: true, takesEvents: true))
    }

    /// `now` read before another thread stored a later `lastActivity`: no time idle, never a
    /// trap on the subtraction.
    func testNowBeforeLastActivity_countsAsNotIdle() {
        let passed = ControlServer.idleLimitPassed(
            lastActivity: 10 * second, now: 9 * second, isOperator: false, takesEvents: false, clientTimeout: 0.5)
        XCTAssertNil(passed)
    }
}
