import Dispatch
import ExampleSupport
import Glibc
import MediaEvents

// media-daemon: plays a playlist headless through MediaEvents' playlist player, logging every
// event of its playbacks as JSON Lines; see `usage` in DaemonOptions.swift.

Output.ignoreSIGPIPE()
// SIGTERM, SIGINT, SIGHUP and SIGUSR1 are taken from here on (see SignalPipe).
SignalPipe.install()
let options: DaemonOptions
do {
    options = try DaemonOptions.parse(RawArguments.arguments())
} catch {
    printError("media-daemon: \(error); try 'media-daemon --help'")
    exit(2)
}

// --mqtt's URL and password file are checked before anything starts.
if let mqtt = options.mqtt {
    do {
        _ = try mqtt.endpoint()
        _ = try mqtt.credentials()
    } catch {
        printError("media-daemon: --mqtt: \(error)")
        exit(1)
    }
}

// An empty playlist starts idle; a playlist file that cannot be read is an error.
let playlist: Playlist
do {
    playlist = try Playlist.load(file: options.playlistFile, arguments: options.arguments)
} catch {
    printError("media-daemon: \(error)")
    exit(1)
}

var logFD = STDOUT_FILENO
if let path = options.logFile {
    logFD = LogFile.open(path, mode: options.logMode)
    guard logFD >= 0 else {
        printError("media-daemon: \(path): cannot open the log (\(String(cString: strerror(errno))))")
        exit(1)
    }
}

// The control socket's commands (--control) and the signal handlers run on this queue (the
// watchdog probes it); the socket is created before libvlc, so that a path in use fails the
// start at once.
let controlQueue = DispatchQueue(label: "media-daemon.control")
let control: ControlServer?
if let path = options.controlPath {
    do {
        control = try ControlServer(
            path: path, queue: controlQueue, catchUpLines: options.catchUpLines,
            clientTimeout: options.clientTimeout)
    } catch {
        printError("media-daemon: --control: \(error)")
        exit(1)
    }
} else {
    control = nil
}
let notifier = SystemdNotifier()

// One queue for the events and libvlc's log (--verbose): async deliveries keep libvlc's order.
let configuration = options.dispatch.configuration(queue: DispatchQueue(label: "media-daemon.events"))
let library: VLCLibrary
do {
    library = try VLCLibrary(
        arguments: MediaInput.libraryArguments(audio: options.audio == .device),
        logsConfiguration: configuration)
} catch {
    printError("media-daemon: \(error)")
    control?.finish()
    exit(1)
}

// With --audio, a machine without a sound device plays silently: said once on stderr.
let audioWarning = options.audio == .device ? AudioOutputWarning.watch(library, program: "media-daemon") : nil
let log = EventLog(
    format: .json, filter: options.filter, fd: logFD,
    outputName: options.logFile ?? "standard output",
    lastSeq: options.logFile == nil ? 0 : EventLog.lastSeq(inLogFile: logFD), wallClock: true)
let daemon = Daemon(
    options: options, log: log, library: library, configuration: configuration,
    controlQueue: controlQueue, control: control, notifier: notifier)
// --mpris: connected before the playlist starts, so that a missing bus fails the start; the
// name is taken once the playlist plays, so that clients that find it find the playlist.
let mpris: MPRISService?
do {
    mpris = try options.mpris.map {
        try MPRISService.connect($0, daemon: daemon, controlQueue: controlQueue, log: log)
    }
} catch {
    printError("media-daemon: --mpris: \(error)")
    control?.finish()
    // _exit: libvlc's player exists; static destructors must not run under its threads.
    _exit(1)
}
// --mqtt: a TLS setup that cannot be used fails the start; the broker itself is connected in
// the background (retried with backoff while it is absent).
let mqtt: MQTTService?
do {
    mqtt = try options.mqtt.map {
        try MQTTService($0, daemon: daemon, controlQueue: controlQueue, log: log)
    }
    try mqtt?.start()
} catch {
    printError("media-daemon: --mqtt: \(error)")
    control?.finish()
    _exit(1)
}
let signalSources = daemon.installSignalHandlers(on: controlQueue)
daemon.start(playlist)
do {
    try mpris?.takeName()
} catch {
    printError("media-daemon: --mpris: \(error)")
    control?.finish()
    _exit(1)
}
// Clients are accepted once the playlist is in place: one that connected earlier waits in
// the listen backlog, so its first status already counts the entries.
control?.start(commands: daemon)
let watchdog = Watchdog(liveness: daemon.liveness, notifier: notifier) { daemon.livenessChanged($0) }
watchdog.start()
// The main thread now only takes the signals (SignalPipe): everything else runs on queues
// and threads of its own.
withExtendedLifetime((signalSources, audioWarning, watchdog, mpris, mqtt)) {
    SignalPipe.waitForever()
}
