import CLibVLCFixes

/// Rule 9: libvlc 3.0 counts a media's references with a plain `int` that its own threads and
/// the program change at the same moments. The C side (the CLibVLCFixes target) replaces
/// `libvlc_media_retain` and `libvlc_media_release` for the whole process with atomic ones;
/// this is the Swift side: it settles the replacement before the first libvlc instance exists,
/// on the caller's thread, and reports whether it is in force.
struct MediaReferenceCount: LibvlcWorkaround {
    static let rule = 9
    static let test = "MediaReferenceCountTests.testInputThreadsRetainsAndReleases_racingTheProgramsOwn_loseNoCount"

    /// Around a library's creation: settles the replacement first, rather than at the first
    /// retain, which may be libvlc's inside a callback.
    func around<Result>(_ call: Void, _ body: () throws -> Result) rethrows -> Result? {
        _ = mel_media_refcount_prepare()
        return try body()
    }

    /// Whether libvlc's media reference count is changed atomically in this process (see
    /// `VLCLibrary.mediaReferenceCountIsAtomic`).
    static var isAtomic: Bool { mel_media_refcount_prepare() == MEL_MEDIA_REFCOUNT_ATOMIC }
}
