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
        .executable(name: "media-events", targets: ["media-events"]),
        .executable(name: "media-daemon", targets: ["media-daemon"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLibVLC",
            path: "Sources/CLibVLC",
            pkgConfig: "libvlc",
            providers: [.apt(["libvlc-dev"])]
        ),
        // The libvlc log callback (a C va_list callback Swift cannot write), used by VLCLogSource.
        .target(name: "CLibVLCLog", dependencies: ["CLibVLC"]),
        // libvlc 3.0's non-atomic media reference count, made atomic for every caller in the
        // process (see its header).
        .target(name: "CLibVLCFixes", dependencies: ["CLibVLC"], linkerSettings: [.linkedLibrary("dl")]),
        // The current thread's innermost delivery frame, a C thread-local (see its header).
        .target(name: "CDeliveryFrame"),
        // The memory of the nodes asynchronous deliveries queue, recycled (see its header).
        .target(name: "CDeliveryNodes"),
        .target(
            name: "MediaEvents",
            dependencies: ["CLibVLC", "CLibVLCLog", "CLibVLCFixes", "CDeliveryFrame", "CDeliveryNodes"]),
        .target(name: "CVLCTestSupport", dependencies: ["CLibVLC"], path: "Tests/CVLCTestSupport"),
        // What both test targets share: generated media, a local HTTP server, a server that never
        // answers, a pthread-locked box. No dependency on MediaEvents.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "MediaEventsTests",
            dependencies: [
                "MediaEvents", "CLibVLC", "CLibVLCLog", "CLibVLCFixes", "CDeliveryNodes", "CVLCTestSupport",
                "TestSupport",
            ],
            // Recordings: real libvlc sequences the example test replays (RecordingFixtureTests);
            // RefcountFixHost: a C program MediaReferenceCountTests builds and runs.
            exclude: ["Support/README.md", "Recordings", "RefcountFixHost"]
        ),
        .target(name: "ExampleSupport", dependencies: ["MediaEvents"], path: "Examples/Shared"),
        .executableTarget(
            name: "media-events",
            dependencies: ["MediaEvents", "ExampleSupport"],
            path: "Examples/media-events",
            resources: [.copy("Resources/sample.wav")]
        ),
        // Runs the built example programs as a user would.
        .testTarget(name: "ExamplesTests", dependencies: ["TestSupport"], path: "Tests/ExamplesTests"),
        // sd-bus (libsystemd) for media-daemon's MPRIS service, and its two interfaces as
        // sd-bus vtables (C macros Swift cannot write).
        .systemLibrary(
            name: "CSDBus",
            path: "Examples/CSDBus",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(name: "MPRISInterfaces", dependencies: ["CSDBus"], path: "Examples/MPRISInterfaces"),
        // libmosquitto for media-daemon's MQTT front end (--mqtt).
        .systemLibrary(
            name: "CMosquitto",
            path: "Examples/CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .executableTarget(
            name: "media-daemon",
            dependencies: ["MediaEvents", "ExampleSupport", "CSDBus", "MPRISInterfaces", "CMosquitto"],
            path: "Examples/media-daemon",
            // The example systemd unit and the system bus's D-Bus policy: documentation.
            exclude: ["media-daemon.service", "media-daemon-mpris.conf"]
        ),
        // The daemon's pure logic, fed events by hand (the programs themselves are ExamplesTests').
        .testTarget(name: "MediaDaemonUnitTests", dependencies: ["media-daemon"], path: "Tests/MediaDaemonUnitTests"),
        // The event logger's pure logic, on an injected clock.
        .testTarget(
            name: "MediaEventsToolUnitTests", dependencies: ["media-events", "ExampleSupport"],
            path: "Tests/MediaEventsToolUnitTests"),
        .target(name: "CRawBaseline", dependencies: ["CLibVLC"], path: "Benchmarks/CRawBaseline"),
        .executableTarget(
            name: "MediaEventsBenchmarks",
            dependencies: ["MediaEvents", "CRawBaseline"],
            path: "Benchmarks/MediaEventsBenchmarks"
        ),
        // Run by Scripts/leaks.sh under valgrind: create/observe/play/teardown in a loop.
        .executableTarget(name: "MediaEventsLeakLoop", dependencies: ["MediaEvents"], path: "Tests/LeakLoop"),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
