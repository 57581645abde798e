// Row conversions shared by the decoders and the PNG writer. See rows.h.
#include "rows.h"

// pixman composites premultiplied pixels: c' = round(c * a / 255), done
// exactly with the usual add-and-shift division by 255.
void cic_premultiply_row(uint8_t *row, uint32_t width) {
    for (uint32_t x = 0; x < width; x++) {
        uint8_t *p = row + 4 * (size_t)x;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        const unsigned a = p[3];
        uint8_t *c = p;        // B, G, R
#else
        const unsigned a = p[0];
        uint8_t *c = p + 1;    // R, G, B
#endif
        if (a == 255) continue;
        for (int i = 0; i < 3; i++) {
            unsigned t = c[i] * a + 128;
            c[i] = (uint8_t)((t + (t >> 8)) >> 8);
        }
    }
}

// Adobe applications write CMYK JPEGs with every sample inverted (255 = no
// ink), and mark them with an APP14 "Adobe" segment; others write plain CMYK.
// The naive conversion (no colour management) is what browsers do without a
// profile. Converts in place: a CMYK pixel is 4 bytes, like the output pixel.
void cic_cmyk_row_to_native(uint8_t *row, uint32_t width, int inverted) {
    for (uint32_t x = 0; x < width; x++) {
        uint8_t *p = row + 4 * (size_t)x;
        unsigned c = p[0], m = p[1], y = p[2], k = p[3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        uint8_t r = (uint8_t)((c * k + 127) / 255);
        uint8_t g = (uint8_t)((m * k + 127) / 255);
        uint8_t b = (uint8_t)((y * k + 127) / 255);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        p[0] = b; p[1] = g; p[2] = r; p[3] = 0xFF;
#else
        p[0] = 0xFF; p[1] = r; p[2] = g; p[3] = b;
#endif
    }
}

void cic_xrgb_row_to_rgb(const uint32_t *source, uint8_t *rgb, uint32_t width) {
    for (uint32_t x = 0; x < width; x++) {
        uint32_t p = source[x];
        rgb[3 * x] = (uint8_t)(p >> 16);
        rgb[3 * x + 1] = (uint8_t)(p >> 8);
        rgb[3 * x + 2] = (uint8_t)p;
    }
}
