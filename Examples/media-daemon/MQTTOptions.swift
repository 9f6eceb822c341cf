import ExampleSupport
import Glibc

/// `--mqtt URL`, `--mqtt-id ID`, `--mqtt-password-file FILE`, `--mqtt-cafile FILE`: where
/// media-daemon's MQTT front end connects and under which topics it appears.
struct MQTTOptions: Sendable {
    /// The URL as given (`mqtt://host[:port]` or `mqtts://host[:port]`), checked by `endpoint()`
    /// at start: an invalid one exits 1.
    var url: String
    /// The daemon's name in its topics: `media-daemon/ID/...`.
    var id: String
    /// A file whose first line is `USER:PASSWORD` (`--mqtt-password-file`).
    var passwordFile: String?
    /// CA certificates (PEM) to verify the broker with (`--mqtt-cafile`); `mqtts://` without it
    /// uses the system's (/etc/ssl/certs).
    var cafile: String?

    /// Where to connect, read from `url`.
    struct Endpoint: Equatable {
        var host: String
        var port: Int32
        var tls: Bool
    }

    /// An `--mqtt` URL or option that cannot be used.
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// The host, port and scheme of `url`; throws with the cause when it is not a usable
    /// `mqtt://` or `mqtts://` URL.
    func endpoint() throws -> Endpoint {
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") {
            tls = false
            rest = url.dropFirst("mqtt://".count)
        } else if url.hasPrefix("mqtts://") {
            tls = true
            rest = url.dropFirst("mqtts://".count)
        } else {
            throw Invalid(description: "'\(url)' is not an mqtt:// or mqtts:// URL")
        }
        var authority = rest
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.contains("/"), !authority.contains("@"), !authority.contains("?") else {
            throw Invalid(
                description:
                    "'\(url)': only a host and a port (mqtt://host:port); the user and password come from --mqtt-password-file"
            )
        }
        var host = authority
        var port: Int32 = tls ? 8883 : 1883
        if authority.hasPrefix("[") {
            // An IPv6 address: [::1]:1883.
            guard let close = authority.firstIndex(of: "]") else { throw Invalid(description: "'\(url)': no ']'") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int32(after.dropFirst()) else {
                    throw Invalid(description: "'\(url)': the port is not a number")
                }
                port = number
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            guard let number = Int32(authority[authority.index(after: colon)...]) else {
                throw Invalid(description: "'\(url)': the port is not a number")
            }
            port = number
        }
        guard !host.isEmpty else { throw Invalid(description: "'\(url)' has no host") }
        guard (1...65535).contains(port) else { throw Invalid(description: "'\(url)': port \(port) is not 1 to 65535") }
        return Endpoint(host: String(host), port: port, tls: tls)
    }

    /// The user and password of `passwordFile`: its first line, `USER:PASSWORD`.
    func credentials() throws -> (user: String, password: String)? {
        guard let passwordFile else { return nil }
        guard let file = fopen(passwordFile, "r") else {
            throw Invalid(description: "\(passwordFile): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else {
            throw Invalid(description: "\(passwordFile): empty (one line USER:PASSWORD)")
        }
        var line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        while line.hasSuffix("\n") || line.hasSuffix("\r") { line.removeLast() }
        guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
            throw Invalid(description: "\(passwordFile): its first line is not USER:PASSWORD")
        }
        return (String(line[..<colon]), String(line[line.index(after: colon)...]))
    }

    /// `id` as a topic level: 1 to 64 bytes, none of MQTT's `/`, `+`, `#`.
    static func validated(id: String) throws -> String {
        guard !id.isEmpty, id.utf8.count <= 64, !id.contains(where: { "/+#".contains($0) }),
            !id.unicodeScalars.contains(where: { $0.value < 0x20 })
        else {
            throw UsageError("--mqtt-id needs 1 to 64 bytes without '/', '+', '#' or control characters, not '\(id)'")
        }
        return id
    }

    /// The host's name: the default `--mqtt-id`.
    static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "media-daemon" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (try? validated(id: name)) ?? "media-daemon"
    }
}
