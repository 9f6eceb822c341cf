import Glibc

/// Numbers and times as the programs print them: short, without float noise.
public enum TextFormat {
    /// The current UTC time as ISO 8601 with milliseconds: `2026-12-01T10:40:00.123Z`.
    public static func utcTimestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var fields = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &fields)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = Int(now.tv_nsec / 1_000_000)
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(fields.tm_year + 1900)-\(two(fields.tm_mon + 1))-\(two(fields.tm_mday))T"
            + "\(two(fields.tm_hour)):\(two(fields.tm_min)):\(two(fields.tm_sec)).\(ms)Z"
    }

    /// `value` rounded to `digits` significant digits; a power of ten divides an integer, so
    /// that the result prints as its short decimal form.
    public static func significant(_ value: Double, digits: Int) -> Double {
        guard value != 0, value.isFinite else { return value }
        let exponent = digits - 1 - Int(log10(abs(value)).rounded(.down))
        var scale = 1.0
        for _ in 0..<abs(exponent) { scale *= 10 }
        return exponent >= 0 ? (value * scale).rounded() / scale : (value / scale).rounded() * scale
    }

    /// `30` for 30.0, `2.5` for 2.5: the shortest decimal that reads back as `value`.
    public static func seconds(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
