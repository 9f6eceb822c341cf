import Foundation

/// A JSON scalar, enough for one event per line (JSON Lines).
public enum JSONValue: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null
    /// A nested object, fields in the given order.
    case object([(String, JSONValue)])
    /// An array.
    case array([JSONValue])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        lhs.encoded == rhs.encoded
    }

    /// The value as JSON text.
    public var encoded: String {
        var out = ""
        append(to: &out)
        return out
    }

    func append(to out: inout String) {
        switch self {
        case .string(let text): JSON.appendString(text, to: &out)
        case .int(let value): out += String(value)
        case .double(let value):
            // JSON has no NaN or infinity.
            out += value.isFinite ? "\(value)" : "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .null: out += "null"
        case .object(let fields): JSON.appendObject(fields, to: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.append(to: &out)
            }
            out += "]"
        }
    }
}

/// Hand-written JSON encoding: one object per line, keys in a fixed order so that the output
/// reads the same every run.
public enum JSON {
    /// One object as a single line of JSON (no newline).
    public static func line(_ fields: [(String, JSONValue)]) -> String {
        var out = ""
        appendObject(fields, to: &out)
        return out
    }

    static func appendObject(_ fields: [(String, JSONValue)], to out: inout String) {
        out += "{"
        for (index, (key, value)) in fields.enumerated() {
            if index > 0 { out += "," }
            appendString(key, to: &out)
            out += ":"
            value.append(to: &out)
        }
        out += "}"
    }

    static func appendString(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

extension JSONValue {
    /// A value of JSONSerialization's parse as a JSON value (`true`/`false` stay booleans).
    public init(parsed value: Any) {
        switch value {
        case let text as String: self = .string(text)
        case let number as NSNumber:
            // JSONSerialization gives true and false as NSNumbers of type "c".
            let type = String(cString: number.objCType)
            if type == "c" {
                self = .bool(number.boolValue)
            } else if type != "d" && type != "f", let whole = Int64(exactly: number.doubleValue) {
                self = .int(whole)
            } else {
                self = .double(number.doubleValue)
            }
        case let list as [Any]: self = .array(list.map { JSONValue(parsed: $0) })
        case let map as [String: Any]:
            self = .object(map.keys.sorted().map { ($0, JSONValue(parsed: map[$0]!)) })
        default: self = .null
        }
    }
}
