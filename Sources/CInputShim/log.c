// See CInputShim.h.
#include "CInputShim.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static _Atomic(cis_log_sink) current_sink;

static void
cis_log_handler(struct libinput *libinput, enum libinput_log_priority priority,
                const char *format, va_list args)
{
    cis_log_sink sink = atomic_load(&current_sink);
    if (!sink)
        return;

    // Most messages are one short line; longer ones get a heap buffer of the
    // exact size, which needs a second pass over a copy of the arguments.
    char small[512];
    va_list again;
    va_copy(again, args);
    int n = vsnprintf(small, sizeof small, format, args);
    if (n < 0) {
        va_end(again);
        sink(libinput, (int)priority, "(libinput log message could not be formatted)");
        return;
    }
    if ((size_t)n < sizeof small) {
        va_end(again);
        sink(libinput, (int)priority, small);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        va_end(again);
        sink(libinput, (int)priority, small);  // truncated beats lost
        return;
    }
    vsnprintf(big, (size_t)n + 1, format, again);
    va_end(again);
    sink(libinput, (int)priority, big);
    free(big);
}

void
cis_log_install(struct libinput *libinput, cis_log_sink sink,
                __typeof__(libinput_log_set_handler) *set_handler)
{
    atomic_store(&current_sink, sink);
    set_handler(libinput, cis_log_handler);
}
