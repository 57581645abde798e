// A crossfade's row: two opaque rows blended at a constant weight, in one
// pass that only writes the output (which may be scanout memory: never read).
//
// Why not pixman: its OVER with a solid mask (x8r8g8b8, SSE2) measured 9x a
// memcpy of the frame on a 1920x1080 crossfade (carousel-bench
// --transitions); issue 13 asks for 2x. A frame's crossfade is bandwidth
// (two reads and a write per pixel), so the loops below spend as little as
// they can on anything else:
//
// * The portable loop is the vector extension, plain SIMD on every target
//   (NEON on ARM, SSE2 on x86-64) with no intrinsics.
// * On x86-64 with AVX2 the same sum costs one multiply-add per two
//   channels (vpmaddubsw) instead of widening, subtracting and multiplying
//   each, and the stores may stream past the cache (vmovntdq), which then
//   keeps the two pictures every frame of the fade reads again.
// * Streamed stores are fenced once per frame (cic_crossfade_fence), not
//   per row: a fence per row cost a quarter of the frame.
//
// Measured on a Zen 5 EPYC host, 1920x1080 (carousel-bench --transitions):
// a frame costs 1.65-1.95x a memcpy of the frame in most runs on a quiet
// host, up to 2.1x on a busy one (the xfade branch's own build alike),
// most of it inside crossfade_avx2; the portable loop built for AVX2, or
// ordinary stores, or a fence per row, 2.4x or more. An AVX-512 loop (a
// whole cache line per streamed store) measured the same as the 8-pixel
// AVX2 loop; software prefetch of both rows, 2.4-2.9x.
//
// On ARM the vector extension is the loop: no intrinsics, because clang
// already turns it into the NEON one would write by hand (clang 21 -O2,
// `clang --target=... -O2 -S blend.c`; no ARM board was at hand, and
// qemu-user's timing means nothing, so these are instruction counts, not
// measurements). Per 8 pixels:
// * arm64: 22 instructions: 2 ldp, 4 usubl (widen and subtract in one), 4
//   mul by the weight lane, 4 rshrn (the +64, >>7 and narrowing in one), 2
//   add, 1 stp and 5 of loop control. A hand-written loop has the same.
// * armhf with NEON: 29: 4 vld1, 4 vsubl, 4 vmla onto 4 vmov'd constants of
//   64, 4 vshrn, 2 vadd, 2 vst1 and 5 of loop control. By hand (vld1 of 32
//   bytes, vmul and vrshrn) about 21; but the loop moves 96 bytes of memory
//   per 8 pixels, more than the DRAM of a 32-bit board (a Cortex-A7/A53 at
//   1-1.5 GHz) delivers in the 15-30 cycles either takes, so it waits on
//   memory as it does on x86. If carousel-bench --transitions on a board
//   says otherwise, a NEON loop goes here beside the AVX2 one.
// * armhf without NEON (Debian's baseline, VFPv3-D16): scalar code.
// scripts/kernels.sh checks all three under qemu-user against the twin.
//
// The 2.2-2.35x measured after the xfade merge was where the 8-pixel loop
// happened to lie, not anything the merge added to the frame (zoom's
// checks in the layout and the strips cost nothing measurable): the loop's
// machine code was the same, but code linked ahead of this file moved
// its start onto a 64-byte boundary, where it ran a quarter slower; main's
// next unrelated commits moved it off again. Pinned by hand at each of
// the four 16-byte placements, only that one was slow (2.20-2.36x against
// 1.65-1.95x). The 16-pixel loop below measured 1.66-1.91x at all four,
// and 1.63-1.89x when built into the merge commit itself.
#include <string.h>
#include "CImageCodecs.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#define CIC_X86 1
#endif

typedef uint8_t cic_u8x32 __attribute__((vector_size(32)));
typedef int16_t cic_i16x32 __attribute__((vector_size(64)));

/// One pixel: a + ((b − a)·w + 64) >> 7 per byte, w in 0…128.
static inline uint32_t crossfade_pixel(uint32_t pa, uint32_t pb, int16_t w) {
    uint32_t o = 0;
    for (int shift = 0; shift < 32; shift += 8) {
        int ca = (int)((pa >> shift) & 0xFF), cb = (int)((pb >> shift) & 0xFF);
        o |= (uint32_t)(ca + (((cb - ca) * w + 64) >> 7)) << shift;
    }
    return o;
}

/// 8 pixels (32 bytes) at a time: each channel widened to 16 bits, then
/// a + ((b − a)·w + 64) >> 7 with w in 0…128, where (b − a)·w fits in 16
/// bits: one multiply per channel.
static void crossfade_portable(const uint32_t *a, const uint32_t *b, uint32_t *out, size_t count, int16_t w) {
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        cic_u8x32 va, vb;
        memcpy(&va, a + i, 32);
        memcpy(&vb, b + i, 32);
        cic_i16x32 xa = __builtin_convertvector(va, cic_i16x32);
        cic_i16x32 xb = __builtin_convertvector(vb, cic_i16x32);
        cic_i16x32 r = xa + (((xb - xa) * w + 64) >> 7);
        cic_u8x32 o = __builtin_convertvector(r, cic_u8x32);
        memcpy(out + i, &o, 32);
    }
    for (; i < count; i++) out[i] = crossfade_pixel(a[i], b[i], w);
}

#ifdef CIC_X86
// The x86 loops compute (a·(128 − w) + b·w + 64) >> 7, which equals
// a + ((b − a)·w + 64) >> 7 exactly (128·a is a whole multiple of 128):
// bytes of a and b interleaved, then one vpmaddubsw multiplies each pair by
// its weight and adds them. The weights are signed bytes, so w is 1…127
// here (0 and 128 are copies). The sum is at most 255·128: no saturation.
// With `stream`, stores go around the cache once the output is 32-byte
// aligned; the caller fences them (cic_crossfade_fence).

/// 8 pixels of `a` and `b` blended by `weights` ((128 − w, w) byte pairs).
__attribute__((target("avx2")))
static inline __m256i crossfade_8(const uint32_t *a, const uint32_t *b, __m256i weights, __m256i half) {
    __m256i va = _mm256_loadu_si256((const void *)a);
    __m256i vb = _mm256_loadu_si256((const void *)b);
    __m256i lo = _mm256_maddubs_epi16(_mm256_unpacklo_epi8(va, vb), weights);
    __m256i hi = _mm256_maddubs_epi16(_mm256_unpackhi_epi8(va, vb), weights);
    lo = _mm256_srli_epi16(_mm256_add_epi16(lo, half), 7);
    hi = _mm256_srli_epi16(_mm256_add_epi16(hi, half), 7);
    return _mm256_packus_epi16(lo, hi);
}

__attribute__((target("avx2")))
static void crossfade_avx2(const uint32_t *a, const uint32_t *b, uint32_t *out, size_t count, int16_t w, int stream) {
    const __m256i weights = _mm256_set1_epi16((short)((w << 8) | (128 - w)));
    const __m256i half = _mm256_set1_epi16(64);
    size_t i = 0;
    if (stream) {
        // Streamed one by one too: a line written partly around the cache
        // and partly through it costs a partial write-combining flush.
        for (; i < count && ((uintptr_t)(out + i) & 31) != 0; i++)
            _mm_stream_si32((int *)(out + i), (int)crossfade_pixel(a[i], b[i], w));
    }
    // A whole cache line (16 pixels) per turn. The 8-pixel loop this was
    // ran a quarter slower (Zen 5) whenever the linker happened to start it
    // on a 64-byte boundary, which code linked ahead of this file decides;
    // this one measured the same at all four 16-byte placements.
#define CIC_CROSSFADE_16(STORE)                                                         \
    for (; count - i >= 16; i += 16) {                                                  \
        STORE((void *)(out + i), crossfade_8(a + i, b + i, weights, half));             \
        STORE((void *)(out + i + 8), crossfade_8(a + i + 8, b + i + 8, weights, half)); \
    }                                                                                   \
    if (count - i >= 8) {                                                               \
        STORE((void *)(out + i), crossfade_8(a + i, b + i, weights, half));             \
        i += 8;                                                                         \
    }
    if (stream) {
        CIC_CROSSFADE_16(_mm256_stream_si256)
    } else {
        CIC_CROSSFADE_16(_mm256_storeu_si256)
    }
#undef CIC_CROSSFADE_16
    if (stream) {
        for (; i < count; i++) _mm_stream_si32((int *)(out + i), (int)crossfade_pixel(a[i], b[i], w));
    }
    for (; i < count; i++) out[i] = crossfade_pixel(a[i], b[i], w);
}

/// The best loop this CPU has (a benign race: every thread computes the same answer).
static int best_loop(void) {
    static int best = -1;
    if (best < 0) {
        __builtin_cpu_init();
        best = __builtin_cpu_supports("avx2") ? CIC_CROSSFADE_AVX2 : CIC_CROSSFADE_PORTABLE;
    }
    return best;
}
#else
static int best_loop(void) { return CIC_CROSSFADE_PORTABLE; }
#endif

int cic_crossfade_row_using(int loop, const uint32_t *a, const uint32_t *b, uint32_t *out, size_t count,
                            uint32_t weight, int stream) {
    if (loop > best_loop()) return -1;
    int16_t w = (int16_t)(((weight > 256 ? 256 : weight) + 1) / 2);  // 0…128
    if (w == 0 || w == 128) {
        memcpy(out, w == 0 ? a : b, count * 4);
        return 0;
    }
#ifndef CIC_X86
    (void)stream;  // only the AVX2 loop streams; elsewhere every store is ordinary
#endif
    switch (loop) {
#ifdef CIC_X86
    case CIC_CROSSFADE_AVX2: crossfade_avx2(a, b, out, count, w, stream); return 0;
#endif
    default: crossfade_portable(a, b, out, count, w); return 0;
    }
}

void cic_crossfade_row(const uint32_t *a, const uint32_t *b, uint32_t *out, size_t count, uint32_t weight,
                       int stream) {
    (void)cic_crossfade_row_using(best_loop(), a, b, out, count, weight, stream);
}

void cic_crossfade_fence(void) {
#ifdef CIC_X86
    _mm_sfence();
#endif
}

void cic_prefetch(const void *p, size_t bytes) {
    // From the line `p` lies in to the one holding its last byte (stepping
    // from an unaligned `p` would miss the last line).
    uintptr_t line = (uintptr_t)p & ~(uintptr_t)63;
    const uintptr_t end = (uintptr_t)p + bytes;
    for (; line < end; line += 64) __builtin_prefetch((const void *)line);
}
