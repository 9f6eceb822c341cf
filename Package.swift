// swift-tools-version: 6.0
import PackageDescription

// One set of Swift settings for every Swift target: Swift 6 language mode means complete
// strict concurrency checking; CI adds -warnings-as-errors on the command line.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "MediaEvents",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MediaEvents", targets: ["MediaEvents"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLibVLC",
            path: "Sources/CLibVLC",
            pkgConfig: "libvlc",
            providers: [.apt(["libvlc-dev"])]
        ),
        .target(name: "MediaEvents", dependencies: ["CLibVLC"]),
        .target(name: "CVLCTestSupport", dependencies: ["CLibVLC"], path: "Tests/CVLCTestSupport"),
        // Run by Scripts/leaks.sh under valgrind: create/observe/play/teardown in a loop.
        .executableTarget(name: "MediaEventsLeakLoop", dependencies: ["MediaEvents"], path: "Tests/LeakLoop"),
        .testTarget(name: "MediaEventsTests", dependencies: ["MediaEvents", "CLibVLC", "CVLCTestSupport"]),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
