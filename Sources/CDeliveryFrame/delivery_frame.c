#include "CDeliveryFrame.h"

_Thread_local void *mediaevents_delivery_frame = 0;
_Thread_local void *mediaevents_drain_run = 0;
