// See CHeifLoader.h.
#include "CHeifLoader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static cheif_library library;
static const cheif_library *loaded;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    // RTLD_LOCAL: nothing else in the process binds to libheif's symbols.
    void *handle = dlopen(CHEIF_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "%s", why ? why : "dlopen failed");
        return;
    }
#define CHEIF_RESOLVE(name) \
    library.name = (__typeof__(name) *)dlsym(handle, #name); \
    if (library.name == NULL) { \
        snprintf(load_error, sizeof load_error, "%s has no %s", CHEIF_SONAME, #name); \
        return; \
    }
    CHEIF_FUNCTIONS(CHEIF_RESOLVE)
#undef CHEIF_RESOLVE
    // From libheif 1.14 heif_init loads the codec plugins; never paired with
    // heif_deinit: the codecs stay for the process, as the library does.
    struct heif_error status = library.heif_init(NULL);
    if (status.code != heif_error_Ok) {
        snprintf(load_error, sizeof load_error, "heif_init failed: %s",
                 status.message ? status.message : "no message");
        return;
    }
    loaded = &library;
}

const cheif_library *cheif_load(char *error, size_t error_size) {
    pthread_once(&once, load);
    if (loaded == NULL && error_size > 0) {
        snprintf(error, error_size, "%s", load_error);
    }
    return loaded;
}
