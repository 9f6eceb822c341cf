/* See include/CVLCTestSupport.h. */
#define _POSIX_C_SOURCE 200809L   /* strdup */
#include "CVLCTestSupport.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct rawrec_attachment {
    rawrec_t *rec;
    libvlc_event_manager_t *em;
    int type;
    int source_tag;
    struct rawrec_attachment *next;
} rawrec_attachment_t;

typedef struct rawrec_record {
    int source_tag;
    int type;
    int64_t i1;
    int64_t i2;
    double f;
    char *s;
} rawrec_record_t;

struct rawrec {
    pthread_mutex_t lock;          /* guards records, count, capacity */
    rawrec_record_t *records;
    int count;
    int capacity;
    pthread_mutex_t attach_lock;   /* guards attachments (never held while calling libvlc) */
    rawrec_attachment_t *attachments;
};

rawrec_t *rawrec_create(void)
{
    rawrec_t *rec = calloc(1, sizeof(*rec));
    if (rec == NULL)
        return NULL;
    pthread_mutex_init(&rec->lock, NULL);
    pthread_mutex_init(&rec->attach_lock, NULL);
    return rec;
}

static void free_records(rawrec_t *rec)
{
    for (int i = 0; i < rec->count; i++)
        free(rec->records[i].s);
    free(rec->records);
    rec->records = NULL;
    rec->count = 0;
    rec->capacity = 0;
}

void rawrec_destroy(rawrec_t *rec)
{
    if (rec == NULL)
        return;
    rawrec_detach_all(rec);
    pthread_mutex_lock(&rec->lock);
    free_records(rec);
    pthread_mutex_unlock(&rec->lock);
    pthread_mutex_destroy(&rec->lock);
    pthread_mutex_destroy(&rec->attach_lock);
    free(rec);
}

static char *copy_string(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

static void fill_payload(const libvlc_event_t *ev, rawrec_record_t *r)
{
    switch (ev->type) {
    case libvlc_MediaMetaChanged:
        r->i1 = (int64_t)ev->u.media_meta_changed.meta_type; break;
    case libvlc_MediaSubItemAdded:
        r->i1 = ev->u.media_subitem_added.new_child != NULL; break;
    case libvlc_MediaDurationChanged:
        r->i1 = ev->u.media_duration_changed.new_duration; break;
    case libvlc_MediaParsedChanged:
        r->i1 = ev->u.media_parsed_changed.new_status; break;
    case libvlc_MediaFreed:
        r->i1 = ev->u.media_freed.md != NULL; break;
    case libvlc_MediaStateChanged:
        r->i1 = ev->u.media_state_changed.new_state; break;
    case libvlc_MediaSubItemTreeAdded:
        r->i1 = ev->u.media_subitemtree_added.item != NULL; break;

    case libvlc_MediaPlayerMediaChanged:
        r->i1 = ev->u.media_player_media_changed.new_media != NULL; break;
    case libvlc_MediaPlayerBuffering:
        r->f = ev->u.media_player_buffering.new_cache; break;
    case libvlc_MediaPlayerTimeChanged:
        r->i1 = ev->u.media_player_time_changed.new_time; break;
    case libvlc_MediaPlayerPositionChanged:
        r->f = ev->u.media_player_position_changed.new_position; break;
    case libvlc_MediaPlayerSeekableChanged:
        r->i1 = ev->u.media_player_seekable_changed.new_seekable; break;
    case libvlc_MediaPlayerPausableChanged:
        r->i1 = ev->u.media_player_pausable_changed.new_pausable; break;
    case libvlc_MediaPlayerScrambledChanged:
        r->i1 = ev->u.media_player_scrambled_changed.new_scrambled; break;
    case libvlc_MediaPlayerTitleChanged:
        r->i1 = ev->u.media_player_title_changed.new_title; break;
    case libvlc_MediaPlayerChapterChanged:
        r->i1 = ev->u.media_player_chapter_changed.new_chapter; break;
    case libvlc_MediaPlayerSnapshotTaken:
        r->s = copy_string(ev->u.media_player_snapshot_taken.psz_filename); break;
    case libvlc_MediaPlayerLengthChanged:
        r->i1 = ev->u.media_player_length_changed.new_length; break;
    case libvlc_MediaPlayerVout:
        r->i1 = ev->u.media_player_vout.new_count; break;
    case libvlc_MediaPlayerESAdded:
    case libvlc_MediaPlayerESDeleted:
    case libvlc_MediaPlayerESSelected:
        r->i1 = (int64_t)ev->u.media_player_es_changed.i_type;
        r->i2 = ev->u.media_player_es_changed.i_id;
        break;
    case libvlc_MediaPlayerAudioVolume:
        r->f = ev->u.media_player_audio_volume.volume; break;
    case libvlc_MediaPlayerAudioDevice:
        r->s = copy_string(ev->u.media_player_audio_device.device); break;

    /* All four list item payloads (and the view variants) share one layout. */
    case libvlc_MediaListItemAdded:
    case libvlc_MediaListWillAddItem:
    case libvlc_MediaListItemDeleted:
    case libvlc_MediaListWillDeleteItem:
    case libvlc_MediaListViewItemAdded:
    case libvlc_MediaListViewWillAddItem:
    case libvlc_MediaListViewItemDeleted:
    case libvlc_MediaListViewWillDeleteItem:
        r->i1 = ev->u.media_list_item_added.item != NULL;
        r->i2 = ev->u.media_list_item_added.index;
        break;

    case libvlc_MediaListPlayerNextItemSet:
        r->i1 = ev->u.media_list_player_next_item_set.item != NULL; break;

    case libvlc_RendererDiscovererItemAdded:
    case libvlc_RendererDiscovererItemDeleted:
        r->i1 = ev->u.renderer_discoverer_item_added.item != NULL; break;

    case libvlc_VlmMediaAdded:
    case libvlc_VlmMediaRemoved:
    case libvlc_VlmMediaChanged:
    case libvlc_VlmMediaInstanceStarted:
    case libvlc_VlmMediaInstanceStopped:
    case libvlc_VlmMediaInstanceStatusInit:
    case libvlc_VlmMediaInstanceStatusOpening:
    case libvlc_VlmMediaInstanceStatusPlaying:
    case libvlc_VlmMediaInstanceStatusPause:
    case libvlc_VlmMediaInstanceStatusEnd:
    case libvlc_VlmMediaInstanceStatusError:
        r->s = copy_string(ev->u.vlm_media_event.psz_media_name); break;

    default:
        break;
    }
}

static void rawrec_callback(const struct libvlc_event_t *ev, void *opaque)
{
    rawrec_attachment_t *att = opaque;
    rawrec_t *rec = att->rec;
    rawrec_record_t r;
    memset(&r, 0, sizeof(r));
    r.source_tag = att->source_tag;
    r.type = ev->type;
    fill_payload(ev, &r);   /* copies strings before the callback returns */

    pthread_mutex_lock(&rec->lock);
    if (rec->count == rec->capacity) {
        int ncap = rec->capacity ? rec->capacity * 2 : 64;
        rawrec_record_t *n = realloc(rec->records, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            pthread_mutex_unlock(&rec->lock);
            free(r.s);
            abort();   /* a test fixture that silently drops events would lie */
        }
        rec->records = n;
        rec->capacity = ncap;
    }
    rec->records[rec->count++] = r;
    pthread_mutex_unlock(&rec->lock);
}

/* Detaches and frees a chain of attachments (already unlinked from rec). */
static void detach_chain(rawrec_attachment_t *att)
{
    while (att != NULL) {
        rawrec_attachment_t *next = att->next;
        libvlc_event_detach(att->em, att->type, rawrec_callback, att);
        free(att);
        att = next;
    }
}

int rawrec_attach(rawrec_t *rec, libvlc_event_manager_t *em, int source_tag,
                  const int *types, int ntypes)
{
    if (rec == NULL || em == NULL || (types == NULL && ntypes > 0) || ntypes < 0)
        return -1;
    rawrec_attachment_t *mine = NULL;   /* attachments made by this call */
    for (int i = 0; i < ntypes; i++) {
        rawrec_attachment_t *att = calloc(1, sizeof(*att));
        if (att == NULL) {
            detach_chain(mine);
            return -1;
        }
        att->rec = rec;
        att->em = em;
        att->type = types[i];
        att->source_tag = source_tag;
        if (libvlc_event_attach(em, types[i], rawrec_callback, att) != 0) {
            free(att);
            detach_chain(mine);
            return -1;
        }
        att->next = mine;
        mine = att;
    }
    if (mine != NULL) {
        rawrec_attachment_t *tail = mine;
        while (tail->next != NULL)
            tail = tail->next;
        pthread_mutex_lock(&rec->attach_lock);
        tail->next = rec->attachments;
        rec->attachments = mine;
        pthread_mutex_unlock(&rec->attach_lock);
    }
    return ntypes;
}

void rawrec_detach_all(rawrec_t *rec)
{
    if (rec == NULL)
        return;
    pthread_mutex_lock(&rec->attach_lock);
    rawrec_attachment_t *all = rec->attachments;
    rec->attachments = NULL;
    pthread_mutex_unlock(&rec->attach_lock);
    detach_chain(all);   /* outside our locks: detach may wait for a running callback */
}

int rawrec_count(rawrec_t *rec)
{
    if (rec == NULL)
        return 0;
    pthread_mutex_lock(&rec->lock);
    int n = rec->count;
    pthread_mutex_unlock(&rec->lock);
    return n;
}

int rawrec_get(rawrec_t *rec, int index, rawrec_event_t *out)
{
    if (rec == NULL || out == NULL)
        return -1;
    int rc = -1;
    pthread_mutex_lock(&rec->lock);
    if (index >= 0 && index < rec->count) {
        const rawrec_record_t *r = &rec->records[index];
        out->seq = index;
        out->source_tag = r->source_tag;
        out->type = r->type;
        out->i1 = r->i1;
        out->i2 = r->i2;
        out->f = r->f;
        out->s = r->s;
        rc = 0;
    }
    pthread_mutex_unlock(&rec->lock);
    return rc;
}

void rawrec_clear(rawrec_t *rec)
{
    if (rec == NULL)
        return;
    pthread_mutex_lock(&rec->lock);
    free_records(rec);
    pthread_mutex_unlock(&rec->lock);
}

const char *rawrec_type_name(int type)
{
    return libvlc_event_type_name(type);
}

/* Stand-ins for the layout check (CVLCTestSupport.h). */
static int *count_at(libvlc_media_t *media, int byte) { return (int *)((char *)media + byte); }

void fakevlc_retain_3_0(libvlc_media_t *media) { *count_at(media, 72) += 1; }

void fakevlc_release_3_0(libvlc_media_t *media) {
    if (--*count_at(media, 72) > 0) return;
}

void fakevlc_retain_elsewhere(libvlc_media_t *media) { *count_at(media, 80) += 1; }

void fakevlc_release_elsewhere(libvlc_media_t *media) {
    if (--*count_at(media, 80) > 0) return;
}

void fakevlc_retain_marking(libvlc_media_t *media) {
    *count_at(media, 24) = 1; /* a flag of some other field */
    *count_at(media, 72) += 1;
}
