// The streaming box reduction behind PNG's reduced decode. See box.h.
//
// Each output pixel is the mean of the source area under it, partial source
// pixels weighted by the part they cover: the area average that pixman's
// BOX/BOX separable convolution (what ImageScaler uses for large
// reductions) computes, here done while the rows stream past, so that a
// 62 MP PNG never needs its full-size pixels in memory.
//
// Exact integer arithmetic. Along x, source pixel x spans [x*dw, (x+1)*dw)
// and output pixel o spans [o*sw, (o+1)*sw) in the same units, so every
// overlap is an integer, at most dw (a source pixel is never wider than an
// output pixel: this only reduces) and the overlaps under one output pixel
// add up to sw. Likewise along y. With sides at most 32767:
//   row sums   sum(c * wx)           <= 255 * sw            < 2^23
//   normalised t = sum * 256 / sw    <= 65280               (8.8 fixed point)
//   column sum sum(t * wy)           <= 65280 * sh          < 2^31
// so 32-bit accumulators suffice and the result rounds to within 1/512 of a
// level of the exact mean.
#include "box.h"

#include <stdlib.h>
#include <string.h>

enum { CIC_BOX_MAX_SIDE = 32767 };

struct cic_box {
    uint32_t sw, sh, dw, dh;
    uint8_t *dst;
    size_t dst_stride;
    int whole;
    uint32_t *column;        // sw: the first output column source column x touches
    uint32_t *column_weight; // sw: its overlap with that column (the rest goes to the next)
    uint32_t *row_sum;       // dw * 4: one source row reduced along x
    uint32_t *acc;           // rows * dw * 4: output rows being summed along y
    uint32_t rows;           // 2, or dh when whole
    uint32_t next_emit;      // the first output row not written yet
};

cic_box *cic_box_create(uint32_t sw, uint32_t sh, uint32_t dw, uint32_t dh,
                        uint8_t *dst, size_t dst_stride, int whole, size_t *scratch_bytes) {
    *scratch_bytes = 0;
    if (sw == 0 || sh == 0 || dw == 0 || dh == 0 || dw > sw || dh > sh
        || sw > CIC_BOX_MAX_SIDE || sh > CIC_BOX_MAX_SIDE) return NULL;
    cic_box *box = calloc(1, sizeof *box);
    if (box == NULL) return NULL;
    box->sw = sw;
    box->sh = sh;
    box->dw = dw;
    box->dh = dh;
    box->dst = dst;
    box->dst_stride = dst_stride;
    box->whole = whole;
    box->rows = whole ? dh : (dh < 2 ? dh : 2);
    // 32767 * 32767 * 16 overflows a 32-bit size_t: refuse rather than wrap.
    const size_t row_bytes = (size_t)dw * 4 * sizeof(uint32_t);
    if (box->rows > SIZE_MAX / row_bytes) {
        free(box);
        return NULL;
    }
    const size_t acc_bytes = row_bytes * box->rows;
    box->column = malloc((size_t)sw * sizeof(uint32_t));
    box->column_weight = malloc((size_t)sw * sizeof(uint32_t));
    box->row_sum = malloc(row_bytes);
    box->acc = calloc(1, acc_bytes);
    *scratch_bytes = sizeof *box + 2 * (size_t)sw * sizeof(uint32_t) + row_bytes + acc_bytes;
    if (box->column == NULL || box->column_weight == NULL || box->row_sum == NULL || box->acc == NULL) {
        cic_box_destroy(box);
        return NULL;
    }
    for (uint32_t x = 0; x < sw; x++) {
        const uint64_t start = (uint64_t)x * dw, end = start + dw;
        const uint64_t o = start / sw;
        const uint64_t boundary = (o + 1) * sw;
        box->column[x] = (uint32_t)o;
        box->column_weight[x] = (uint32_t)((end <= boundary ? end : boundary) - start);
    }
    return box;
}

// Writes output row `oy` from its accumulator and clears the accumulator.
static void emit(cic_box *box, uint32_t oy) {
    uint32_t *acc = box->acc + (size_t)(oy % box->rows) * box->dw * 4;
    uint32_t *out = (uint32_t *)(box->dst + (size_t)oy * box->dst_stride);
    const uint32_t total = box->sh * 256;
    for (uint32_t x = 0; x < box->dw; x++) {
        uint32_t c[4];
        for (int k = 0; k < 4; k++) c[k] = (uint32_t)(((uint64_t)acc[4 * x + k] + total / 2) / total);
        // Premultiplied colour never exceeds alpha; rounding each channel on
        // its own could, by one.
        for (int k = 0; k < 3; k++) if (c[k] > c[3]) c[k] = c[3];
        out[x] = c[3] << 24 | c[2] << 16 | c[1] << 8 | c[0];
    }
    memset(acc, 0, (size_t)box->dw * 4 * sizeof(uint32_t));
}

void cic_box_add_row(cic_box *box, uint32_t y, const uint32_t *pixels,
                     uint32_t x0, uint32_t step, uint32_t count) {
    const uint32_t dw = box->dw;
    uint32_t *sum = box->row_sum;
    memset(sum, 0, (size_t)dw * 4 * sizeof(uint32_t));
    uint32_t x = x0;
    for (uint32_t i = 0; i < count; i++, x += step) {
        const uint32_t p = pixels[i];
        const uint32_t o = box->column[x], wa = box->column_weight[x], wb = dw - wa;
        // Channels by shifts of the native word: B, G, R, A as k = 0...3.
        uint32_t *s = sum + 4 * (size_t)o;
        for (int k = 0; k < 4; k++) s[k] += ((p >> (8 * k)) & 0xFF) * wa;
        if (wb != 0) {
            for (int k = 0; k < 4; k++) s[4 + k] += ((p >> (8 * k)) & 0xFF) * wb;
        }
    }

    const uint64_t start = (uint64_t)y * box->dh, end = start + box->dh;
    const uint32_t oy = (uint32_t)(start / box->sh);
    const uint64_t boundary = ((uint64_t)oy + 1) * box->sh;
    const uint32_t wa = (uint32_t)((end <= boundary ? end : boundary) - start), wb = box->dh - wa;
    uint32_t *first = box->acc + (size_t)(oy % box->rows) * dw * 4;
    uint32_t *second = wb != 0 ? box->acc + (size_t)((oy + 1) % box->rows) * dw * 4 : NULL;
    const uint32_t sw = box->sw;
    for (size_t i = 0; i < (size_t)dw * 4; i++) {
        if (sum[i] == 0) continue;
        const uint32_t t = (uint32_t)(((uint64_t)sum[i] * 256 + sw / 2) / sw);
        first[i] += t * wa;
        if (second != NULL) second[i] += t * wb;
    }

    if (!box->whole) {
        // Output rows that end at or before this source row's end are complete.
        const uint32_t complete = (uint32_t)(end / box->sh);
        while (box->next_emit < complete && box->next_emit < box->dh) emit(box, box->next_emit++);
    }
}

void cic_box_finish(cic_box *box) {
    while (box->next_emit < box->dh) emit(box, box->next_emit++);
}

void cic_box_destroy(cic_box *box) {
    if (box == NULL) return;
    free(box->column);
    free(box->column_weight);
    free(box->row_sum);
    free(box->acc);
    free(box);
}
