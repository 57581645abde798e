// See CInputLoader.h.
#include "CInputLoader.h"

#include <CPlatform.h>

#define CINPUT_NAME(name) #name,
static const char *const names[] = {CINPUT_FUNCTIONS(CINPUT_NAME)};
#undef CINPUT_NAME

#define COUNT(array) (sizeof array / sizeof array[0])
// The table is filled as an array of function pointers.
_Static_assert(sizeof(cinput_library) == COUNT(names) * sizeof(void *), "one pointer per function");

int cinput_load_soname(const char *soname, cinput_library *table, char *error, size_t error_size) {
    // cplatform_load_library's reason names the soname (dlerror's
    // "libinput.so.10: cannot open shared object file", or
    // "libinput.so.10 has no libinput_dispatch").
    return cplatform_load_library(soname, names, COUNT(names), (void **)table, error, error_size);
}

int cinput_load(cinput_library *table, char *error, size_t error_size) {
    return cinput_load_soname(CINPUT_SONAME, table, error, error_size);
}
