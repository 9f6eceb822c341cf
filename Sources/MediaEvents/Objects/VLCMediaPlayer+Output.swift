import Foundation

/// An audio output device, as libvlc's audio output lists it.
public struct AudioOutputDevice: Sendable, Hashable {
    /// The identifier to pass to `setAudioOutputDevice` (ALSA: `null`, `default`, …).
    public let id: String
    /// A human-readable description.
    public let description: String
}

/// Snapshots, audio devices, and the waiting forms of volume and mute.
extension VLCMediaPlayer {
    // MARK: Snapshots

    /// Writes a snapshot of the current video to `path` (PNG; `width` and `height` 0 keep the
    /// video's size, one of them 0 keeps its aspect ratio) and returns the path of the file
    /// this call wrote: `path` itself, or the file libvlc named inside it when `path` is a
    /// directory.
    ///
    /// libvlc sends `snapshotTaken` to every player of the library, not only to the one that
    /// took the snapshot (a subscriber of another player of the same library receives it
    /// too), and from inside the call that wrote the file, on its thread. The answer is the
    /// event sent on this call's thread while it ran: its own file, even when other players
    /// of the library write into the same directory at the same moment.
    ///
    /// While the player is opening, has reported a video output that libvlc is replacing (it
    /// briefly has none while it reconfigures, even after `voutChanged(count: 1)`), or has a
    /// video output that showed no picture yet, the call tries again every 50 ms until
    /// `timeout`.
    ///
    /// - Throws: `VLCError.operationFailed` when libvlc cannot take it: no video output, a
    ///   path it cannot write (at once), or no picture written before `timeout` (libvlc waits
    ///   500 ms for one at each try; its log says why).
    public func takeSnapshot(
        to path: String, width: Int = 0, height: Int = 0,
        timeout: Duration = .seconds(5)
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let attempt: SnapshotAttempt = await control.performAndWait { player in
                let written = SnapshotCapture.Slot()
                let status =
                    SnapshotCapture().around(written) {
                        player.takeSnapshot(to: path, width: UInt32(clamping: width), height: UInt32(clamping: height))
                    } ?? -1
                if status != 0 { return .noVideoOutput(VLCError.lastMessage(or: "no video output")) }
                return written.path.map(SnapshotAttempt.written) ?? .nothingWritten
            }
            let values = cachedValues
            let opening = values.state == .opening || values.state == .buffering
            let failure: String
            switch attempt {
            case .written(let written):
                return written
            case .noVideoOutput(let reason):
                if opening || values.videoOutputs > 0, ContinuousClock.now + .milliseconds(50) < deadline,
                    !Task.isCancelled
                {
                    try? await Task.sleep(for: .milliseconds(50))
                    continue
                }
                failure = reason
            case .nothingWritten:
                // libvlc's take_snapshot returns 0 whatever happens after it found a video
                // output; a failure shows only as the missing event, and why only in its log:
                // it could not open the file, or had no picture within the 500 ms it waits
                // (a video output that has not shown its first one yet). Only the second may
                // change by trying again.
                guard Self.snapshotPathIsWritable(path) else {
                    failure = "libvlc cannot write there"
                    break
                }
                if ContinuousClock.now + .milliseconds(50) < deadline, !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(50))
                    continue
                }
                failure = "libvlc wrote no file: no picture within 500 ms, or it could not write it (its log says)"
            }
            throw VLCError.operationFailed(what: "snapshot to \(path)", reason: failure)
        }
    }

    /// Whether libvlc could write a snapshot to `path`: as `vout_snapshot_SaveImage` decides,
    /// a file named inside `path` when it is a directory, else `path` itself.
    private static func snapshotPathIsWritable(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        let files = FileManager.default
        if files.fileExists(atPath: path, isDirectory: &isDirectory) {
            return files.isWritableFile(atPath: path)
        }
        return files.isWritableFile(atPath: (path as NSString).deletingLastPathComponent)
    }

    // MARK: Audio output

    /// The devices of the current audio output (empty before the output exists, that is
    /// before the first audio of a playback).
    public func audioOutputDevices() async -> [AudioOutputDevice] {
        await control.performAndWait { player in
            player.audioOutputDevices.map { AudioOutputDevice(id: $0.id, description: $0.description) }
        }
    }

    /// The identifier of the current audio output device, `nil` when libvlc cannot tell.
    public func audioOutputDevice() async -> String? {
        await control.performAndWait { $0.audioOutputDevice }
    }

    /// Switches the current audio output to device `id` (queued); libvlc sends `audioDevice`.
    public func setAudioOutputDevice(_ id: String) {
        perform { $0.setAudioOutputDevice(id) }
    }

    /// Sets the volume (0 to 200 percent) and returns whether libvlc took it (`false` without
    /// an audio output, or for a value out of range). `adummy` takes it and reports nothing:
    /// `AudioVolume`, `Muted` and `Unmuted` come only from an output with a volume (ALSA's
    /// `null` device works headless: `--aout=alsa --alsa-audio-device=null`).
    @discardableResult
    public func setVolumeAndWait(_ percent: Int) async -> Bool {
        await control.performAndWait(setVolumeCall(percent))
    }

    /// Mutes or unmutes, returning once libvlc has carried it out.
    public func setMutedAndWait(_ muted: Bool) async {
        await control.performAndWait(setMutedCall(muted))
    }

    /// The volume's `volume = …` and `setVolumeAndWait` (whether libvlc took it).
    func setVolumeCall(_ percent: Int) -> PlayerCall<Bool> {
        PlayerCall { $0.setVolume(Int32(clamping: percent)) == 0 }
    }

    /// `isMuted = …` and `setMutedAndWait`.
    func setMutedCall(_ muted: Bool) -> PlayerCall<Void> {
        PlayerCall { $0.setMute(muted) }
    }
}

/// What one `libvlc_video_take_snapshot` did.
private enum SnapshotAttempt: Sendable {
    /// libvlc sent `SnapshotTaken` for this file from inside the call.
    case written(String)
    /// libvlc found no video output (the call returned -1), with its message.
    case noVideoOutput(String)
    /// The call returned 0 and sent nothing: no file was written.
    case nothingWritten
}
