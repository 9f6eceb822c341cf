/* See include/CVLCTestSupport.h. */
#define _GNU_SOURCE /* gettid */
#include "CVLCTestSupport.h"

#include <unistd.h>

unsigned long testsupport_thread_id(void) { return (unsigned long)gettid(); }
