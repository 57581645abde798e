// blend.c once more, with __builtin_prefetch recording the addresses it is
// asked for, so that twins.c can compare cic_prefetch's lines with its twin.
// Its functions get other names here; the real ones come from blend.c built
// as it ships.
#include <stddef.h>
#include <stdint.h>

enum { KT_MAX_LINES = 1024 };
uintptr_t kt_prefetched[KT_MAX_LINES];
size_t kt_prefetched_count;

static void kt_prefetch_seen(const void *p) {
    if (kt_prefetched_count < KT_MAX_LINES) kt_prefetched[kt_prefetched_count] = (uintptr_t)p;
    kt_prefetched_count++;
}

#define __builtin_prefetch(p) kt_prefetch_seen(p)
#define cic_crossfade_row kt_recorded_crossfade_row
#define cic_crossfade_row_using kt_recorded_crossfade_row_using
#define cic_crossfade_fence kt_recorded_crossfade_fence
#define cic_prefetch kt_recorded_prefetch
#include "blend.c"
