/* libmosquitto, Eclipse Mosquitto's MQTT client library (Debian: libmosquitto-dev), for
 * media-daemon's MQTT front end (--mqtt). */
#ifndef CMOSQUITTO_SHIM_H
#define CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
