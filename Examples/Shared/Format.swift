/// Numbers as the programs print them: short, without float noise.
public enum Format {
    /// `30` for 30.0, `2.5` for 2.5: the shortest decimal that reads back as `value`.
    public static func seconds(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
