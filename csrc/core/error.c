/* Thread-local error message: the core has no global state, so each thread
   reads the reason of its own last failure. */
#include <stdarg.h>
#include <stdio.h>
#include "topomap/error.h"

static _Thread_local char topomap_i_msg[512];

const char *topomap_last_error(void) { return topomap_i_msg; }

int topomap_i_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(topomap_i_msg, sizeof topomap_i_msg, fmt, ap);
    va_end(ap);
    return code;
}
