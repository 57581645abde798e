// See CMosquittoLoader.h.
#include "CMosquittoLoader.h"

#include <CPlatform.h>
#include <stdio.h>

static const char *const names[] = {
#define CMOSQ_NAME(name) #name,
    CMOSQ_FUNCTIONS(CMOSQ_NAME)
#undef CMOSQ_NAME
};
// The table is filled as an array of function pointers.
_Static_assert(sizeof(cmosq_library) == sizeof names / sizeof names[0] * sizeof(void *), "one pointer per function");

int cmosq_load(cmosq_library *table, char *error, size_t error_size) {
    if (cplatform_load_library(CMOSQ_SONAME, names, sizeof names / sizeof names[0], (void **)table,
                               error, error_size) != 0) {
        return -1;
    }
    int rc = table->mosquitto_lib_init();
    if (rc != MOSQ_ERR_SUCCESS) {
        snprintf(error, error_size, "mosquitto_lib_init failed: %s", table->mosquitto_strerror(rc));
        return -1;
    }
    return 0;
}
