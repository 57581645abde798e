// See CHeifLoader.h.
#include "CHeifLoader.h"

#include <CPlatform.h>
#include <pthread.h>
#include <stdio.h>

static const char *const names[] = {
#define CHEIF_NAME(name) #name,
    CHEIF_FUNCTIONS(CHEIF_NAME)
#undef CHEIF_NAME
};
// The table is filled as an array of function pointers.
_Static_assert(sizeof(cheif_library) == sizeof names / sizeof names[0] * sizeof(void *), "one pointer per function");

static cheif_library library;
static const cheif_library *loaded;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    if (cplatform_load_library(CHEIF_SONAME, names, sizeof names / sizeof names[0], (void **)&library,
                               load_error, sizeof load_error) != 0) {
        return;
    }
    // From libheif 1.14 heif_init loads the codec plugins; never paired with
    // heif_deinit: the codecs stay for the process, as the library does.
    struct heif_error status = library.heif_init(NULL);
    if (status.code != heif_error_Ok) {
        snprintf(load_error, sizeof load_error, "heif_init failed: %s", status.message ? status.message : "no message");
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
