// The per-pixel row conversions of the decoders and the PNG writer, in a
// file of their own so that the kernel twin test (scripts/kernels/) can
// build them without libjpeg or libpng, for every architecture it checks.
// Private to CImageCodecs (Swift never sees it).
#ifndef CIC_ROWS_H
#define CIC_ROWS_H

#include <stddef.h>
#include <stdint.h>

/// Premultiplies `width` 32-bit pixels (native 0xAARRGGBB) in place:
/// c' = round(c * a / 255).
void cic_premultiply_row(uint8_t *row, uint32_t width);

/// Turns `width` CMYK pixels (C, M, Y, K bytes; every sample inverted when
/// `inverted`, as Adobe writes them) into opaque native 32-bit pixels, in place.
void cic_cmyk_row_to_native(uint8_t *row, uint32_t width, int inverted);

/// Writes `width` native 32-bit XRGB pixels as R, G, B bytes (alpha ignored).
void cic_xrgb_row_to_rgb(const uint32_t *source, uint8_t *rgb, uint32_t width);

#endif
