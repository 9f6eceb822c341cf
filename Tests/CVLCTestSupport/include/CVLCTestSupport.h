/* CVLCTestSupport: a raw C libvlc event listener used as ground truth in tests.
 *
 * A rawrec_t records every event libvlc delivers to the callbacks it attached, in delivery
 * order, under a pthread mutex. Payloads are copied inside the callback (strings are strdup'd),
 * so records stay valid after the callback returns.
 *
 * Payload mapping (fields not listed are 0 / 0.0 / NULL):
 *   MediaMetaChanged          i1 = meta_type
 *   MediaSubItemAdded         i1 = (new_child != NULL)
 *   MediaDurationChanged      i1 = new_duration
 *   MediaParsedChanged        i1 = new_status
 *   MediaFreed                i1 = (md != NULL)
 *   MediaStateChanged         i1 = new_state
 *   MediaSubItemTreeAdded     i1 = (item != NULL)
 *   PlayerMediaChanged        i1 = (new_media != NULL)
 *   PlayerBuffering           f  = new_cache
 *   PlayerTimeChanged         i1 = new_time
 *   PlayerPositionChanged     f  = new_position
 *   PlayerSeekable/Pausable/ScrambledChanged  i1 = new value
 *   PlayerTitleChanged        i1 = new_title
 *   PlayerChapterChanged      i1 = new_chapter
 *   PlayerSnapshotTaken       s  = psz_filename
 *   PlayerLengthChanged       i1 = new_length
 *   PlayerVout                i1 = new_count
 *   PlayerESAdded/Deleted/Selected  i1 = i_type, i2 = i_id
 *   PlayerAudioVolume         f  = volume
 *   PlayerAudioDevice         s  = device
 *   MediaList(View)ItemAdded/WillAddItem/ItemDeleted/WillDeleteItem  i1 = (item != NULL), i2 = index
 *   MediaListPlayerNextItemSet  i1 = (item != NULL)
 *   RendererDiscovererItemAdded/Deleted  i1 = (item != NULL)
 *   Vlm*                      s  = psz_media_name
 */
#ifndef CVLCTESTSUPPORT_H
#define CVLCTESTSUPPORT_H

#include <stdint.h>
#include <vlc/vlc.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rawrec rawrec_t;

typedef struct rawrec_event {
    int seq;          /* 0, 1, 2, ... in delivery order (across all sources of this recorder) */
    int source_tag;   /* the tag given to rawrec_attach */
    int type;         /* libvlc_event_e */
    int64_t i1;
    int64_t i2;
    double f;
    const char *s;    /* NULL or a copy owned by the recorder (valid until clear/destroy) */
} rawrec_event_t;

/* Returns NULL on allocation failure. */
rawrec_t *rawrec_create(void);
/* Detaches everything still attached, then frees all records. */
void rawrec_destroy(rawrec_t *rec);

/* Attaches one callback per type to em. Returns the number of types attached (== ntypes on
 * success); on failure, the attachments made by this call are undone and -1 is returned. */
int rawrec_attach(rawrec_t *rec, libvlc_event_manager_t *em, int source_tag,
                  const int *types, int ntypes);
/* Detaches every attachment exactly once. Safe to call repeatedly. Must not be called after
 * the event manager's object was released. */
void rawrec_detach_all(rawrec_t *rec);

int rawrec_count(rawrec_t *rec);
/* Copies record `index` into *out. Returns 0 on success, -1 if index is out of range. */
int rawrec_get(rawrec_t *rec, int index, rawrec_event_t *out);
/* Drops all records (invalidates previously returned `s` pointers); seq restarts at 0. */
void rawrec_clear(rawrec_t *rec);

/* libvlc_event_type_name(type), "Unknown Event" for unknown types. */
const char *rawrec_type_name(int type);

/* Stand-ins for libvlc's media retain and release, for the layout check of CLibVLCFixes: as
 * 3.0's (the int at byte 72), with the count elsewhere (byte 80), and a retain that also
 * changes another word. They touch only the buffer they are given. */
void fakevlc_retain_3_0(libvlc_media_t *media);
void fakevlc_release_3_0(libvlc_media_t *media);
void fakevlc_retain_elsewhere(libvlc_media_t *media);
void fakevlc_release_elsewhere(libvlc_media_t *media);
void fakevlc_retain_marking(libvlc_media_t *media);

/* The calling thread's kernel id (gettid): unlike pthread_self(), the stack address glibc
 * gives to the next thread once one is joined, it is not reused soon after a thread ends. */
unsigned long testsupport_thread_id(void);

#ifdef __cplusplus
}
#endif

#endif
