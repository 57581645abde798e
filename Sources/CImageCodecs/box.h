// A streaming area-average (box) reduction: source pixels go in a row at a
// time, reduced rows come out as soon as no later source row can touch them.
// Private to CImageCodecs (Swift never sees it).
#ifndef CIC_BOX_H
#define CIC_BOX_H

#include <stddef.h>
#include <stdint.h>

typedef struct cic_box cic_box;

/// A reducer from `src_w` x `src_h` to `dst_w` x `dst_h` (each at most the
/// source's, at most 32767, at least 1) writing into `dst` (`dst_h` rows of
/// `dst_stride` bytes of native 32-bit pixels).
///
/// With `whole` set, it keeps an accumulator for every output row, so that
/// source rows may come in any order and sparsely (Adam7 passes); otherwise
/// it keeps two and rows must come in order, each whole. Accumulators cost
/// 16 bytes per output pixel. Returns NULL when out of memory; `*scratch_bytes`
/// gets what it allocated either way.
cic_box *cic_box_create(uint32_t src_w, uint32_t src_h, uint32_t dst_w, uint32_t dst_h,
                        uint8_t *dst, size_t dst_stride, int whole, size_t *scratch_bytes);

/// Adds the `count` pixels of source row `y` at columns x0, x0 + step, …
/// (pixels premultiplied, if they have alpha). Without `whole`, rows must come
/// in order and whole (x0 = 0, step = 1, count = src_w); finished output rows
/// are written at once.
void cic_box_add_row(cic_box *box, uint32_t y, const uint32_t *pixels,
                     uint32_t x0, uint32_t step, uint32_t count);

/// Writes every output row not written yet (all of them with `whole`).
void cic_box_finish(cic_box *box);

/// Accepts NULL.
void cic_box_destroy(cic_box *box);

#endif
