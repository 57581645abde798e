// Pictures kept at 3 bytes a pixel (issue 31): packed once when a picture
// is prepared, widened to the display's 32-bit pixels each time it is laid
// out (a slide's picture, a crossfade's rows), so widening is the loop that
// counts.
//
// The packed layout is pixman's r8g8b8: the 24-bit value 0xRRGGBB in the
// machine's byte order (B, G, R bytes on a little-endian machine).
//
// * The portable loop moves 4 pixels as 3 words with shifts: plain C for
//   every target, and the only one on a big-endian machine.
// * The vector loop moves 16 pixels (48 packed bytes, 64 wide) with byte
//   shuffles of the vector extension: a table lookup (tbl) on arm64 and
//   armhf with NEON, pshufb on x86-64 with SSSE3 (chosen at run time,
//   since the x86-64 baseline has none; without it clang makes a slow
//   sequence of unpacks of the same shuffles).
//
// Measured on this Zen 5 host, a 1920x1080 frame, best of 30, against a
// memcpy of the wide frame in the same run: the portable loop widens in
// 2.4-3.5x and packs in 1.5-2.1x, the SSSE3 loop 0.95-0.98x and
// 0.93-0.96x (bandwidth: it reads 3 bytes where memcpy reads 4).
// scripts/kernels.sh checks both loops on x86-64, arm64 and armhf.
#include <string.h>
#include "CImageCodecs.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define CIC_PACK_BIG_ENDIAN 1
#else
#define CIC_PACK_BIG_ENDIAN 0
#endif

#if !CIC_PACK_BIG_ENDIAN && defined(__clang__) && \
    (defined(__aarch64__) || defined(__ARM_NEON) || defined(__x86_64__))
#define CIC_PACK_VECTOR 1
#else
#define CIC_PACK_VECTOR 0
#endif

// MARK: The portable loop

static void pack_portable(const uint32_t *source, uint8_t *packed, size_t count) {
    size_t x = 0;
#if !CIC_PACK_BIG_ENDIAN
    // Four pixels to three words. Each block is loaded whole before it is
    // stored, and a block's stores end before the next block starts, so
    // `packed` may be `source` itself or lie before it.
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
        uint32_t p;
        memcpy(&p, source + x, 4);
        uint8_t *q = packed + 3 * x;
#if CIC_PACK_BIG_ENDIAN
        q[0] = (uint8_t)(p >> 16), q[1] = (uint8_t)(p >> 8), q[2] = (uint8_t)p;
#else
        q[0] = (uint8_t)p, q[1] = (uint8_t)(p >> 8), q[2] = (uint8_t)(p >> 16);
#endif
    }
}

static void widen_portable(const uint8_t *packed, uint32_t *out, size_t count) {
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

// MARK: The vector loop

#if CIC_PACK_VECTOR
typedef uint8_t cic_v16 __attribute__((vector_size(16)));

#if defined(__x86_64__)
#define CIC_PACK_TARGET __attribute__((target("ssse3")))
#else
#define CIC_PACK_TARGET
#endif

CIC_PACK_TARGET
static void pack_vector(const uint32_t *source, uint8_t *packed, size_t count) {
    size_t x = 0;
    // 16 pixels a turn, loaded whole before any is stored (in place, as the
    // portable loop); a turn's 48 bytes end before the next turn's source.
    for (; x + 16 <= count; x += 16) {
        cic_v16 p0, p1, p2, p3;
        memcpy(&p0, source + x, 16);
        memcpy(&p1, source + x + 4, 16);
        memcpy(&p2, source + x + 8, 16);
        memcpy(&p3, source + x + 12, 16);
        cic_v16 o0 = __builtin_shufflevector(p0, p1, 0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 20);
        cic_v16 o1 = __builtin_shufflevector(p1, p2, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 20, 21, 22, 24, 25);
        cic_v16 o2 = __builtin_shufflevector(p2, p3, 10, 12, 13, 14, 16, 17, 18, 20, 21, 22, 24, 25, 26, 28, 29, 30);
        memcpy(packed + 3 * x, &o0, 16);
        memcpy(packed + 3 * x + 16, &o1, 16);
        memcpy(packed + 3 * x + 32, &o2, 16);
    }
    pack_portable(source + x, packed + 3 * x, count - x);
}

CIC_PACK_TARGET
static void widen_vector(const uint8_t *packed, uint32_t *out, size_t count) {
    const cic_v16 alpha = {0, 0, 0, 0xFF, 0, 0, 0, 0xFF, 0, 0, 0, 0xFF, 0, 0, 0, 0xFF};
    size_t x = 0;
    for (; x + 16 <= count; x += 16) {
        cic_v16 a, b, c;
        memcpy(&a, packed + 3 * x, 16);
        memcpy(&b, packed + 3 * x + 16, 16);
        memcpy(&c, packed + 3 * x + 32, 16);
        cic_v16 o0 = __builtin_shufflevector(a, a, 0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 0) | alpha;
        cic_v16 o1 = __builtin_shufflevector(a, b, 12, 13, 14, 0, 15, 16, 17, 0, 18, 19, 20, 0, 21, 22, 23, 0) | alpha;
        cic_v16 o2 = __builtin_shufflevector(b, c, 8, 9, 10, 0, 11, 12, 13, 0, 14, 15, 16, 0, 17, 18, 19, 0) | alpha;
        cic_v16 o3 = __builtin_shufflevector(c, c, 4, 5, 6, 0, 7, 8, 9, 0, 10, 11, 12, 0, 13, 14, 15, 0) | alpha;
        memcpy(out + x, &o0, 16);
        memcpy(out + x + 4, &o1, 16);
        memcpy(out + x + 8, &o2, 16);
        memcpy(out + x + 12, &o3, 16);
    }
    widen_portable(packed + 3 * x, out + x, count - x);
}
#endif

// MARK: Choosing the loop

/// The best loop this CPU has (a benign race: every thread computes the same answer).
static int best_loop(void) {
#if CIC_PACK_VECTOR && defined(__x86_64__)
    static int best = -1;
    if (best < 0) {
        __builtin_cpu_init();
        best = __builtin_cpu_supports("ssse3") ? CIC_PACK_VECTOR_LOOP : CIC_PACK_PORTABLE;
    }
    return best;
#elif CIC_PACK_VECTOR
    return CIC_PACK_VECTOR_LOOP;
#else
    return CIC_PACK_PORTABLE;
#endif
}

int cic_pack_xrgb_row_using(int loop, const uint32_t *source, uint8_t *packed, size_t count) {
    if (loop < 0 || loop > best_loop()) return -1;
#if CIC_PACK_VECTOR
    if (loop == CIC_PACK_VECTOR_LOOP) {
        pack_vector(source, packed, count);
        return 0;
    }
#endif
    pack_portable(source, packed, count);
    return 0;
}

int cic_widen_rgb_row_using(int loop, const uint8_t *packed, uint32_t *out, size_t count) {
    if (loop < 0 || loop > best_loop()) return -1;
#if CIC_PACK_VECTOR
    if (loop == CIC_PACK_VECTOR_LOOP) {
        widen_vector(packed, out, count);
        return 0;
    }
#endif
    widen_portable(packed, out, count);
    return 0;
}

void cic_pack_xrgb_row(const uint32_t *source, uint8_t *packed, size_t count) {
    cic_pack_xrgb_row_using(best_loop(), source, packed, count);
}

void cic_widen_rgb_row(const uint8_t *packed, uint32_t *out, size_t count) {
    cic_widen_rgb_row_using(best_loop(), packed, out, count);
}
