/* The atomic media reference count: see CLibVLCFixes.h. */
#define _GNU_SOURCE
#include "CLibVLCFixes.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* offsetof(libvlc_media_t, i_refcount) in libvlc 3.0 on LP64 (lib/media_internal.h): the
 * event manager (object pointer 8, listener array 16, pthread mutex 40), then the input item
 * pointer 8. Debian's 3.0.24 reads and writes 0x48(%rdi) in both functions. */
enum { REFCOUNT_OFFSET = 72, SCRATCH_INTS = 64 };

typedef void (*media_fn)(libvlc_media_t *);

static media_fn original_retain; /* libvlc's own functions */
static media_fn original_release;
static mel_media_refcount_mode mode = MEL_MEDIA_REFCOUNT_LIBVLC;
static bool layout_matched; /* libvlc's functions keep the count at REFCOUNT_OFFSET */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static media_fn lookup(void *handle, const char *name, media_fn own) {
    media_fn found = handle != NULL ? (media_fn)dlsym(handle, name) : NULL;
    if (found == NULL || found == own) found = (media_fn)dlsym(RTLD_NEXT, name);
    return found == own ? NULL : found;
}

/* Whether retain and release keep the count where libvlc 3.0 does, tried on a scratch buffer
 * that is no media: retain on zeros must leave 1 in the int at REFCOUNT_OFFSET and nothing else
 * changed; release on zeros with 5 there must leave 4 and nothing else changed (a count still
 * above zero returns before anything is freed). Zeros elsewhere, so that a mutex they might
 * take there is an unlocked one. What else they do does not matter once the count's place is
 * known: every caller then goes through the atomic functions. */
int mel_media_refcount_layout_matches(void (*retain)(libvlc_media_t *), void (*release)(libvlc_media_t *)) {
    _Alignas(64) int scratch[SCRATCH_INTS];
    const int slot = REFCOUNT_OFFSET / (int)sizeof(int);
    memset(scratch, 0, sizeof scratch);
    retain((libvlc_media_t *)scratch);
    for (int i = 0; i < SCRATCH_INTS; i++) {
        if (scratch[i] != (i == slot ? 1 : 0)) return 0;
    }
    memset(scratch, 0, sizeof scratch);
    scratch[slot] = 5;
    release((libvlc_media_t *)scratch);
    for (int i = 0; i < SCRATCH_INTS; i++) {
        if (scratch[i] != (i == slot ? 4 : 0)) return 0;
    }
    return 1;
}

static void prepare(void) {
    void *handle = dlopen("libvlc.so.5", RTLD_LAZY | RTLD_NOLOAD);
    original_retain = lookup(handle, "libvlc_media_retain", libvlc_media_retain);
    original_release = lookup(handle, "libvlc_media_release", libvlc_media_release);
    if (handle != NULL) dlclose(handle);
    if (original_retain == NULL || original_release == NULL) {
        fprintf(stderr, "MediaEvents: libvlc's libvlc_media_retain/release not found (%s)\n", dlerror());
        abort();
    }
    layout_matched = mel_media_refcount_layout_matches(original_retain, original_release);
    const char *setting = getenv("MEDIAEVENTS_ATOMIC_MEDIA_REFCOUNT");
    if (!layout_matched) {
        mode = MEL_MEDIA_REFCOUNT_LIBVLC;
    } else if (setting != NULL && strcmp(setting, "0") == 0) {
        mode = MEL_MEDIA_REFCOUNT_DISABLED;
    } else {
        mode = MEL_MEDIA_REFCOUNT_ATOMIC;
    }
}

mel_media_refcount_mode mel_media_refcount_prepare(void) {
    pthread_once(&once, prepare);
    return mode;
}

static _Atomic int *count_of(libvlc_media_t *media) {
    return (_Atomic int *)((char *)media + REFCOUNT_OFFSET);
}

int mel_media_refcount_peek(libvlc_media_t *media) {
    mel_media_refcount_prepare();
    if (!layout_matched) return -1;
    return atomic_load_explicit(count_of(media), memory_order_relaxed);
}

void libvlc_media_retain(libvlc_media_t *media) {
    if (mel_media_refcount_prepare() != MEL_MEDIA_REFCOUNT_ATOMIC) {
        original_retain(media);
        return;
    }
    atomic_fetch_add_explicit(count_of(media), 1, memory_order_relaxed);
}

void libvlc_media_release(libvlc_media_t *media) {
    if (media == NULL) return;
    if (mel_media_refcount_prepare() != MEL_MEDIA_REFCOUNT_ATOMIC) {
        original_release(media);
        return;
    }
    /* Acquire and release: whatever any thread did with the media before its release
     * happens before the free. */
    if (atomic_fetch_sub_explicit(count_of(media), 1, memory_order_acq_rel) > 1) return;
    /* The last reference: libvlc's release takes it from 1 to 0 and frees the media. */
    atomic_store_explicit(count_of(media), 1, memory_order_relaxed);
    original_release(media);
}
