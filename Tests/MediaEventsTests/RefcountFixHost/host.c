/* Loads CLibVLCFixes' object (dlopen after libvlc, globally or locally, or linked before
 * libvlc), prepares it, and counts one media's references through libvlc's own retain (a list
 * adding the media) and through the object's exported retain. Built and run by
 * MediaReferenceCountTests (RefcountFixBuild); not part of any target. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <vlc/vlc.h>

int main(int argc, char **argv) {
    void *fixes = RTLD_DEFAULT;
#ifndef LINKED
    int flags = RTLD_NOW | (strcmp(argv[1], "global") == 0 ? RTLD_GLOBAL : RTLD_LOCAL);
    fixes = dlopen(argv[2], flags);
    if (fixes == NULL) { printf("dlopen failed: %s\n", dlerror()); return 2; }
#endif
    int (*prepare)(void) = (int (*)(void))dlsym(fixes, "mel_media_refcount_prepare");
    int (*peek)(libvlc_media_t *) = (int (*)(libvlc_media_t *))dlsym(fixes, "mel_media_refcount_peek");
    int (*bound)(const void *, const char *, const void *) =
        (int (*)(const void *, const char *, const void *))dlsym(fixes, "mel_object_calls_bound_to");
    const void *(*replacement)(int) = (const void *(*)(int))dlsym(fixes, "mel_media_refcount_replacement");
    void (*retain)(libvlc_media_t *) = (void (*)(libvlc_media_t *))dlsym(fixes, "libvlc_media_retain");
    void (*release)(libvlc_media_t *) = (void (*)(libvlc_media_t *))dlsym(fixes, "libvlc_media_release");
    if (!prepare || !peek || !bound || !replacement || !retain || !release) { printf("dlsym failed\n"); return 3; }
    const char *args[] = {"--quiet", "--intf=dummy", "--aout=adummy", "--vout=dummy"};
    libvlc_instance_t *vlc = libvlc_new(4, args);
    if (vlc == NULL) { printf("libvlc_new failed\n"); return 4; }
    int mode = prepare();
    void *libvlc = dlopen("libvlc.so.5", RTLD_LAZY | RTLD_NOLOAD);
    int is_bound = bound(dlsym(libvlc, "libvlc_media_retain"), "libvlc_media_retain", replacement(0));
    libvlc_media_t *media = libvlc_media_new_location(vlc, "file:///nonexistent.wav");
    libvlc_media_list_t *list = libvlc_media_list_new(vlc);
    libvlc_media_list_lock(list);
    libvlc_media_list_add_media(list, media);
    int during = peek(media);
    libvlc_media_list_remove_index(list, 0);
    libvlc_media_list_unlock(list);
    int after = peek(media);
    retain(media);
    int retained = peek(media);
    release(media);
    printf("mode=%d bound=%d during=%d after=%d retained=%d\n", mode, is_bound, during, after, retained);
    libvlc_media_list_release(list);
    libvlc_media_release(media);
    libvlc_release(vlc);
    return 0;
}
