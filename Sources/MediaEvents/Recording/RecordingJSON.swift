/// The JSON of a recording's lines: one object per line, fields written in a fixed order, and
/// read back keeping their order and every number's text (so a `Float` reads back exactly).
///
/// Foundation's `JSONSerialization` loses both: it returns an unordered dictionary, and numbers
/// as `Double`, from which a `Float` field's text cannot always be recovered.
enum RecordingJSON {
    /// One object as a single line (no newline).
    static func line(_ fields: [RecordedField]) -> String {
        var out = ""
        append(.object(fields), to: &out)
        return out
    }

    static func append(_ value: RecordedValue, to out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): appendString(text, to: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                append(value, to: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (index, field) in fields.enumerated() {
                if index > 0 { out += "," }
                appendString(field.name, to: &out)
                out += ":"
                append(field.value, to: &out)
            }
            out += "}"
        }
    }

    private static func appendString(_ text: String, to out: inout String) {
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

    /// Why a line is not JSON.
    struct SyntaxError: Error {
        let message: String
        let offset: Int
    }

    /// The object on `line`; throws when the line is not exactly one JSON object.
    static func parseObject(_ line: Substring) throws -> [RecordedField] {
        var parser = Parser(bytes: Array(line.utf8))
        parser.skipSpace()
        guard case .object(let fields) = try parser.value() else {
            throw SyntaxError(message: "a line must be a JSON object", offset: 0)
        }
        parser.skipSpace()
        guard parser.atEnd else { throw SyntaxError(message: "text after the object", offset: parser.index) }
        return fields
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        /// How deep arrays and objects nest at most: deeper input is refused rather than
        /// recursing without bound.
        static let maximumDepth = 64
        var depth = 0

        var atEnd: Bool { index >= bytes.count }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        func fail(_ message: String) -> SyntaxError { SyntaxError(message: message, offset: index) }

        mutating func expect(_ literal: String, _ value: RecordedValue) throws -> RecordedValue {
            let utf8 = Array(literal.utf8)
            guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
                throw fail("expected \(literal)")
            }
            index += utf8.count
            return value
        }

        mutating func value() throws -> RecordedValue {
            skipSpace()
            guard index < bytes.count else { throw fail("unexpected end of line") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"): return try expect("null", .null)
            default: return .number(try number())
            }
        }

        mutating func nested<T>(_ body: (inout Parser) throws -> T) throws -> T {
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else { throw fail("nested more than \(Self.maximumDepth) deep") }
            return try body(&self)
        }

        mutating func object() throws -> RecordedValue {
            try nested { parser in
                parser.index += 1
                var fields: [RecordedField] = []
                parser.skipSpace()
                if parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "}") {
                    parser.index += 1
                    return .object(fields)
                }
                while true {
                    parser.skipSpace()
                    guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "\"") else {
                        throw parser.fail("expected a field name")
                    }
                    let name = try parser.string()
                    parser.skipSpace()
                    guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: ":") else {
                        throw parser.fail("expected ':'")
                    }
                    parser.index += 1
                    fields.append(RecordedField(name, try parser.value()))
                    parser.skipSpace()
                    guard parser.index < parser.bytes.count else { throw parser.fail("unterminated object") }
                    let separator = parser.bytes[parser.index]
                    parser.index += 1
                    if separator == UInt8(ascii: "}") { return .object(fields) }
                    guard separator == UInt8(ascii: ",") else { throw parser.fail("expected ',' or '}'") }
                }
            }
        }

        mutating func array() throws -> RecordedValue {
            try nested { parser in
                parser.index += 1
                var values: [RecordedValue] = []
                parser.skipSpace()
                if parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "]") {
                    parser.index += 1
                    return .array(values)
                }
                while true {
                    values.append(try parser.value())
                    parser.skipSpace()
                    guard parser.index < parser.bytes.count else { throw parser.fail("unterminated array") }
                    let separator = parser.bytes[parser.index]
                    parser.index += 1
                    if separator == UInt8(ascii: "]") { return .array(values) }
                    guard separator == UInt8(ascii: ",") else { throw parser.fail("expected ',' or ']'") }
                }
            }
        }

        /// A number's text, checked against JSON's grammar.
        mutating func number() throws -> String {
            let start = index
            func digits() -> Int {
                let from = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                    index += 1
                }
                return index - from
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw fail("expected a value") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw fail("expected digits after '.'") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { throw fail("expected digits in the exponent") }
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func string() throws -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var run = index
            func flush(_ end: Int) {
                if end > run {
                    scalars.append(contentsOf: String(decoding: bytes[run..<end], as: UTF8.self).unicodeScalars)
                }
            }
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    flush(index)
                    index += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw fail("control character in a string") }
                if byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                flush(index)
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        // A surrogate pair: the low half must follow as another \u escape.
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw fail("unpaired surrogate") }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("invalid \\u escape") }
                    scalars.append(scalar)
                default:
                    throw fail("invalid escape")
                }
                run = index
            }
            throw fail("unterminated string")
        }

        mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count,
                let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
            else { throw fail("invalid \\u escape") }
            index += 4
            return code
        }
    }
}
