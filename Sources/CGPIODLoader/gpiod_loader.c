// See CGPIODLoader.h.
#include "CGPIODLoader.h"

#include <CPlatform.h>

static const char *const names[] = {
#define CGPIOD_NAME(name) #name,
    CGPIOD_FUNCTIONS(CGPIOD_NAME)
#undef CGPIOD_NAME
};
// The table is filled as an array of function pointers.
_Static_assert(sizeof(cgpiod_library) == sizeof names / sizeof names[0] * sizeof(void *), "one pointer per function");

int cgpiod_load(cgpiod_library *table, char *error, size_t error_size) {
    return cplatform_load_library(CGPIOD_SONAME, names, sizeof names / sizeof names[0], (void **)table,
                                  error, error_size);
}
