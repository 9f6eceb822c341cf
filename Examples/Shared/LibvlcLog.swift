import MediaEvents

extension PlaybackEnd {
    /// libvlc's own words for why the input ended: the texts of the error messages logged
    /// for it, joined with "; "; `nil` when none could be associated with it.
    public var causeText: String? {
        cause.map { $0.errors.map(\.text).joined(separator: "; ") }
    }
}
