import Foundation
@testable import MediaEvents
import XCTest

/// The libvlc 3 workarounds, the Rules table of SendSites.md and their tests say the same
/// thing: each type of Sources/MediaEvents/Workarounds/ is listed, cites a rule whose row names
/// it, its file and its test, and that test exists and names the workaround back.
final class WorkaroundRulesTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../../..").standardized

    private func read(_ path: String) throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
    }

    func testEveryWorkaround_whenListed_hasItsRuleRowAndATestThatNamesIt() throws {
        let sendSites = try read("Sources/MediaEvents/MediaEvents.docc/SendSites.md")
        let rows = sendSites.split(separator: "\n").filter { $0.hasPrefix("| ") }
        let testFiles = try FileManager.default.subpathsOfDirectory(
            atPath: Self.root.appendingPathComponent("Tests/MediaEventsTests").path
        ).filter { $0.hasSuffix(".swift") }
        let tests = try testFiles.map { try read("Tests/MediaEventsTests/\($0)") }
        for workaround in LibvlcWorkarounds.all {
            let name = String(describing: workaround)
            let row = rows.first { row in
                let rules = row.split(separator: "|").first.map { $0.split(separator: ",") } ?? []
                return rules.contains { Int($0.trimmingCharacters(in: .whitespaces)) == workaround.rule }
                    && row.contains("`\(name)`")
            }
            XCTAssertNotNil(row, "\(name): no row of rule \(workaround.rule) names it in SendSites.md")
            XCTAssertEqual(row?.contains("`Workarounds/\(name).swift`"), true, "\(name): its file in the row")
            XCTAssertEqual(row?.contains("`\(workaround.test)`"), true, "\(name): its test in the row")
            let parts = workaround.test.split(separator: ".")
            XCTAssertEqual(parts.count, 2, "\(name): test as Class.method")
            guard parts.count == 2 else { continue }
            let file = tests.first { $0.contains("class \(parts[0])") && $0.contains("func \(parts[1])(") }
            XCTAssertNotNil(file, "\(name): no test \(workaround.test)")
            guard let file else { continue }
            let lines = file.split(separator: "\n", omittingEmptySubsequences: false)
            let index = lines.firstIndex { $0.contains("func \(parts[1])(") }!
            XCTAssertTrue(
                lines[index - 1].contains("/// Workaround: `\(name)` (rule \(workaround.rule) of SendSites.md)"),
                "\(workaround.test) does not name \(name) right above its declaration")
        }
    }

    func testWorkaroundsFolder_holdsExactlyTheListedWorkarounds() throws {
        let folder = Self.root.appendingPathComponent("Sources/MediaEvents/Workarounds")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".swift") && $0 != "LibvlcWorkaround.swift" }
            .map { String($0.dropLast(".swift".count)) }
        XCTAssertEqual(Set(files), Set(LibvlcWorkarounds.all.map { String(describing: $0) }))
    }
}
