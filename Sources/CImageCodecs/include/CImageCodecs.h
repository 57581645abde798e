// CImageCodecs: the part of JPEG and PNG decoding that Swift cannot do safely.
//
// libjpeg's default error handler prints and calls exit(), and libpng reports
// errors by longjmp()ing out of the failing call. Neither may unwind through
// Swift frames (a longjmp across Swift skips its releases and defers), so every
// libjpeg/libpng call is made from the C functions below, each of which arms its
// own setjmp() first and turns an error into a return code plus a message.
//
// All functions return 0 on success and -1 on failure, having filled `*err`.
// A handle whose call failed may only be destroyed afterwards.
// Output pixels are 32 bits, in memory order B, G, R, A on little-endian
// machines: a native-endian uint32 0xAARRGGBB, which is what pixman calls
// PIXMAN_a8r8g8b8 / PIXMAN_x8r8g8b8 and DRM calls ARGB8888 / XRGB8888.
#ifndef CIMAGECODECS_H
#define CIMAGECODECS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What went wrong, so that Swift can word the error without parsing text.
typedef enum cic_error_kind {
    CIC_OK = 0,
    CIC_CORRUPT = 1,      ///< the data is damaged or truncated
    CIC_UNSUPPORTED = 2,  ///< valid, but a variant this build cannot decode (e.g. 12-bit JPEG)
    CIC_NO_MEMORY = 3,    ///< an allocation inside the library failed
    CIC_LIMIT = 4,        ///< refused by one of our own safety limits
} cic_error_kind;

enum { CIC_MESSAGE_MAX = 200 };

typedef struct cic_error {
    cic_error_kind kind;
    /// NUL-terminated, the library's own wording where it has one.
    char message[CIC_MESSAGE_MAX];
} cic_error;

// MARK: JPEG (libjpeg-turbo)

typedef struct cic_jpeg cic_jpeg;

/// Creates a decompressor reading `size` bytes at `data`, which must stay valid
/// and unchanged until `cic_jpeg_destroy`. Returns NULL only when out of memory.
cic_jpeg *cic_jpeg_create(const uint8_t *data, size_t size);

/// Reads the headers (jpeg_read_header) without allocating any pixel memory.
/// `*is_cmyk` is set for Adobe CMYK/YCCK files, which are converted to RGB.
int cic_jpeg_read_header(cic_jpeg *jpeg, uint32_t *width, uint32_t *height,
                         int *is_cmyk, cic_error *err);

/// Chooses DCT-domain scaling of `scale_eighths`/8 (1...8) and reports the
/// output size libjpeg will produce (jpeg_calc_output_dimensions).
int cic_jpeg_set_scale(cic_jpeg *jpeg, unsigned scale_eighths,
                       uint32_t *out_width, uint32_t *out_height, cic_error *err);

/// Decodes the whole image into `dst`: out_height rows of `stride` bytes,
/// each with out_width 32-bit pixels (alpha byte 0xFF), or with `packed`
/// 3-byte pixels as `cic_pack_xrgb_row` writes them (not for a CMYK file).
int cic_jpeg_decode(cic_jpeg *jpeg, uint8_t *dst, size_t stride, int packed, cic_error *err);

/// Whether the file is CMYK (or YCCK), which only decodes to 32-bit pixels;
/// valid after `cic_jpeg_read_header`.
int cic_jpeg_is_cmyk(const cic_jpeg *jpeg);

/// Bytes of DCT coefficients libjpeg keeps for the whole image while it
/// decodes a file of several scans (progressive, or sequential with the
/// components in separate scans): every 8x8 block of every component, at
/// full size whatever the output's scale. 0 for a single-scan file, which
/// is decoded a few rows at a time. Valid after `cic_jpeg_read_header`.
size_t cic_jpeg_coefficient_bytes(const cic_jpeg *jpeg);

/// Releases the decompressor (jpeg_destroy_decompress). Accepts NULL.
void cic_jpeg_destroy(cic_jpeg *jpeg);

// MARK: PNG (libpng 1.6)

typedef struct cic_png cic_png;

/// Creates a reader over `size` bytes at `data` (kept until `cic_png_destroy`).
/// Returns NULL only when out of memory.
cic_png *cic_png_create(const uint8_t *data, size_t size);

/// Reads the signature and the chunks before the image data (png_read_info),
/// allocating no pixel memory. `*has_alpha` is set for an alpha channel or tRNS.
int cic_png_read_header(cic_png *png, uint32_t *width, uint32_t *height,
                        int *has_alpha, cic_error *err);

/// Decodes every color type and bit depth (palette, gray, 16-bit, interlaced,
/// tRNS) into premultiplied 32-bit pixels: `dst_height` rows of `stride` bytes.
///
/// At the image's own size libpng writes straight into `dst`. At a smaller
/// size (each side at most the image's) rows are read one at a time
/// (png_read_row) and area-averaged as they come, so that no full-size
/// buffer exists: the scratch memory, reported in `*scratch_bytes`, is 12
/// bytes per source column (a row and a table) plus 48 per output column (16
/// bytes per output pixel instead for an interlaced file, whose passes
/// complete no row before the last).
int cic_png_decode(cic_png *png, uint8_t *dst, size_t stride, uint32_t dst_width, uint32_t dst_height,
                   size_t *scratch_bytes, cic_error *err);

/// Releases the reader (png_destroy_read_struct). Accepts NULL.
void cic_png_destroy(cic_png *png);

/// Writes `height` rows of `stride` bytes of 32-bit XRGB pixels (alpha
/// ignored) at `pixels` as an 8-bit RGB PNG file at `path`, replacing it
/// atomically (written under a fresh mkstemp name beside it, then renamed).
/// Level 1 compression: a screenshot should be quick, not small.
int cic_png_write_file(const char *path, const uint8_t *pixels, uint32_t width, uint32_t height,
                       size_t stride, cic_error *err);

/// The same PNG written at the current position of `fd`, an open file the
/// caller keeps (a screenshot into a file a client opened and passed).
int cic_png_write_descriptor(int fd, const uint8_t *pixels, uint32_t width, uint32_t height,
                             size_t stride, cic_error *err);

/// A crossfade's row: `out[i]` = `a[i]` + (`b[i]` − `a[i]`)·weight/256
/// per 8-bit channel, rounded, in 128 steps; `weight` 0 to 256. `out` is only
/// written, with the fastest loop this CPU has. With `stream` non-zero,
/// `out` is not wanted in the cache (a display buffer): the stores may
/// bypass it, and are ordered only by `cic_crossfade_fence`, which must be
/// called before the rows are read or handed to the display.
void cic_crossfade_row(const uint32_t *a, const uint32_t *b, uint32_t *out, size_t count, uint32_t weight,
                       int stream);

/// Orders the streamed stores of `cic_crossfade_row` (`sfence` on x86-64).
void cic_crossfade_fence(void);

/// Asks the processor to bring `bytes` from `p` into its caches ahead of a
/// copy (one prefetch per 64-byte line; a hint, never a fault). A frame's
/// rows copied in stretches from several pictures break the hardware
/// prefetcher's streams at every row: on a Zen host, prefetching the
/// stretches two rows on made such a copy a quarter faster in plain C, and
/// a mid-slide frame 0.88-0.96x the same bytes memcpy'd (1.03-1.23x before).
void cic_prefetch(const void *p, size_t bytes);

/// Packs `count` native 32-bit XRGB pixels into 3 bytes each, pixman's
/// r8g8b8 (the value 0xRRGGBB in the machine's byte order; alpha dropped).
/// `packed` may be `source` itself or lie before it: a picture is packed in place.
void cic_pack_xrgb_row(const uint32_t *source, uint8_t *packed, size_t count);

/// Widens `count` packed pixels (`cic_pack_xrgb_row`) into opaque native
/// 32-bit XRGB pixels at `out`, which must not overlap `packed`.
void cic_widen_rgb_row(const uint8_t *packed, uint32_t *out, size_t count);

/// The loops of `cic_pack_xrgb_row` and `cic_widen_rgb_row`, slowest first:
/// plain C, and byte shuffles (NEON on ARM, SSSE3 on x86-64).
enum {
    CIC_PACK_PORTABLE = 0,
    CIC_PACK_VECTOR_LOOP = 1,
};

/// `cic_pack_xrgb_row` with the given loop, for tests that check every
/// one; returns -1 (and writes nothing) if this CPU does not have it.
int cic_pack_xrgb_row_using(int loop, const uint32_t *source, uint8_t *packed, size_t count);

/// `cic_widen_rgb_row` with the given loop, as `cic_pack_xrgb_row_using`.
int cic_widen_rgb_row_using(int loop, const uint8_t *packed, uint32_t *out, size_t count);

/// The loops of `cic_crossfade_row`, slowest first.
enum {
    CIC_CROSSFADE_PORTABLE = 0,
    CIC_CROSSFADE_AVX2 = 1,
};

/// `cic_crossfade_row` with the given loop, for tests that check every one;
/// returns -1 (and writes nothing) if this CPU does not have it.
int cic_crossfade_row_using(int loop, const uint32_t *a, const uint32_t *b, uint32_t *out, size_t count,
                            uint32_t weight, int stream);

#ifdef __cplusplus
}
#endif

#endif
