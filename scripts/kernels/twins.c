// Every C pixel kernel against its twin: the plainest scalar C that says
// what the kernel must compute, over pseudo-random inputs from a fixed seed
// (the same verdict every run). scripts/kernels.sh builds this with the
// kernels' own source files for x86-64, arm64 and armhf and runs the ARM
// builds under qemu-user: the Swift toolchain cannot be had for ARM here,
// so this is what proves the kernels there.
//
// One line per kernel: the cases it checked and how many differed; the
// first difference of each kernel is printed in full (case, index, what the
// kernel wrote, what its twin says). The last line is
// "twins: N passed, M failed" (kernels); the exit status is 1 on any failure.
//
// A new kernel gets a twin and a check here (ARCHITECTURE.md: "A new C pixel
// kernel").
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "CImageCodecs.h"
#include "CFBDev.h"
#include "box.h"
#include "rows.h"

// MARK: Bookkeeping

/// xorshift64*: small, and the same numbers on every architecture.
static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

static uint32_t next_u32(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1DULL) >> 32);
}

/// 0 to n − 1.
static uint32_t below(uint32_t n) { return (uint32_t)(((uint64_t)next_u32() * n) >> 32); }

/// A byte, with the extremes (where sums and differences are largest) often.
static uint8_t any_byte(void) {
    uint32_t r = next_u32();
    switch (r & 7) {
    case 0: return 0;
    case 1: return 255;
    default: return (uint8_t)(r >> 8);
    }
}

static uint32_t any_pixel(void) {
    return (uint32_t)any_byte() | (uint32_t)any_byte() << 8 | (uint32_t)any_byte() << 16
        | (uint32_t)any_byte() << 24;
}

/// A premultiplied pixel: no colour channel above alpha.
static uint32_t premultiplied_pixel(void) {
    uint32_t a = any_byte(), p = a << 24;
    for (int k = 0; k < 3; k++) {
        uint32_t c = (next_u32() & 3) == 0 ? a : below(a + 1);
        p |= c << (8 * k);
    }
    return p;
}

struct kernel {
    const char *name;
    long cases;
    long mismatches;
};

static int failed_kernels = 0, passed_kernels = 0;
static char case_name[160];

static void set_case(const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(case_name, sizeof case_name, format, args);
    va_end(args);
}

/// Counts a difference at `index` of the current case; prints the first.
static void mismatch(struct kernel *k, const char *what, size_t index, uint64_t got, uint64_t expected) {
    if (k->mismatches++ == 0) {
        printf("  FIRST MISMATCH %s: case %s: %s[%zu] = 0x%" PRIx64 ", the twin says 0x%" PRIx64 "\n", k->name,
               case_name, what, index, got, expected);
    }
}

static void report(const struct kernel *k) {
    printf("%-44s %7ld cases, %ld mismatches\n", k->name, k->cases, k->mismatches);
    if (k->mismatches) failed_kernels++;
    else passed_kernels++;
    fflush(stdout);
}

static void *allocate(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "twins: out of memory for %zu bytes\n", bytes);
        exit(2);
    }
    return p;
}

// Outputs live between guards: a kernel must write its output, all of it,
// and nothing around it.
enum { GUARD = 16, GUARD_WORD = 0xA5C3E1F7u };

static void fill_guarded(uint32_t *buffer, size_t words) {
    for (size_t i = 0; i < words; i++) buffer[i] = GUARD_WORD ^ (uint32_t)i;
}

/// Checks the guard words of `buffer` outside [first, first + count).
static void check_guards(struct kernel *k, const uint32_t *buffer, size_t words, size_t first, size_t count) {
    for (size_t i = 0; i < words; i++) {
        if (i >= first && i < first + count) continue;
        if (buffer[i] != (GUARD_WORD ^ (uint32_t)i)) {
            mismatch(k, "a word outside the output", i, buffer[i], GUARD_WORD ^ (uint32_t)i);
            return;
        }
    }
}

// MARK: Crossfade (blend.c)

/// The header's definition: per 8-bit channel a + (b − a)·weight/256 in 128
/// steps (weight 0 to 256, more is 256; w = (weight + 1) / 2, 0 to 128),
/// rounded half up: a + floor(((b − a)·w + 64) / 128).
static uint32_t twin_crossfade_pixel(uint32_t a, uint32_t b, uint32_t weight) {
    const int w = (int)(((weight > 256 ? 256 : weight) + 1) / 2);
    uint32_t out = 0;
    for (int k = 0; k < 4; k++) {
        const int ca = (int)((a >> (8 * k)) & 0xFF), cb = (int)((b >> (8 * k)) & 0xFF);
        const int n = (cb - ca) * w + 64;
        const int floored = n >= 0 ? n / 128 : -((-n + 127) / 128);
        out |= (uint32_t)(ca + floored) << (8 * k);
    }
    return out;
}

/// The loop's name, or NULL once past the last this CPU has.
static const char *crossfade_loop_name(int loop) {
    uint32_t probe = 0;
    if (cic_crossfade_row_using(loop, &probe, &probe, &probe, 0, 0, 0) != 0) return NULL;
    switch (loop) {
    case CIC_CROSSFADE_PORTABLE: return "portable";
    case CIC_CROSSFADE_AVX2: return "avx2";
    default: return "unnamed";
    }
}

/// One row through `loop` (−1: cic_crossfade_row, the loop it picks), `a`,
/// `b` and `out` each `offset` pixels into their buffers.
static void check_crossfade(struct kernel *k, int loop, size_t count, uint32_t weight, int stream,
                            const unsigned offset[3]) {
    uint32_t *a = allocate((count + 4) * 4), *b = allocate((count + 4) * 4);
    const size_t words = count + 2 * GUARD;
    uint32_t *out = allocate(words * 4);
    for (size_t i = 0; i < count + 4; i++) {
        a[i] = any_pixel();
        b[i] = any_pixel();
    }
    fill_guarded(out, words);
    const size_t first = GUARD - 4 + offset[2];
    set_case("count %zu, weight %" PRIu32 ", %s stores, offsets a+%u b+%u out+%u", count, weight,
             stream ? "streamed" : "ordinary", offset[0], offset[1], offset[2]);
    k->cases++;
    if (loop < 0) {
        cic_crossfade_row(a + offset[0], b + offset[1], out + first, count, weight, stream);
    } else if (cic_crossfade_row_using(loop, a + offset[0], b + offset[1], out + first, count, weight, stream) != 0) {
        mismatch(k, "the return value", 0, 1, 0);
    }
    if (stream) cic_crossfade_fence();
    for (size_t i = 0; i < count; i++) {
        const uint32_t expected = twin_crossfade_pixel(a[offset[0] + i], b[offset[1] + i], weight);
        if (out[first + i] != expected) {
            mismatch(k, "out", i, out[first + i], expected);
            break;
        }
    }
    check_guards(k, out, words, first, count);
    free(a);
    free(b);
    free(out);
}

static void crossfade_loop(int loop, const char *name) {
    char title[64];
    snprintf(title, sizeof title, "crossfade %s", name);
    struct kernel k = {title, 0, 0};
    for (int stream = 0; stream <= 1; stream++) {
        // Every weight (and a few past 256) at every short length; the
        // offsets vary with the case, and go through all 64 combinations
        // at a few lengths.
        for (uint32_t weight = 0; weight <= 260; weight++) {
            for (size_t count = 0; count <= 100; count++) {
                const unsigned offset[3] = {below(4), below(4), below(4)};
                check_crossfade(&k, loop, count, weight, stream, offset);
            }
        }
        const uint32_t far_weights[] = {1000, UINT32_MAX};
        for (size_t i = 0; i < 2; i++) {
            const unsigned offset[3] = {1, 2, 3};
            check_crossfade(&k, loop, 37, far_weights[i], stream, offset);
        }
        for (unsigned o = 0; o < 64; o++) {
            const unsigned offset[3] = {o & 3, (o >> 2) & 3, o >> 4};
            const size_t counts[] = {7, 8, 16, 17, 33};
            for (size_t c = 0; c < 5; c++) check_crossfade(&k, loop, counts[c], 1 + below(255), stream, offset);
        }
        // Rows of real screens, and odd long ones.
        const size_t long_counts[] = {1920, 4099, 1080 + 3};
        for (size_t c = 0; c < 3; c++) {
            for (int i = 0; i < 12; i++) {
                const unsigned offset[3] = {below(4), below(4), below(4)};
                check_crossfade(&k, loop, long_counts[c], below(257), stream, offset);
            }
        }
    }
    report(&k);
}

// MARK: Prefetch (blend.c)

// prefetch_lines.c: blend.c's cic_prefetch built with __builtin_prefetch
// recording its addresses instead.
void kt_recorded_prefetch(const void *p, size_t bytes);
extern uintptr_t kt_prefetched[];
extern size_t kt_prefetched_count;

static void check_prefetch(void) {
    struct kernel lines = {"prefetch (the lines it asks for)", 0, 0};
    // Twin: every 64-byte line holding a byte of [p, p + bytes), in order.
    // (Addresses only: nothing is read.)
    for (int i = 0; i < 20000; i++) {
        const uintptr_t p = (uintptr_t)0x10000 + next_u32() % 0x100000;
        const size_t bytes = i < 400 ? (size_t)(i % 200) : below(5000);
        set_case("p 0x%" PRIxPTR ", %zu bytes", p, bytes);
        lines.cases++;
        kt_prefetched_count = 0;
        kt_recorded_prefetch((const void *)p, bytes);
        if (bytes == 0) {
            // Nothing to fetch. blend.c asks for p's own line when p is not
            // at a line's start (a spare hint): allowed, nothing more.
            if (kt_prefetched_count > 1 || (kt_prefetched_count == 1 && kt_prefetched[0] != (p & ~(uintptr_t)63)))
                mismatch(&lines, "lines asked for", 0, kt_prefetched_count, 0);
            continue;
        }
        const uintptr_t first = p / 64, last = (p + bytes - 1) / 64;
        if (kt_prefetched_count != last - first + 1) {
            mismatch(&lines, "the number of lines", 0, kt_prefetched_count, last - first + 1);
            continue;
        }
        for (size_t n = 0; n < kt_prefetched_count; n++) {
            if (kt_prefetched[n] != (first + n) * 64) {
                mismatch(&lines, "line", n, kt_prefetched[n], (first + n) * 64);
                break;
            }
        }
    }
    report(&lines);

    // The real instruction: a hint, never a fault, never a write, even for
    // a range that ends where the mapping does (an unreadable page next).
    struct kernel hint = {"prefetch (the real one: no fault, no write)", 0, 0};
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || mprotect(map + page, page, PROT_NONE) != 0) {
        fprintf(stderr, "twins: cannot map a page and its guard\n");
        exit(2);
    }
    for (size_t i = 0; i < page; i++) map[i] = (uint8_t)(i * 7);
    for (size_t bytes = 0; bytes <= 300; bytes++) {
        set_case("the last %zu bytes before an unreadable page", bytes);
        hint.cases++;
        cic_prefetch(map + page - bytes, bytes);
    }
    for (size_t i = 0; i < page; i++) {
        if (map[i] != (uint8_t)(i * 7)) {
            mismatch(&hint, "memory", i, map[i], (uint8_t)(i * 7));
            break;
        }
    }
    munmap(map, 2 * page);
    report(&hint);
}

// MARK: Box reduction (box.c)

/// One cic_box_add_row call: row `y`, `count` pixels at x0, x0 + step, ….
struct box_call {
    uint32_t y, x0, step, count;
};

/// Overlap of [a0, a1) and [b0, b1).
static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
    const uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

/// Round half up of n / d.
static uint64_t rounded(uint64_t n, uint64_t d) { return (2 * n + d) / (2 * d); }

/// box.c's formula, written out: in units where a source pixel is dw (dh)
/// wide and an output pixel sw (sh), each call's pixels summed per output
/// column weighted by their overlap, normalised to 8.8 (round(sum·256/sw)),
/// added to each output row weighted by the row's overlap; then each output
/// channel round(total / (sh·256)), colour no higher than alpha.
static void twin_box(const uint32_t *source, uint32_t sw, uint32_t sh, uint32_t dw, uint32_t dh,
                     const struct box_call *calls, size_t ncalls, uint32_t *out) {
    uint64_t *acc = calloc((size_t)dw * dh * 4, sizeof *acc);
    if (acc == NULL) exit(2);
    for (size_t c = 0; c < ncalls; c++) {
        const struct box_call *call = &calls[c];
        for (uint32_t o = 0; o < dw; o++) {
            uint64_t sum[4] = {0, 0, 0, 0};
            // Only the source columns under output column o (and below, the
            // output rows over source row y): any others overlap by 0.
            const uint32_t x_end = (uint32_t)(((uint64_t)(o + 1) * sw + dw - 1) / dw);
            for (uint32_t x = (uint32_t)((uint64_t)o * sw / dw); x < x_end; x++) {
                if (x < call->x0 || (x - call->x0) % call->step != 0 || (x - call->x0) / call->step >= call->count)
                    continue;
                const uint64_t wx = overlap((uint64_t)x * dw, (uint64_t)(x + 1) * dw, (uint64_t)o * sw, (uint64_t)(o + 1) * sw);
                const uint32_t p = source[(size_t)call->y * sw + x];
                for (int k = 0; k < 4; k++) sum[k] += ((p >> (8 * k)) & 0xFF) * wx;
            }
            const uint32_t oy_end = (uint32_t)(((uint64_t)(call->y + 1) * dh + sh - 1) / sh);
            for (uint32_t oy = (uint32_t)((uint64_t)call->y * dh / sh); oy < oy_end; oy++) {
                const uint64_t wy = overlap((uint64_t)call->y * dh, (uint64_t)(call->y + 1) * dh, (uint64_t)oy * sh, (uint64_t)(oy + 1) * sh);
                if (wy == 0) continue;
                for (int k = 0; k < 4; k++) acc[((size_t)oy * dw + o) * 4 + k] += rounded(sum[k] * 256, sw) * wy;
            }
        }
    }
    for (size_t i = 0; i < (size_t)dw * dh; i++) {
        uint64_t c[4];
        for (int k = 0; k < 4; k++) c[k] = rounded(acc[4 * i + k], (uint64_t)sh * 256);
        for (int k = 0; k < 3; k++) if (c[k] > c[3]) c[k] = c[3];
        out[i] = (uint32_t)(c[3] << 24 | c[2] << 16 | c[1] << 8 | c[0]);
    }
    free(acc);
}

/// |kernel − exact mean| ≤ 1/2 + 1/512 of a level in every channel (box.c's
/// bound), for a whole-row feed.
static int within_bound(const uint32_t *source, uint32_t sw, uint32_t sh, uint32_t dw, uint32_t dh, uint32_t ox,
                        uint32_t oy, uint32_t got) {
    uint64_t n[4] = {0, 0, 0, 0};
    const uint32_t y_end = (uint32_t)(((uint64_t)(oy + 1) * sh + dh - 1) / dh);
    const uint32_t x_end = (uint32_t)(((uint64_t)(ox + 1) * sw + dw - 1) / dw);
    for (uint32_t y = (uint32_t)((uint64_t)oy * sh / dh); y < y_end; y++) {
        const uint64_t wy = overlap((uint64_t)y * dh, (uint64_t)(y + 1) * dh, (uint64_t)oy * sh, (uint64_t)(oy + 1) * sh);
        for (uint32_t x = (uint32_t)((uint64_t)ox * sw / dw); x < x_end; x++) {
            const uint64_t wx = overlap((uint64_t)x * dw, (uint64_t)(x + 1) * dw, (uint64_t)ox * sw, (uint64_t)(ox + 1) * sw);
            const uint32_t p = source[(size_t)y * sw + x];
            for (int k = 0; k < 4; k++) n[k] += ((p >> (8 * k)) & 0xFF) * wx * wy;
        }
    }
    const uint64_t total = (uint64_t)sw * sh;
    for (int k = 0; k < 4; k++) {
        const uint64_t scaled = ((got >> (8 * k)) & 0xFF) * total;
        const uint64_t distance = scaled > n[k] ? scaled - n[k] : n[k] - scaled;
        if (distance * 512 > 257 * total) return 0;
    }
    return 1;
}

// libpng's Adam7 passes: x0, x step, y0, y step.
static const uint32_t adam7[7][4] = {
    {0, 8, 0, 8}, {4, 8, 0, 8}, {0, 4, 4, 8}, {2, 4, 0, 4}, {0, 2, 2, 4}, {1, 2, 0, 2}, {0, 1, 1, 2},
};

/// What a box case's source holds.
enum box_source {
    PREMULTIPLIED,  ///< what png.c gives it
    ALL_MAX,        ///< every byte 255: the largest sums
    UNPREMULTIPLIED, ///< colour above alpha too: only box.c's clamp keeps it under
};

static void check_box_case(struct kernel *k, uint32_t sw, uint32_t sh, uint32_t dw, uint32_t dh, int whole,
                           enum box_source kind) {
    uint32_t *source = allocate((size_t)sw * sh * 4);
    for (size_t i = 0; i < (size_t)sw * sh; i++)
        source[i] = kind == ALL_MAX ? 0xFFFFFFFFu : kind == UNPREMULTIPLIED ? any_pixel() : premultiplied_pixel();
    // Output rows a little apart: the gaps are guarded too.
    const size_t stride_words = dw + 3, words = stride_words * dh + 2 * GUARD;
    uint32_t *out = allocate(words * 4), *expected = allocate((size_t)dw * dh * 4);
    fill_guarded(out, words);
    set_case("%" PRIu32 "x%" PRIu32 " to %" PRIu32 "x%" PRIu32 ", %s%s", sw, sh, dw, dh,
             whole ? "whole (Adam7 passes)" : "streamed rows",
             kind == ALL_MAX ? ", every byte 255" : kind == UNPREMULTIPLIED ? ", not premultiplied" : "");
    k->cases++;

    // The calls: whole rows in order, or Adam7's passes (sparse rows, out of order).
    size_t ncalls = 0;
    struct box_call *calls = allocate(((size_t)sh * 7 + 1) * sizeof *calls);
    if (!whole) {
        for (uint32_t y = 0; y < sh; y++) calls[ncalls++] = (struct box_call){y, 0, 1, sw};
    } else {
        for (int pass = 0; pass < 7; pass++) {
            const uint32_t *a = adam7[pass];
            if (sw <= a[0]) continue;
            for (uint32_t y = a[2]; y < sh; y += a[3])
                calls[ncalls++] = (struct box_call){y, a[0], a[1], (sw - a[0] + a[1] - 1) / a[1]};
        }
    }

    size_t scratch = 0;
    cic_box *box = cic_box_create(sw, sh, dw, dh, (uint8_t *)(out + GUARD), stride_words * 4, whole, &scratch);
    if (box == NULL) {
        mismatch(k, "cic_box_create's result (NULL)", 0, 0, 1);
    } else {
        uint32_t *row = allocate((size_t)sw * 4);
        for (size_t c = 0; c < ncalls; c++) {
            for (uint32_t i = 0; i < calls[c].count; i++)
                row[i] = source[(size_t)calls[c].y * sw + calls[c].x0 + i * calls[c].step];
            cic_box_add_row(box, calls[c].y, row, calls[c].x0, calls[c].step, calls[c].count);
        }
        cic_box_finish(box);
        cic_box_destroy(box);
        free(row);

        twin_box(source, sw, sh, dw, dh, calls, ncalls, expected);
        for (uint32_t y = 0; y < dh && k->mismatches == 0; y++) {
            for (uint32_t x = 0; x < dw; x++) {
                const uint32_t got = out[GUARD + y * stride_words + x], want = expected[(size_t)y * dw + x];
                if (got != want) {
                    mismatch(k, "out (row-major)", (size_t)y * dw + x, got, want);
                    break;
                }
                if (!whole && kind != UNPREMULTIPLIED && !within_bound(source, sw, sh, dw, dh, x, y, got)) {
                    mismatch(k, "out, off the exact mean by more than 1/2 + 1/512", (size_t)y * dw + x, got, want);
                    break;
                }
            }
        }
        // The guards, and the gaps between output rows.
        for (size_t i = 0; i < words; i++) {
            const size_t at = i - GUARD;
            if (i >= GUARD && at < stride_words * dh && at % stride_words < dw) continue;
            if (out[i] != (GUARD_WORD ^ (uint32_t)i)) {
                mismatch(k, "a word outside the output rows", i, out[i], GUARD_WORD ^ (uint32_t)i);
                break;
            }
        }
    }
    free(calls);
    free(source);
    free(out);
    free(expected);
}

static void check_box(void) {
    struct kernel k = {"box reduction", 0, 0};
    // Sides 1xN, Nx1, primes, powers of two; targets by exact factors (a
    // half, a third, a quarter), by other fractions, 1 and the same size.
    const uint32_t sides[] = {1, 2, 3, 5, 7, 8, 12, 13, 16, 31, 64, 97};
    const size_t nsides = sizeof sides / sizeof sides[0];
    for (size_t i = 0; i < nsides; i++) {
        for (size_t j = 0; j < nsides; j++) {
            const uint32_t sw = sides[i], sh = sides[j];
            uint32_t targets[][2] = {
                {1, 1}, {sw, sh}, {(sw + 1) / 2, (sh + 1) / 2}, {sw / 3 ? sw / 3 : 1, sh / 4 ? sh / 4 : 1},
                {1 + below(sw), 1 + below(sh)}, {1 + below(sw), sh}, {sw, 1 + below(sh)},
            };
            for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++)
                for (int whole = 0; whole <= 1; whole++)
                    check_box_case(&k, sw, sh, targets[t][0], targets[t][1], whole,
                                   (t + whole) % 7 == 4 ? UNPREMULTIPLIED : PREMULTIPLIED);
        }
    }
    // Random shapes up to 150 pixels a side.
    for (int i = 0; i < 60; i++) {
        const uint32_t sw = 1 + below(150), sh = 1 + below(150);
        check_box_case(&k, sw, sh, 1 + below(sw), 1 + below(sh), (int)(i & 1), PREMULTIPLIED);
    }
    // The largest sums box.c's 32-bit accumulators must hold: sides up to
    // 32767 of bytes at 255, reduced to one pixel or a few.
    check_box_case(&k, 32767, 1, 1, 1, 0, ALL_MAX);
    check_box_case(&k, 1, 32767, 1, 1, 0, ALL_MAX);
    check_box_case(&k, 32767, 2, 3, 1, 0, ALL_MAX);
    check_box_case(&k, 3, 32767, 2, 5, 0, ALL_MAX);
    check_box_case(&k, 4000, 3, 7, 2, 1, PREMULTIPLIED);
    report(&k);
}

// MARK: RGB565 (CFBDev.c)

/// The top 5, 6 and 5 bits of red, green and blue; red at bit 11, or at bit
/// 0 with `red_low`.
static uint16_t twin_565(uint32_t p, int red_low) {
    const uint32_t r = (p >> 16) & 0xFF, g = (p >> 8) & 0xFF, b = p & 0xFF;
    const uint32_t high = red_low ? b : r, low = red_low ? r : b;
    return (uint16_t)((high >> 3) << 11 | (g >> 2) << 5 | (low >> 3));
}

static void check_565(void) {
    struct kernel k = {"xrgb to 565 (CFBDev)", 0, 0};
    for (int red_low = 0; red_low <= 1; red_low++) {
        for (int i = 0; i < 2000; i++) {
            const size_t count = i < 202 ? (size_t)(i % 101) : (i % 50 == 0 ? 4096 + below(100) : below(300));
            const unsigned offset = below(4), out_offset = below(4);
            uint32_t *source = allocate((count + 4) * 4);
            // 16-bit words between guards: guard whole 32-bit words around them.
            const size_t words = count / 2 + 2 * GUARD + 2;
            uint32_t *out = allocate(words * 4);
            fill_guarded(out, words);
            for (size_t n = 0; n < count + 4; n++) source[n] = any_pixel();
            uint16_t *dst = (uint16_t *)(out + GUARD) + out_offset;
            set_case("count %zu, %s, offsets source+%u destination+%u (16-bit)", count, red_low ? "BGR565" : "RGB565",
                     offset, out_offset);
            k.cases++;
            cfbdev_xrgb_to_565(source + offset, dst, count, red_low);
            for (size_t n = 0; n < count; n++) {
                const uint16_t want = twin_565(source[offset + n], red_low);
                if (dst[n] != want) {
                    mismatch(&k, "destination", n, dst[n], want);
                    break;
                }
            }
            // The 16-bit words of the guard around the destination.
            const uint16_t *halves = (const uint16_t *)out;
            const size_t first = 2 * GUARD + out_offset;
            for (size_t n = 0; n < 2 * words; n++) {
                if (n >= first && n < first + count) continue;
                const uint32_t word = GUARD_WORD ^ (uint32_t)(n / 2);
                uint16_t want;
                memcpy(&want, (const uint8_t *)&word + 2 * (n % 2), 2);
                if (halves[n] != want) {
                    mismatch(&k, "a 16-bit word outside the destination", n, halves[n], want);
                    break;
                }
            }
            free(source);
            free(out);
        }
    }
    report(&k);
}

// MARK: Row conversions (rows.c)

/// Native 32-bit pixel ↔ its bytes, whatever the byte order: the twins
/// speak in channels of 0xAARRGGBB, the kernels in bytes of memory.
static uint32_t load_pixel(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/// round(c·a/255), half up, done by the book.
static uint32_t twin_premultiplied(uint32_t p) {
    const uint32_t a = p >> 24;
    uint32_t out = a << 24;
    for (int k = 0; k < 3; k++) out |= (((p >> (8 * k)) & 0xFF) * a * 2 + 255) / 510 << (8 * k);
    return out;
}

static void check_premultiply(void) {
    struct kernel k = {"premultiply (rows.c)", 0, 0};
    // Every colour at every alpha (one pixel each, channels differing),
    // then random rows at every offset.
    for (int i = 0; i < 400; i++) {
        const size_t count = i == 0 ? 65536 : (i < 101 ? (size_t)i : below(2000));
        const unsigned offset = below(4);
        uint32_t *row = allocate((count + 4) * 4), *before = allocate((count + 4) * 4);
        for (size_t n = 0; n < count + 4; n++) {
            if (i == 0 && n < 65536) {
                const uint32_t c = n & 0xFF, a = (uint32_t)(n >> 8);
                row[n] = a << 24 | c << 16 | ((c * 7 + 3) & 0xFF) << 8 | (255 - c);
            } else {
                row[n] = any_pixel();
            }
        }
        memcpy(before, row, (count + 4) * 4);
        set_case("count %zu, offset %u%s", count, offset, i == 0 ? " (every colour at every alpha)" : "");
        k.cases++;
        cic_premultiply_row((uint8_t *)(row + offset), (uint32_t)count);
        for (size_t n = 0; n < count + 4; n++) {
            const int inside = n >= offset && n < offset + count;
            const uint32_t want = inside ? twin_premultiplied(before[n]) : before[n];
            const uint32_t got = load_pixel((const uint8_t *)(row + n));
            if (got != want) {
                mismatch(&k, inside ? "row" : "a pixel outside the row", n, got, want);
                break;
            }
        }
        free(row);
        free(before);
    }
    report(&k);
}

/// CMYK bytes (inverted: 255 = no ink) to 0xFFRRGGBB: each of C, M, Y
/// times K over 255, rounded half up.
static uint32_t twin_cmyk(const uint8_t *p, int inverted) {
    uint32_t s[4];
    for (int i = 0; i < 4; i++) s[i] = inverted ? p[i] : 255u - p[i];
    const uint32_t r = (s[0] * s[3] * 2 + 255) / 510, g = (s[1] * s[3] * 2 + 255) / 510,
                   b = (s[2] * s[3] * 2 + 255) / 510;
    return 0xFF000000u | r << 16 | g << 8 | b;
}

static void check_cmyk(void) {
    struct kernel k = {"cmyk to native (rows.c)", 0, 0};
    for (int inverted = 0; inverted <= 1; inverted++) {
        for (int i = 0; i < 300; i++) {
            const size_t count = i == 0 ? 65536 : (i < 101 ? (size_t)i : below(2000));
            uint8_t *row = allocate((count + 1) * 4), *before = allocate((count + 1) * 4);
            for (size_t n = 0; n < count + 1; n++) {
                uint8_t *p = row + 4 * n;
                if (i == 0 && n < 65536) {
                    // Every (ink, black) pair in C, and others in M and Y.
                    p[0] = (uint8_t)n;
                    p[1] = (uint8_t)(n * 3);
                    p[2] = (uint8_t)(255 - n);
                    p[3] = (uint8_t)(n >> 8);
                } else {
                    for (int c = 0; c < 4; c++) p[c] = any_byte();
                }
            }
            memcpy(before, row, (count + 1) * 4);
            set_case("count %zu, %s", count, inverted ? "inverted (Adobe)" : "plain");
            k.cases++;
            cic_cmyk_row_to_native(row, (uint32_t)count, inverted);
            for (size_t n = 0; n < count; n++) {
                const uint32_t want = twin_cmyk(before + 4 * n, inverted), got = load_pixel(row + 4 * n);
                if (got != want) {
                    mismatch(&k, "row", n, got, want);
                    break;
                }
            }
            if (memcmp(row + 4 * count, before + 4 * count, 4) != 0)
                mismatch(&k, "the pixel after the row", count, load_pixel(row + 4 * count), load_pixel(before + 4 * count));
            free(row);
            free(before);
        }
    }
    report(&k);
}

static void check_xrgb_to_rgb(void) {
    struct kernel k = {"xrgb to rgb (rows.c)", 0, 0};
    for (int i = 0; i < 1000; i++) {
        const size_t count = i < 101 ? (size_t)i : below(3000);
        const unsigned offset = below(4);
        uint32_t *source = allocate((count + 4) * 4);
        for (size_t n = 0; n < count + 4; n++) source[n] = any_pixel();
        const size_t bytes = 3 * count + 2 * 4 * GUARD;
        uint8_t *rgb = allocate(bytes);
        for (size_t n = 0; n < bytes; n++) rgb[n] = (uint8_t)(0xA5 ^ n);
        set_case("count %zu, offset %u", count, offset);
        k.cases++;
        cic_xrgb_row_to_rgb(source + offset, rgb + 4 * GUARD, (uint32_t)count);
        for (size_t n = 0; n < bytes; n++) {
            uint8_t want = (uint8_t)(0xA5 ^ n);
            if (n >= 4 * GUARD && n < 4 * GUARD + 3 * count) {
                const size_t at = n - 4 * GUARD;
                const uint32_t p = source[offset + at / 3];
                want = (uint8_t)(p >> (16 - 8 * (at % 3)));  // R, G, B
            }
            if (rgb[n] != want) {
                mismatch(&k, n >= 4 * GUARD && n < 4 * GUARD + 3 * count ? "rgb bytes" : "a byte outside the row",
                         n, rgb[n], want);
                break;
            }
        }
        free(source);
        free(rgb);
    }
    report(&k);
}


// MARK: Pictures kept at 3 bytes a pixel (pack.c)

/// The packed bytes of a pixel: B, G, R of 0xAARRGGBB (pixman's r8g8b8 on a
/// little-endian machine; the kernels' other layout, on big-endian, has no
/// target here).
static void twin_packed(uint32_t p, uint8_t out[3]) {
    out[0] = (uint8_t)p;
    out[1] = (uint8_t)(p >> 8);
    out[2] = (uint8_t)(p >> 16);
}

static const char *pack_loop_name(int loop) {
    static const char *names[] = {"portable", "vector (NEON / SSSE3)"};
    return loop >= 0 && loop < 2 ? names[loop] : NULL;
}

static void check_pack(int loop) {
    char title[96];
    snprintf(title, sizeof title, "pack xrgb to rgb888, %s loop (pack.c)", pack_loop_name(loop));
    struct kernel k = {title, 0, 0};
    const uint32_t probe = 0;
    uint8_t probe_out[3];
    if (cic_pack_xrgb_row_using(loop, &probe, probe_out, 0) != 0) {
        printf("%s: not on this CPU\n", title);
        return;
    }
    for (int i = 0; i < 600; i++) {
        // Every length to 100 (the 16-pixel turns and every tail), then long rows.
        const size_t count = i < 101 ? (size_t)i : below(3000);
        const unsigned offset = below(4);
        const int in_place = i % 2;
        uint32_t *source = allocate((count + 4) * 4);
        for (size_t n = 0; n < count + 4; n++) source[n] = any_pixel();
        uint32_t *copy = allocate((count + 4) * 4);
        memcpy(copy, source, (count + 4) * 4);
        // Out of place: bytes before and after the output stay as they were.
        const size_t bytes = 3 * count + 2 * GUARD;
        uint8_t *out = allocate(bytes);
        for (size_t n = 0; n < bytes; n++) out[n] = (uint8_t)(0xA5 ^ n);
        set_case("count %zu, offset %u, %s", count, offset, in_place ? "in place" : "into another row");
        k.cases++;
        uint8_t *target = in_place ? (uint8_t *)(source + offset) : out + GUARD;
        cic_pack_xrgb_row_using(loop, source + offset, target, count);
        for (size_t n = 0; n < 3 * count; n++) {
            uint8_t want[3];
            twin_packed(copy[offset + n / 3], want);
            if (target[n] != want[n % 3]) {
                mismatch(&k, "packed bytes", n, target[n], want[n % 3]);
                break;
            }
        }
        if (in_place) {
            // The source's pixels past the packed bytes are not the kernel's to change beyond its row.
            for (size_t n = offset + count; n < count + 4; n++) {
                if (source[n] != copy[n]) {
                    mismatch(&k, "a pixel after the row", n, source[n], copy[n]);
                    break;
                }
            }
        } else {
            for (size_t n = 0; n < bytes; n++) {
                if (n >= GUARD && n < GUARD + 3 * count) continue;
                if (out[n] != (uint8_t)(0xA5 ^ n)) {
                    mismatch(&k, "a byte outside the row", n, out[n], (uint8_t)(0xA5 ^ n));
                    break;
                }
            }
        }
        free(source);
        free(copy);
        free(out);
    }
    report(&k);
}

static void check_widen(int loop) {
    char title[96];
    snprintf(title, sizeof title, "widen rgb888 to xrgb, %s loop (pack.c)", pack_loop_name(loop));
    struct kernel k = {title, 0, 0};
    const uint8_t probe[3] = {0};
    uint32_t probe_out;
    if (cic_widen_rgb_row_using(loop, probe, &probe_out, 0) != 0) {
        printf("%s: not on this CPU\n", title);
        return;
    }
    for (int i = 0; i < 600; i++) {
        const size_t count = i < 101 ? (size_t)i : below(3000);
        const unsigned offset = below(16);
        uint8_t *packed = allocate(3 * count + 16);
        for (size_t n = 0; n < 3 * count + 16; n++) packed[n] = any_byte();
        const size_t words = count + 2 * GUARD;
        uint32_t *out = allocate(words * 4);
        for (size_t n = 0; n < words; n++) out[n] = GUARD_WORD;
        set_case("count %zu, offset %u bytes", count, offset);
        k.cases++;
        cic_widen_rgb_row_using(loop, packed + offset, out + GUARD, count);
        for (size_t n = 0; n < words; n++) {
            uint32_t want = GUARD_WORD;
            if (n >= GUARD && n < GUARD + count) {
                const uint8_t *q = packed + offset + 3 * (n - GUARD);
                want = 0xFF000000u | (uint32_t)q[2] << 16 | (uint32_t)q[1] << 8 | q[0];
            }
            const uint32_t got = load_pixel((const uint8_t *)(out + n));
            if (got != want) {
                mismatch(&k, n >= GUARD && n < GUARD + count ? "pixels" : "a pixel outside the row", n, got, want);
                break;
            }
        }
        free(packed);
        free(out);
    }
    report(&k);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int loop = 0;; loop++) {
        const char *name = crossfade_loop_name(loop);
        if (name == NULL) break;
        crossfade_loop(loop, name);
    }
    crossfade_loop(-1, "as dispatched (cic_crossfade_row)");
    check_prefetch();
    check_box();
    check_565();
    check_premultiply();
    check_cmyk();
    check_xrgb_to_rgb();
    for (int loop = 0; pack_loop_name(loop) != NULL; loop++) {
        check_pack(loop);
        check_widen(loop);
    }
    printf("twins: %d passed, %d failed\n", passed_kernels, failed_kernels);
    return failed_kernels ? 1 : 0;
}
