// See CTextLoader.h.
#include "CTextLoader.h"

#include <CPlatform.h>

#define CTEXT_NAME(name) #name,
static const char *const fontconfig_names[] = {CTEXT_FONTCONFIG_FUNCTIONS(CTEXT_NAME)};
static const char *const freetype_names[] = {CTEXT_FREETYPE_FUNCTIONS(CTEXT_NAME)};
static const char *const harfbuzz_names[] = {CTEXT_HARFBUZZ_FUNCTIONS(CTEXT_NAME)};
#undef CTEXT_NAME

#define COUNT(array) (sizeof array / sizeof array[0])
// The table is filled as an array of function pointers, one library's part after the other's.
_Static_assert(sizeof(ctext_library)
                   == (COUNT(fontconfig_names) + COUNT(freetype_names) + COUNT(harfbuzz_names)) * sizeof(void *),
               "one pointer per function");

int ctext_load_sonames(const char *fontconfig, const char *freetype, const char *harfbuzz, ctext_library *table,
                       char *error, size_t error_size) {
    void **slots = (void **)table;
    // All three or none: cplatform_load_library's reason names the soname
    // (dlerror's "libfreetype.so.6: cannot open shared object file", or
    // "libfreetype.so.6 has no FT_Done_Face").
    if (cplatform_load_library(fontconfig, fontconfig_names, COUNT(fontconfig_names), slots, error, error_size) != 0) {
        return -1;
    }
    slots += COUNT(fontconfig_names);
    if (cplatform_load_library(freetype, freetype_names, COUNT(freetype_names), slots, error, error_size) != 0) {
        return -1;
    }
    slots += COUNT(freetype_names);
    if (cplatform_load_library(harfbuzz, harfbuzz_names, COUNT(harfbuzz_names), slots, error, error_size) != 0) {
        return -1;
    }
    return 0;
}

int ctext_load(ctext_library *table, char *error, size_t error_size) {
    return ctext_load_sonames(CTEXT_FONTCONFIG_SONAME, CTEXT_FREETYPE_SONAME, CTEXT_HARFBUZZ_SONAME, table, error,
                              error_size);
}
