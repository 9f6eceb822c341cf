import Foundation
import Glibc

/// The media file the benchmark's objects point at: a real one-second WAV, written into a
/// temporary directory this run creates (so nothing depends on a file left on the machine)
/// and removes at exit.
enum BenchmarkMedia {
    static let path: String = {
        let file = directory + "/tone.wav"
        guard FileManager.default.createFile(atPath: file, contents: wav(seconds: 1)) else {
            fatalError("MediaEventsBenchmarks: cannot write \(file)")
        }
        return file
    }()

    /// This run's own directory, removed at exit.
    private static let directory: String = {
        var template = Array((NSTemporaryDirectory() + "/MediaEventsBenchmarks-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            fatalError(
                "MediaEventsBenchmarks: cannot create a temporary directory: \(String(cString: strerror(errno)))")
        }
        atexit { try? FileManager.default.removeItem(atPath: BenchmarkMedia.directory) }
        return String(cString: made)
    }()

    /// A 16-bit mono PCM WAV of silence at 8 kHz.
    private static func wav(seconds: Int) -> Data {
        let rate = 8000, dataSize = rate * seconds * 2
        var bytes = [UInt8]()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { bytes.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { bytes.append(contentsOf: $0) } }
        bytes += Array("RIFF".utf8); u32(36 + dataSize); bytes += Array("WAVEfmt ".utf8)
        u32(16); u16(1); u16(1); u32(rate); u32(rate * 2); u16(2); u16(16)
        bytes += Array("data".utf8); u32(dataSize)
        bytes += [UInt8](repeating: 0, count: dataSize)
        return Data(bytes)
    }
}
