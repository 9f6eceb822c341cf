#ifndef CLIBVLC_SHIM_H
#define CLIBVLC_SHIM_H
#include <vlc/vlc.h>
#endif
