// A value's whole structure as text, read with `Mirror` rather than with MediaEvents' recording
// codec, so that a test comparing an event with its replay does not trust the code it tests.

@testable import MediaEvents

/// Every case, field and value of `value`, recursively: an enum's case (by its description),
/// a struct's or tuple's fields, a float by its bits, a `VLCMedia` by its MRL, a
/// `VLCRendererItem` by its fields. Two values with the same structure are the same event.
func structure(of value: Any) -> String {
    switch value {
    case let media as VLCMedia: return "VLCMedia(\(media.mrl))"
    case let item as VLCRendererItem:
        return "VLCRendererItem(\(item.name),\(item.type),\(item.iconURI ?? "nil"),\(item.canAudio),\(item.canVideo))"
    case let number as Float: return "Float(\(number.bitPattern))"
    case let number as Double: return "Double(\(number.bitPattern))"
    default:
        let children = Mirror(reflecting: value).children.map { "\($0.label ?? "_"):\(structure(of: $0.value))" }
        return "\(type(of: value))<\(String(describing: value))>{\(children.joined(separator: ","))}"
    }
}
