// See CMosquittoLoader.h.
#include "CMosquittoLoader.h"

#include <CPlatform.h>
#include <pthread.h>
#include <stdio.h>

static const char *const names[] = {
#define CMOSQ_NAME(name) #name,
    CMOSQ_FUNCTIONS(CMOSQ_NAME)
#undef CMOSQ_NAME
};
// The table is filled as an array of function pointers.
_Static_assert(sizeof(cmosq_library) == sizeof names / sizeof names[0] * sizeof(void *), "one pointer per function");

static cmosq_library library;
static const cmosq_library *loaded;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    if (cplatform_load_library(CMOSQ_SONAME, names, sizeof names / sizeof names[0], (void **)&library,
                               load_error, sizeof load_error) != 0) {
        return;
    }
    int rc = library.mosquitto_lib_init();
    if (rc != MOSQ_ERR_SUCCESS) {
        snprintf(load_error, sizeof load_error, "mosquitto_lib_init failed: %s", library.mosquitto_strerror(rc));
        return;
    }
    loaded = &library;
}

const cmosq_library *cmosq_load(char *error, size_t error_size) {
    pthread_once(&once, load);
    if (loaded == NULL && error_size > 0) {
        snprintf(error, error_size, "%s", load_error);
    }
    return loaded;
}
