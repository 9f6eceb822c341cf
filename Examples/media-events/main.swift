import Dispatch
import Foundation
import MediaEvents
import Synchronization

// media-events: plays media headless and prints every event of the player and its media in
// libvlc's delivery order.

let usage = """
    usage: media-events log [--json] [--no-progress] [MEDIA...]

    Plays each MEDIA (a path or URL; the bundled sample when none is given) headless and
    prints every event of the player and its media, one per line.
      --json         JSON Lines: {"seq","t","source","event", payload fields}
      --no-progress  leave out TimeChanged, PositionChanged, Buffering, AudioVolume
    Exit status: 0 every media played to its end, 1 a media failed, 2 usage error.
    """

func fail(usage message: String) -> Never {
    FileHandle.standardError.write(Data("media-events: \(message)\n\(usage)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.first == "log" else { fail(usage: "expected a command") }
arguments.removeFirst()
var json = false
var dropProgress = false
var inputs: [String] = []
for argument in arguments {
    switch argument {
    case "--json": json = true
    case "--no-progress": dropProgress = true
    case "-h", "--help": print(usage); exit(0)
    default:
        if argument.hasPrefix("-") { fail(usage: "unknown option \(argument)") }
        inputs.append(argument)
    }
}
if inputs.isEmpty {
    guard let sample = Bundle.module.url(forResource: "sample", withExtension: "wav") else {
        fail(usage: "the bundled sample is missing")
    }
    inputs = [sample.path]
}

/// Serializes output so that lines keep libvlc's delivery order across its threads.
final class EventPrinter: Sendable {
    private let state = Mutex((seq: 0, start: DispatchTime.now()))
    let json: Bool
    init(json: Bool) { self.json = json }

    func print(source: String, name: String, detail: String) {
        state.withLock { state in
            state.seq += 1
            let t = Double(DispatchTime.now().uptimeNanoseconds - state.start.uptimeNanoseconds) / 1e9
            let line: String
            if json {
                line = #"{"seq":\#(state.seq),"t":\#(String(format: "%.6f", t)),"source":"\#(source)","event":"\#(name)"}"#
            } else {
                line = String(format: "%8.3fs  %-6@ %@", t, source, detail)
            }
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}

let library: VLCLibrary
do {
    library = try VLCLibrary()
} catch {
    FileHandle.standardError.write(Data("media-events: \(error)\n".utf8))
    exit(1)
}
let printer = EventPrinter(json: json)
let skipProgress = dropProgress
var failures = 0

for input in inputs {
    let media = input.contains("://")
        ? VLCMedia(url: URL(string: input) ?? URL(fileURLWithPath: input), library: library)
        : VLCMedia(path: input, library: library)
    let player = VLCMediaPlayer(library: library)
    let outcome = Mutex<MediaPlayerEvent.Kind?>(nil)
    let finished = DispatchSemaphore(value: 0)
    let mediaToken = media.observe { event in
        printer.print(source: "media", name: event.name, detail: event.description)
    }
    let playerToken = player.observe { event in
        if skipProgress && event.kind.isProgress { return }
        printer.print(source: "player", name: event.name, detail: event.description)
        if event.kind == .endReached || event.kind == .encounteredError {
            outcome.withLock { $0 = event.kind }
            finished.signal()
        }
    }
    player.media = media
    player.play()
    finished.wait()
    if outcome.withLock({ $0 }) == .encounteredError {
        failures += 1
        FileHandle.standardError.write(Data("media-events: \(input): libvlc reported EncounteredError\n".utf8))
    }
    playerToken.cancel()
    mediaToken.cancel()
}
exit(failures == 0 ? 0 : 1)
