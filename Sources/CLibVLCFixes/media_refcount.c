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
static bool layout_checked; /* libvlc's functions use the count at REFCOUNT_OFFSET */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static media_fn lookup(void *handle, const char *name, media_fn own) {
    media_fn found = handle != NULL ? (media_fn)dlsym(handle, name) : NULL;
    if (found == NULL || found == own) found = (media_fn)dlsym(RTLD_NEXT, name);
    return found == own ? NULL : found;
}

/* Whether libvlc's own retain and release do exactly what 3.0's do, tried on a scratch
 * buffer that is no media: retain on zeros must set the int at REFCOUNT_OFFSET to 1 and
 * nothing else; release on a buffer of 5s must leave 4 there and change nothing else (a count
 * still above zero returns before anything else is touched). */
static bool layout_matches(void) {
    static _Alignas(64) int scratch[SCRATCH_INTS];
    const int slot = REFCOUNT_OFFSET / (int)sizeof(int);
    memset(scratch, 0, sizeof scratch);
    original_retain((libvlc_media_t *)scratch);
    for (int i = 0; i < SCRATCH_INTS; i++) {
        if (scratch[i] != (i == slot ? 1 : 0)) return false;
    }
    for (int i = 0; i < SCRATCH_INTS; i++) scratch[i] = 5;
    original_release((libvlc_media_t *)scratch);
    for (int i = 0; i < SCRATCH_INTS; i++) {
        if (scratch[i] != (i == slot ? 4 : 5)) return false;
    }
    return true;
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
    layout_checked = layout_matches();
    const char *setting = getenv("MEDIAEVENTS_ATOMIC_MEDIA_REFCOUNT");
    if (!layout_checked) {
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
    if (!layout_checked) return -1;
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
