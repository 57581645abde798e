// CHeifLoader: libheif, loaded when the first HEIF or AVIF picture is decoded
// rather than when carouseld starts.
//
// libheif pulls in its codecs (libde265, libx265, libaom, dav1d) and their
// C++ runtime, and libde265 builds tables in a constructor of its own: linked
// normally, every start of carouseld paid for them (more CPU before main than
// all of Swift's start-up on the VM, and ~2 MB of resident library pages)
// although the daemon itself never decodes a HEIF (a helper process does, see
// DecodingProcess). So the library is opened with dlopen() by the process that
// decodes one, the first time it does, and called through the table below.
// Every entry has its prototype from <libheif/heif.h>, so a mismatch is a
// compile error, not a crash.
#ifndef CHEIFLOADER_H
#define CHEIFLOADER_H

#include <stddef.h>
#include <libheif/heif.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CHEIF_FUNCTIONS(X) \
    X(heif_init) \
    X(heif_get_version) \
    X(heif_have_decoder_for_format) \
    X(heif_context_alloc) \
    X(heif_context_free) \
    X(heif_context_read_from_memory_without_copy) \
    X(heif_context_get_primary_image_handle) \
    X(heif_context_set_maximum_image_size_limit) \
    X(heif_image_handle_release) \
    X(heif_image_handle_get_width) \
    X(heif_image_handle_get_height) \
    X(heif_image_handle_get_ispe_width) \
    X(heif_image_handle_get_ispe_height) \
    X(heif_image_handle_has_alpha_channel) \
    X(heif_image_handle_get_luma_bits_per_pixel) \
    X(heif_image_handle_is_premultiplied_alpha) \
    X(heif_decoding_options_alloc) \
    X(heif_decoding_options_free) \
    X(heif_decode_image) \
    X(heif_image_release) \
    X(heif_image_get_width) \
    X(heif_image_get_height) \
    X(heif_image_get_bits_per_pixel_range) \
    X(heif_image_get_plane_readonly)

/// libheif's functions, as loaded. Every entry is set when the table is given out.
typedef struct cheif_library {
#define CHEIF_FIELD(name) __typeof__(name) *_Nonnull name;
    CHEIF_FUNCTIONS(CHEIF_FIELD)
#undef CHEIF_FIELD
} cheif_library;

/// The soname opened: Debian 12's libheif1.
#define CHEIF_SONAME "libheif.so.1"

/// Opens libheif, fills `table` and calls heif_init: 0, or -1 with why in
/// `error` (NUL-terminated, at most `error_size` bytes) when it cannot be
/// loaded or lacks a function (`table` must not be used then). Called once
/// per process, by Swift's lazy `HEIFReader.library`.
int cheif_load(cheif_library *_Nonnull table, char *_Nonnull error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
