#include "CFuzzSupport.h"
#include <stdatomic.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CFUZZ_HAS_ASAN 1
#endif
#endif

#ifdef CFUZZ_HAS_ASAN
#include <sanitizer/allocator_interface.h>

static _Atomic int64_t largest;
// 0 not tried yet, 1 installed, -1 refused (every later start says so too).
static _Atomic int installed;

// Called by the allocator itself, on any thread: no allocation, no locks.
// Not instrumented for coverage: its compare-and-swap loop would count as
// new coverage whenever two of a decoder's threads happened to race, and the
// gate's runs would differ with the same seed.
__attribute__((no_sanitize("coverage"))) static void on_malloc(const volatile void *pointer, size_t size) {
    (void)pointer;
    int64_t seen = atomic_load(&largest);
    while ((int64_t)size > seen && !atomic_compare_exchange_weak(&largest, &seen, (int64_t)size)) {
    }
}

__attribute__((no_sanitize("coverage"))) static void on_free(const volatile void *pointer) {
    (void)pointer;
}

int cfuzz_meter_start(void) {
    if (atomic_load(&installed) == 0) {
        atomic_store(&installed, __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) ? 1 : -1);
    }
    if (atomic_load(&installed) != 1) return -1;
    atomic_store(&largest, 0);
    return 0;
}

int64_t cfuzz_meter_largest(void) {
    return atomic_load(&largest);
}
#else
int cfuzz_meter_start(void) {
    return -1;
}

int64_t cfuzz_meter_largest(void) {
    return 0;
}
#endif
