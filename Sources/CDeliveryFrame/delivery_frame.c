#include "CDeliveryFrame.h"

_Thread_local void *mediaevents_delivery_frame = 0;
