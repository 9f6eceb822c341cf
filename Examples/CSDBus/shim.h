/* sd-bus, systemd's D-Bus library (Debian: libsystemd-dev), for media-daemon's MPRIS service. */
#ifndef CSDBUS_SHIM_H
#define CSDBUS_SHIM_H
#include <systemd/sd-bus.h>
#endif
