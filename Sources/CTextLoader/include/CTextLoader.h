// CTextLoader: fontconfig, FreeType and HarfBuzz, loaded when the first
// caption, clock or pushed text is drawn rather than when carouseld starts.
//
// The three libraries pull in libgraphite2, libbrotlidec, libbrotlicommon,
// libexpat and glib: linked normally, every start of carouseld loaded and
// relocated them, although a frame without [overlay] text never draws a
// glyph (issue 31). So they are opened with dlopen() by the first
// TextRenderer of the process, and called through the table below. Every
// entry has its prototype from the libraries' own headers, so a mismatch is
// a compile error, not a crash. Their types, enums and macros (FT_FaceRec's
// fields, FT_LOAD_DEFAULT, HB_DIRECTION_RTL) come from the same headers and
// need no library.
//
// The headers are in /usr/include/harfbuzz and /usr/include/freetype2
// (Debian: libharfbuzz-dev, libfreetype-dev, libfontconfig-dev); Package.swift
// names those folders instead of asking pkg-config, whose flags would link
// the libraries again.
#ifndef CTEXTLOADER_H
#define CTEXTLOADER_H

#include <stddef.h>
#include <fontconfig/fontconfig.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include <hb.h>
#include <hb-ft.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What libfontconfig.so.1 gives: finding a font and its fallbacks.
#define CTEXT_FONTCONFIG_FUNCTIONS(X) \
    X(FcGetVersion) \
    X(FcInit) \
    X(FcNameParse) \
    X(FcPatternDestroy) \
    X(FcPatternGetString) \
    X(FcPatternGetInteger) \
    X(FcPatternGetCharSet) \
    X(FcConfigSubstitute) \
    X(FcDefaultSubstitute) \
    X(FcFontSort) \
    X(FcFontSetDestroy) \
    X(FcCharSetHasChar)

/// What libfreetype.so.6 gives: faces and glyph bitmaps.
#define CTEXT_FREETYPE_FUNCTIONS(X) \
    X(FT_Init_FreeType) \
    X(FT_Done_FreeType) \
    X(FT_Library_Version) \
    X(FT_New_Face) \
    X(FT_Done_Face) \
    X(FT_Set_Pixel_Sizes) \
    X(FT_Select_Size) \
    X(FT_Get_Glyph_Name) \
    X(FT_Load_Glyph) \
    X(FT_Render_Glyph)

/// What libharfbuzz.so.0 gives: shaping. Debian 12 builds hb_ft_* into it
/// (no separate libharfbuzz-ft).
#define CTEXT_HARFBUZZ_FUNCTIONS(X) \
    X(hb_version_string) \
    X(hb_ft_font_create_referenced) \
    X(hb_font_destroy) \
    X(hb_buffer_create) \
    X(hb_buffer_destroy) \
    X(hb_buffer_clear_contents) \
    X(hb_buffer_add_utf8) \
    X(hb_buffer_set_direction) \
    X(hb_buffer_guess_segment_properties) \
    X(hb_shape) \
    X(hb_buffer_get_glyph_infos) \
    X(hb_buffer_get_glyph_positions)

/// The three libraries' functions, as loaded, in the order of the lists
/// above. Every entry is set when the table is given out.
typedef struct ctext_library {
#define CTEXT_FIELD(name) __typeof__(name) *_Nonnull name;
    CTEXT_FONTCONFIG_FUNCTIONS(CTEXT_FIELD)
    CTEXT_FREETYPE_FUNCTIONS(CTEXT_FIELD)
    CTEXT_HARFBUZZ_FUNCTIONS(CTEXT_FIELD)
#undef CTEXT_FIELD
} ctext_library;

/// The sonames opened: Debian 12's libfontconfig1, libfreetype6 and libharfbuzz0b.
#define CTEXT_FONTCONFIG_SONAME "libfontconfig.so.1"
#define CTEXT_FREETYPE_SONAME "libfreetype.so.6"
#define CTEXT_HARFBUZZ_SONAME "libharfbuzz.so.0"

/// Opens the three libraries and fills `table`: 0, or -1 with why in `error`
/// (NUL-terminated, at most `error_size` bytes, naming the library) when one
/// cannot be loaded or lacks a function; `table` must not be used then (the
/// libraries opened before stay open, unused). Called once per process, by
/// Swift's lazy `TextLibraries.loaded`.
int ctext_load(ctext_library *_Nonnull table, char *_Nonnull error, size_t error_size);

/// `ctext_load` with other sonames: for tests of a library that is missing
/// or is not the one expected.
int ctext_load_sonames(const char *_Nonnull fontconfig, const char *_Nonnull freetype, const char *_Nonnull harfbuzz,
                       ctext_library *_Nonnull table, char *_Nonnull error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
