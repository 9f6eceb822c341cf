/* MPRISInterfaces: the two MPRIS interfaces of media-daemon as sd-bus vtables.
 *
 * sd-bus describes an object's interfaces with arrays of `sd_bus_vtable` built by C macros
 * (SD_BUS_METHOD, SD_BUS_PROPERTY ...: designated initializers of a struct with bit-fields and
 * a union), which Swift cannot write. This target holds those arrays and nothing else: every
 * member of an interface points to the same three handlers, given by the caller, which tell
 * the members apart by name (`sd_bus_message_get_member`, the `property` argument). The user
 * data sd-bus hands them is the pointer given to `sd_bus_add_object_vtable`.
 *
 * Flags: every method and writable property is SD_BUS_VTABLE_UNPRIVILEGED, so that on the
 * system bus the D-Bus policy alone decides who may call them (without it sd-bus itself would
 * refuse callers without CAP_SYS_ADMIN). Properties that change send PropertiesChanged with
 * their value (EMITS_CHANGE), except Position (the specification's EmitsChangedSignal=false);
 * those that never change are CONST.
 */
#ifndef MPRIS_INTERFACES_H
#define MPRIS_INTERFACES_H

#include <systemd/sd-bus.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The handlers every member of the interfaces calls. */
typedef struct mpris_handlers {
    sd_bus_message_handler_t method;
    sd_bus_property_get_t get;
    sd_bus_property_set_t set;
} mpris_handlers_t;

/** `org.mpris.MediaPlayer2`: Raise, Quit; CanQuit, CanRaise, HasTrackList, Identity,
 *  SupportedUriSchemes, SupportedMimeTypes. The array is static: build it once. */
const sd_bus_vtable *mpris_root_vtable(mpris_handlers_t handlers);

/** `org.mpris.MediaPlayer2.Player`: Next, Previous, Pause, PlayPause, Stop, Play, Seek,
 *  SetPosition, OpenUri; PlaybackStatus, LoopStatus, Rate, Metadata, Volume, Position,
 *  MinimumRate, MaximumRate, CanGoNext, CanGoPrevious, CanPlay, CanPause, CanSeek, CanControl;
 *  the signal Seeked. The array is static: build it once. */
const sd_bus_vtable *mpris_player_vtable(mpris_handlers_t handlers);

#ifdef __cplusplus
}
#endif

#endif
