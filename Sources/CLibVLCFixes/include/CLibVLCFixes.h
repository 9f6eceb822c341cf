/* CLibVLCFixes: libvlc 3.0 bugs that no wrapper can work around from outside, fixed here.
 *
 * Atomic media reference count. libvlc 3.0 counts a media's references with a plain `int`:
 * `libvlc_media_retain` is `i_refcount++` and `libvlc_media_release` is `i_refcount--`, with no
 * lock and no atomic operation (lib/media.c), yet libvlc itself calls them from several threads
 * at once (the input thread retains and releases the media it plays at every state change; the
 * list player's thread, the preparser, a list's last release, and the program's own threads do
 * too). Two of those calls at the same moment lose a count: a lost release leaks the media, a
 * lost retain frees it while it is still in use (a crash inside libvlc later, for instance in
 * `vlc_event_detach` from a list's last release).
 *
 * This file defines `libvlc_media_retain` and `libvlc_media_release` itself. A program that links
 * MediaEvents exports them, so the dynamic linker binds libvlc's own calls (all of which go through
 * its PLT in Debian's build) to these as well as the program's: every retain and release of every
 * media in the process then changes the count with one atomic operation. The last release hands
 * the media back to libvlc's own `libvlc_media_release` with the count at 1, which frees it exactly
 * as before.
 *
 * The count's place is checked once, before first use, against libvlc's own functions on a
 * scratch buffer: its retain must add one to the `int` at byte 72 (after the event manager and
 * the input item pointer) and leave nothing else changed, its release must take one from the
 * same `int` and return. Then the binding: the global lookup (`dlsym(RTLD_DEFAULT, …)`) must find
 * these replacements, and libvlc's own relocations for the two names, where already bound, must
 * hold them (a libvlc built with -Bsymbolic-functions has none and keeps its own functions). If
 * the installed libvlc keeps the count anywhere else, if MediaEvents was loaded after libvlc (a
 * shared library opened later: the lookup finds libvlc's first), or when the environment sets
 * MEDIAEVENTS_ATOMIC_MEDIA_REFCOUNT=0, every call goes to libvlc's own functions unchanged. None of
 * these cases aborts.
 */
#ifndef CLIBVLCFIXES_H
#define CLIBVLCFIXES_H

#include <vlc/vlc.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How media references are counted in this process. */
typedef enum mel_media_refcount_mode {
    /** libvlc's own functions, unchanged: the layout check failed. */
    MEL_MEDIA_REFCOUNT_LIBVLC = 0,
    /** Atomic: libvlc's count is changed with atomic operations by every caller. */
    MEL_MEDIA_REFCOUNT_ATOMIC = 1,
    /** libvlc's own functions, unchanged: MEDIAEVENTS_ATOMIC_MEDIA_REFCOUNT=0. */
    MEL_MEDIA_REFCOUNT_DISABLED = 2,
    /** libvlc's own functions, unchanged: libvlc's calls are not bound to the replacements
     *  (MediaEvents loaded after libvlc, a libvlc that binds its calls to itself), or libvlc's own
     *  functions could not be found. */
    MEL_MEDIA_REFCOUNT_UNBOUND = 3,
} mel_media_refcount_mode;

/** Resolves libvlc's own functions and checks the layout, once; then answers at once. */
mel_media_refcount_mode mel_media_refcount_prepare(void);

/** The layout check, on the given functions: whether `retain` adds one to the int at byte 72 of
 *  a scratch buffer and leaves nothing else changed, and `release` takes one from it and
 *  returns. Run once on libvlc's own functions; exported so that tests can run it on others. */
int mel_media_refcount_layout_matches(void (*retain)(libvlc_media_t *), void (*release)(libvlc_media_t *));

/** The replacement of `libvlc_media_retain` (`release` 0) or `libvlc_media_release` (1), at the
 *  address the process would call if it is bound to it. */
const void *mel_media_refcount_replacement(int release);

/** Whether the calls that the loaded object containing `inside` makes to the function `name`
 *  are bound to `target`, read from that object's relocations: 1 when every one is, 0 when one
 *  is bound elsewhere or the object has none (it calls its own definition directly, or never
 *  calls it), -1 when some are not bound yet (lazy binding) or the object cannot be read. */
int mel_object_calls_bound_to(const void *inside, const char *name, const void *target);

/** The reference count of `media` as libvlc stores it, or -1 when the layout check failed.
 *  For tests: a count read while other threads retain or release is already stale. */
int mel_media_refcount_peek(libvlc_media_t *media);

#ifdef __cplusplus
}
#endif

#endif
