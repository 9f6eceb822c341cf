#include "MPRISInterfaces.h"

#include <string.h>

#define METHOD(name, in, handlers) SD_BUS_METHOD(name, in, "", (handlers).method, SD_BUS_VTABLE_UNPRIVILEGED)
#define CHANGING(name, type, handlers) \
    SD_BUS_PROPERTY(name, type, (handlers).get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
#define WRITABLE(name, type, handlers)                                                          \
    SD_BUS_WRITABLE_PROPERTY(name, type, (handlers).get, (handlers).set, 0,                     \
                             SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE | SD_BUS_VTABLE_UNPRIVILEGED)
#define CONSTANT(name, type, handlers) SD_BUS_PROPERTY(name, type, (handlers).get, 0, SD_BUS_VTABLE_PROPERTY_CONST)

const sd_bus_vtable *mpris_root_vtable(mpris_handlers_t h) {
    static sd_bus_vtable table[10];
    const sd_bus_vtable built[] = {
        SD_BUS_VTABLE_START(0),
        METHOD("Raise", "", h),
        METHOD("Quit", "", h),
        CONSTANT("CanQuit", "b", h),
        CONSTANT("CanRaise", "b", h),
        CONSTANT("HasTrackList", "b", h),
        CONSTANT("Identity", "s", h),
        CONSTANT("SupportedUriSchemes", "as", h),
        CONSTANT("SupportedMimeTypes", "as", h),
        SD_BUS_VTABLE_END,
    };
    _Static_assert(sizeof(built) == sizeof(table), "root vtable size");
    memcpy(table, built, sizeof(table));
    return table;
}

const sd_bus_vtable *mpris_player_vtable(mpris_handlers_t h) {
    static sd_bus_vtable table[26];
    const sd_bus_vtable built[] = {
        SD_BUS_VTABLE_START(0),
        METHOD("Next", "", h),
        METHOD("Previous", "", h),
        METHOD("Pause", "", h),
        METHOD("PlayPause", "", h),
        METHOD("Stop", "", h),
        METHOD("Play", "", h),
        METHOD("Seek", "x", h),
        METHOD("SetPosition", "ox", h),
        METHOD("OpenUri", "s", h),
        CHANGING("PlaybackStatus", "s", h),
        WRITABLE("LoopStatus", "s", h),
        WRITABLE("Rate", "d", h),
        CHANGING("Metadata", "a{sv}", h),
        WRITABLE("Volume", "d", h),
        /* Changes all the time: clients compute it from Rate, and Seeked says when it jumps. */
        SD_BUS_PROPERTY("Position", "x", h.get, 0, 0),
        CONSTANT("MinimumRate", "d", h),
        CONSTANT("MaximumRate", "d", h),
        CHANGING("CanGoNext", "b", h),
        CHANGING("CanGoPrevious", "b", h),
        CHANGING("CanPlay", "b", h),
        CHANGING("CanPause", "b", h),
        CHANGING("CanSeek", "b", h),
        CONSTANT("CanControl", "b", h),
        SD_BUS_SIGNAL("Seeked", "x", 0),
        SD_BUS_VTABLE_END,
    };
    _Static_assert(sizeof(built) == sizeof(table), "player vtable size");
    memcpy(table, built, sizeof(table));
    return table;
}
