/* The atomic media reference count: see CLibVLCFixes.h. */
#define _GNU_SOURCE
#include "CLibVLCFixes.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* offsetof(libvlc_media_t, i_refcount) in libvlc 3.0 on LP64 (lib/media_internal.h): the
 * event manager (object pointer 8, listener array 16, pthread mutex 40), then the input item
 * pointer 8. Debian's 3.0.24 reads and writes 0x48(%rdi) in both functions. */
enum { REFCOUNT_OFFSET = 72, SCRATCH_INTS = 64 };

#if __ELF_NATIVE_CLASS == 64
#define RELOCATION_SYMBOL(info) ELF64_R_SYM(info)
#else
#define RELOCATION_SYMBOL(info) ELF32_R_SYM(info)
#endif

typedef void (*media_fn)(libvlc_media_t *);

static media_fn original_retain; /* libvlc's own functions */
static media_fn original_release;
static mel_media_refcount_mode mode = MEL_MEDIA_REFCOUNT_LIBVLC;
static bool layout_matched; /* libvlc's functions keep the count at REFCOUNT_OFFSET */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The replacements' bodies, hidden: taking their address never goes through the GOT, so it is
 * this object's own function even when MediaEvents is a shared library and the global lookup
 * resolves `libvlc_media_retain` to libvlc's (taking the exported name's address would then
 * answer libvlc's, which is how a shared MediaEvents used to find "no libvlc" and abort). The
 * exported names below are aliases of these. */
__attribute__((visibility("hidden"))) void mel_atomic_media_retain(libvlc_media_t *media);
__attribute__((visibility("hidden"))) void mel_atomic_media_release(libvlc_media_t *media);

/* libvlc's own definition of `name`: looked up in libvlc.so.5 itself first (dlsym on its handle
 * searches it before its dependencies), then after this object. NULL when nothing but this
 * object's replacement can be found; never an abort. */
static media_fn lookup_original(void *libvlc, const char *name, media_fn own) {
    media_fn found = libvlc != NULL ? (media_fn)dlsym(libvlc, name) : NULL;
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

/* A dynamic-section pointer: glibc relocates most of them in place when it loads an object, some
 * loaders do not; an unrelocated one is an offset below the load address. */
static uintptr_t dynamic_address(const struct link_map *map, ElfW(Addr) value) {
    return value < map->l_addr ? (uintptr_t)map->l_addr + value : (uintptr_t)value;
}

/* Looks through one relocation table of `map` for the entries that name `name`, and compares the
 * address each has been bound to with `target`. */
static void scan_relocations(const struct link_map *map, const ElfW(Sym) *symbols, const char *strings,
                             uintptr_t table, size_t size, bool rela, const char *name, const void *target,
                             int *references, int *elsewhere, int *unresolved, uintptr_t low, uintptr_t high) {
    size_t entry = rela ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel));
    for (size_t offset = 0; offset + entry <= size; offset += entry) {
        const ElfW(Rel) *rel = (const ElfW(Rel) *)(table + offset);
        size_t symbol = RELOCATION_SYMBOL(rel->r_info);
        if (symbol == 0 || strcmp(strings + symbols[symbol].st_name, name) != 0) continue;
        uintptr_t bound = *(const uintptr_t *)((uintptr_t)map->l_addr + rel->r_offset);
        *references += 1;
        if ((const void *)bound == target) continue;
        /* A lazily bound call not made yet still points into the object's own PLT. */
        if (bound >= low && bound < high) {
            *unresolved += 1;
        } else {
            *elsewhere += 1;
        }
    }
}

int mel_object_calls_bound_to(const void *inside, const char *name, const void *target) {
    Dl_info info;
    struct link_map *map = NULL;
    if (dladdr1(inside, &info, (void **)&map, RTLD_DL_LINKMAP) == 0 || map == NULL) return -1;
    const ElfW(Sym) *symbols = NULL;
    const char *strings = NULL;
    uintptr_t plt = 0, rel = 0;
    size_t plt_size = 0, rel_size = 0;
    bool plt_rela = true, rela = true;
    for (const ElfW(Dyn) *dyn = map->l_ld; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: symbols = (const ElfW(Sym) *)dynamic_address(map, dyn->d_un.d_ptr); break;
        case DT_STRTAB: strings = (const char *)dynamic_address(map, dyn->d_un.d_ptr); break;
        case DT_JMPREL: plt = dynamic_address(map, dyn->d_un.d_ptr); break;
        case DT_PLTRELSZ: plt_size = dyn->d_un.d_val; break;
        case DT_PLTREL: plt_rela = dyn->d_un.d_val == DT_RELA; break;
        case DT_RELA: rel = dynamic_address(map, dyn->d_un.d_ptr); rela = true; break;
        case DT_RELASZ: rel_size = dyn->d_un.d_val; break;
        case DT_REL: rel = dynamic_address(map, dyn->d_un.d_ptr); rela = false; break;
        case DT_RELSZ: rel_size = dyn->d_un.d_val; break;
        default: break;
        }
    }
    if (symbols == NULL || strings == NULL) return -1;
    /* The object's own code, where an unresolved lazy slot points (its PLT). */
    uintptr_t low = (uintptr_t)-1, high = 0;
    if (info.dli_fbase != NULL) {
        const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)info.dli_fbase;
        const ElfW(Phdr) *segments = (const ElfW(Phdr) *)((const char *)info.dli_fbase + header->e_phoff);
        for (int i = 0; i < header->e_phnum; i++) {
            if (segments[i].p_type != PT_LOAD || !(segments[i].p_flags & PF_X)) continue;
            uintptr_t start = (uintptr_t)map->l_addr + segments[i].p_vaddr;
            if (start < low) low = start;
            if (start + segments[i].p_memsz > high) high = start + segments[i].p_memsz;
        }
    }
    int references = 0, elsewhere = 0, unresolved = 0;
    if (plt != 0) {
        scan_relocations(map, symbols, strings, plt, plt_size, plt_rela, name, target, &references, &elsewhere,
                         &unresolved, low, high);
    }
    if (rel != 0) {
        scan_relocations(map, symbols, strings, rel, rel_size, rela, name, target, &references, &elsewhere,
                         &unresolved, low, high);
    }
    /* No reference at all: the object calls its own definition directly (-Bsymbolic-functions, a
     * protected symbol) or never calls it; either way nothing it does reaches `target`. */
    if (references == 0 || elsewhere > 0) return 0;
    return unresolved > 0 ? -1 : 1;
}

/* Whether libvlc's own calls of `name` reach `own`: the global lookup (what a program's and a
 * lazily bound libvlc's calls resolve to) must find it, and libvlc's relocations for it, where
 * already bound, must hold it. A libvlc built with -Bsymbolic-functions has no such relocation
 * and keeps calling its own function whatever the lookup finds. */
static bool libvlc_calls_bound(media_fn original, const char *name, media_fn own) {
    if ((media_fn)dlsym(RTLD_DEFAULT, name) != own) return false;
    return mel_object_calls_bound_to((const void *)original, name, (const void *)own) != 0;
}

static void prepare(void) {
    void *libvlc = dlopen("libvlc.so.5", RTLD_LAZY | RTLD_NOLOAD);
    original_retain = lookup_original(libvlc, "libvlc_media_retain", mel_atomic_media_retain);
    original_release = lookup_original(libvlc, "libvlc_media_release", mel_atomic_media_release);
    if (libvlc != NULL) dlclose(libvlc);
    if (original_retain == NULL || original_release == NULL) {
        /* No libvlc in the process but this object's replacements: nothing can hold a media. */
        mode = MEL_MEDIA_REFCOUNT_UNBOUND;
        return;
    }
    layout_matched = mel_media_refcount_layout_matches(original_retain, original_release);
    const char *setting = getenv("MEDIAEVENTS_ATOMIC_MEDIA_REFCOUNT");
    if (!layout_matched) {
        mode = MEL_MEDIA_REFCOUNT_LIBVLC;
    } else if (setting != NULL && strcmp(setting, "0") == 0) {
        mode = MEL_MEDIA_REFCOUNT_DISABLED;
    } else if (!libvlc_calls_bound(original_retain, "libvlc_media_retain", mel_atomic_media_retain)
               || !libvlc_calls_bound(original_release, "libvlc_media_release", mel_atomic_media_release)) {
        /* MediaEvents loaded after libvlc (a plugin, a dynamic product opened later): libvlc and
         * the program keep libvlc's functions, and so does this object, so that every change of
         * a count is made the same way. */
        mode = MEL_MEDIA_REFCOUNT_UNBOUND;
    } else {
        mode = MEL_MEDIA_REFCOUNT_ATOMIC;
    }
}

mel_media_refcount_mode mel_media_refcount_prepare(void) {
    pthread_once(&once, prepare);
    return mode;
}

const void *mel_media_refcount_replacement(int release) {
    return release ? (const void *)mel_atomic_media_release : (const void *)mel_atomic_media_retain;
}

static _Atomic int *count_of(libvlc_media_t *media) {
    return (_Atomic int *)((char *)media + REFCOUNT_OFFSET);
}

int mel_media_refcount_peek(libvlc_media_t *media) {
    mel_media_refcount_prepare();
    if (!layout_matched) return -1;
    return atomic_load_explicit(count_of(media), memory_order_relaxed);
}

void mel_atomic_media_retain(libvlc_media_t *media) {
    if (mel_media_refcount_prepare() != MEL_MEDIA_REFCOUNT_ATOMIC) {
        if (original_retain != NULL) original_retain(media);
        return;
    }
    atomic_fetch_add_explicit(count_of(media), 1, memory_order_relaxed);
}

void mel_atomic_media_release(libvlc_media_t *media) {
    if (media == NULL) return;
    if (mel_media_refcount_prepare() != MEL_MEDIA_REFCOUNT_ATOMIC) {
        if (original_release != NULL) original_release(media);
        return;
    }
    /* Acquire and release: whatever any thread did with the media before its release
     * happens before the free. */
    if (atomic_fetch_sub_explicit(count_of(media), 1, memory_order_acq_rel) > 1) return;
    /* The last reference: libvlc's release takes it from 1 to 0 and frees the media. */
    atomic_store_explicit(count_of(media), 1, memory_order_relaxed);
    original_release(media);
}

void libvlc_media_retain(libvlc_media_t *media) __attribute__((alias("mel_atomic_media_retain")));
void libvlc_media_release(libvlc_media_t *media) __attribute__((alias("mel_atomic_media_release")));
