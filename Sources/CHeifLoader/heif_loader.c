// See CHeifLoader.h.
#include "CHeifLoader.h"

#include <CPlatform.h>
#include <stdio.h>

static const char *const names[] = {
#define CHEIF_NAME(name) #name,
    CHEIF_FUNCTIONS(CHEIF_NAME)
#undef CHEIF_NAME
};
// The table is filled as an array of function pointers.
_Static_assert(sizeof(cheif_library) == sizeof names / sizeof names[0] * sizeof(void *), "one pointer per function");

int cheif_load(cheif_library *table, char *error, size_t error_size) {
    if (cplatform_load_library(CHEIF_SONAME, names, sizeof names / sizeof names[0], (void **)table,
                               error, error_size) != 0) {
        return -1;
    }
    // From libheif 1.14 heif_init loads the codec plugins; never paired with
    // heif_deinit: the codecs stay for the process, as the library does.
    struct heif_error status = table->heif_init(NULL);
    if (status.code != heif_error_Ok) {
        snprintf(error, error_size, "heif_init failed: %s", status.message ? status.message : "no message");
        return -1;
    }
    return 0;
}
