// Pictures kept at 3 bytes a pixel (issue 31): packed once when a picture
// is prepared, widened to the display's 32-bit pixels as it is laid out.
#include "CImageCodecs.h"

#include <string.h>

// The packed layout is pixman's r8g8b8: the 24-bit value 0xRRGGBB in the
// machine's byte order (B, G, R bytes on a little-endian machine).
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define CIC_PACK_BIG_ENDIAN 1
#else
#define CIC_PACK_BIG_ENDIAN 0
#endif

void cic_pack_xrgb_row(const uint32_t *source, uint8_t *packed, size_t count) {
    size_t x = 0;
#if !CIC_PACK_BIG_ENDIAN
    // Four pixels to three words. Each block is loaded whole before it is
    // stored, and a block's stores end before the next block starts, so
    // `packed` may be `source` itself.
    for (; x + 4 <= count; x += 4) {
        uint32_t p[4];
        memcpy(p, source + x, sizeof p);
        uint32_t w[3] = {
            (p[0] & 0xFFFFFFu) | p[1] << 24,
            (p[1] & 0xFFFFFFu) >> 8 | p[2] << 16,
            (p[2] & 0xFFFFFFu) >> 16 | p[3] << 8,
        };
        memcpy(packed + 3 * x, w, sizeof w);
    }
#endif
    for (; x < count; x++) {
        uint32_t p = source[x];
        uint8_t *q = packed + 3 * x;
#if CIC_PACK_BIG_ENDIAN
        q[0] = (uint8_t)(p >> 16), q[1] = (uint8_t)(p >> 8), q[2] = (uint8_t)p;
#else
        q[0] = (uint8_t)p, q[1] = (uint8_t)(p >> 8), q[2] = (uint8_t)(p >> 16);
#endif
    }
}

void cic_widen_rgb_row(const uint8_t *packed, uint32_t *out, size_t count) {
    size_t x = 0;
#if !CIC_PACK_BIG_ENDIAN
    // Three words to four pixels.
    for (; x + 4 <= count; x += 4) {
        uint32_t w[3];
        memcpy(w, packed + 3 * x, sizeof w);
        uint32_t p[4] = {
            0xFF000000u | w[0],
            0xFF000000u | w[0] >> 24 | w[1] << 8,
            0xFF000000u | w[1] >> 16 | w[2] << 16,
            0xFF000000u | w[2] >> 8,
        };
        memcpy(out + x, p, sizeof p);
    }
#endif
    for (; x < count; x++) {
        const uint8_t *q = packed + 3 * x;
#if CIC_PACK_BIG_ENDIAN
        out[x] = 0xFF000000u | (uint32_t)q[0] << 16 | (uint32_t)q[1] << 8 | q[2];
#else
        out[x] = 0xFF000000u | (uint32_t)q[2] << 16 | (uint32_t)q[1] << 8 | q[0];
#endif
    }
}
