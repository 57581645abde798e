// PNG decoding through libpng 1.6 with error callbacks that longjmp back into
// this file only. See CImageCodecs.h for the contract.
#include "CImageCodecs.h"
#include "box.h"
#include "rows.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

struct cic_png {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t size;
    size_t offset;
    cic_error *err;    // the current call's, where messages go
    // Freed by cic_png_destroy, so that a longjmp cannot leak them.
    png_bytep *rows;   // the row table of a full-size decode
    uint32_t *row;     // one source row of a reduced decode
    cic_box *box;      // the reduction of a reduced decode
    int has_alpha;
    // The latest warning: libpng explains a bad IHDR in warnings ("Image width
    // is zero in IHDR") and then fails with a bare "Invalid IHDR data".
    char last_warning[CIC_MESSAGE_MAX];
};

static void set_error(cic_error *err, cic_error_kind kind, const char *message) {
    if (err == NULL) return;
    err->kind = kind;
    snprintf(err->message, sizeof err->message, "%s", message);
}

// libpng calls this for every error and requires that it does not return.
static void on_png_error(png_structp png, png_const_charp message) {
    cic_png *reader = png_get_error_ptr(png);
    // libpng words allocation failures "Insufficient memory ..." or "... out of memory".
    cic_error_kind kind = CIC_CORRUPT;
    if (strstr(message, "memory") != NULL) kind = CIC_NO_MEMORY;
    if (strcmp(message, "Invalid IHDR data") == 0 && reader->last_warning[0] != '\0') {
        char combined[CIC_MESSAGE_MAX];
        snprintf(combined, sizeof combined, "%.60s: %.130s", message, reader->last_warning);
        set_error(reader->err, kind, combined);
    } else {
        set_error(reader->err, kind, message);
    }
    png_longjmp(png, 1);
}

// libpng warns about things it recovers from (a bad CRC in an ancillary chunk
// is discarded, an unknown sRGB profile ignored). Its default prints to
// stderr; the daemon's log is not the place for that. The text is kept only
// to explain a following error.
static void on_png_warning(png_structp png, png_const_charp message) {
    cic_png *reader = png_get_error_ptr(png);
    snprintf(reader->last_warning, sizeof reader->last_warning, "%s", message);
}

static void on_png_read(png_structp png, png_bytep out, size_t length) {
    cic_png *reader = png_get_io_ptr(png);
    if (length > reader->size - reader->offset) {
        png_error(png, "unexpected end of file (truncated)");
    }
    memcpy(out, reader->data + reader->offset, length);
    reader->offset += length;
}

cic_png *cic_png_create(const uint8_t *data, size_t size) {
    cic_png *reader = calloc(1, sizeof *reader);
    if (reader == NULL) return NULL;
    reader->data = data;
    reader->size = size;
    reader->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, reader, on_png_error, on_png_warning);
    if (reader->png == NULL) {
        free(reader);
        return NULL;
    }
    reader->info = png_create_info_struct(reader->png);
    if (reader->info == NULL) {
        png_destroy_read_struct(&reader->png, NULL, NULL);
        free(reader);
        return NULL;
    }
    png_set_read_fn(reader->png, reader, on_png_read);
    // Our caller checks width x height against max_pixels with its own
    // message; libpng's default per-side limit (1,000,000) would preempt it.
    png_set_user_limits(reader->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    // Ancillary chunks (text, ICC profiles) can be zlib bombs; libpng caps the
    // memory of one decompressed chunk at this many bytes.
    png_set_chunk_malloc_max(reader->png, 8u << 20);
    return reader;
}

int cic_png_read_header(cic_png *reader, uint32_t *width, uint32_t *height,
                        int *has_alpha, cic_error *err) {
    reader->err = err;
    if (setjmp(png_jmpbuf(reader->png))) return -1;
    // Reads the signature and every chunk up to the first IDAT.
    png_read_info(reader->png, reader->info);
    png_uint_32 w = 0, h = 0;
    int bit_depth = 0, color_type = 0;
    png_get_IHDR(reader->png, reader->info, &w, &h, &bit_depth, &color_type, NULL, NULL, NULL);
    reader->has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0
        || png_get_valid(reader->png, reader->info, PNG_INFO_tRNS) != 0;
    *width = w;
    *height = h;
    *has_alpha = reader->has_alpha;
    return 0;
}

// A full-size decode: libpng writes straight into `dst` (and runs the 7
// Adam7 passes over those rows itself).
static void decode_full(cic_png *reader, uint8_t *dst, size_t stride, cic_error *err) {
    png_structp png = reader->png;
    const png_uint_32 width = png_get_image_width(png, reader->info);
    const png_uint_32 height = png_get_image_height(png, reader->info);
    reader->rows = malloc(sizeof(png_bytep) * (size_t)height);
    if (reader->rows == NULL) {
        set_error(err, CIC_NO_MEMORY, "out of memory for PNG row table");
        png_longjmp(png, 1);
    }
    for (png_uint_32 y = 0; y < height; y++) reader->rows[y] = dst + (size_t)y * stride;
    // Reading stops after the last row; we never call png_read_end, so a file
    // that lacks only its IEND chunk still shows. The last IDAT's CRC is still
    // checked when libpng finishes the image data.
    png_read_image(png, reader->rows);
    if (reader->has_alpha) {
        for (png_uint_32 y = 0; y < height; y++) cic_premultiply_row(dst + (size_t)y * stride, width);
    }
}

// A reduced decode: one source row at a time (png_read_row) into the box
// reduction, so memory is the output, one source row and the accumulators.
// An interlaced file delivers its pixels in 7 sparse passes, so no output row
// is complete before the last pass: its reduction keeps an accumulator for
// every output row (16 bytes a pixel, four times the output, still bounded by
// the target and never by the file's size).
static void decode_reduced(cic_png *reader, int interlaced, uint8_t *dst, size_t stride,
                           uint32_t dst_width, uint32_t dst_height, size_t *scratch_bytes, cic_error *err) {
    png_structp png = reader->png;
    const png_uint_32 width = png_get_image_width(png, reader->info);
    const png_uint_32 height = png_get_image_height(png, reader->info);
    size_t box_bytes = 0;
    reader->box = cic_box_create(width, height, dst_width, dst_height, dst, stride, interlaced, &box_bytes);
    reader->row = malloc((size_t)width * 4);
    *scratch_bytes = box_bytes + (size_t)width * 4;
    if (reader->box == NULL || reader->row == NULL) {
        set_error(err, CIC_NO_MEMORY, "out of memory for PNG reduction");
        png_longjmp(png, 1);
    }
    if (!interlaced) {
        for (png_uint_32 y = 0; y < height; y++) {
            png_read_row(png, (png_bytep)reader->row, NULL);
            if (reader->has_alpha) cic_premultiply_row((uint8_t *)reader->row, width);
            cic_box_add_row(reader->box, y, reader->row, 0, 1, width);
        }
    } else {
        // Without png_set_interlace_handling libpng hands over each pass as
        // the small image it is, and skips passes that are empty.
        for (int pass = 0; pass < 7; pass++) {
            const png_uint_32 rows = PNG_PASS_ROWS(height, pass), cols = PNG_PASS_COLS(width, pass);
            if (rows == 0 || cols == 0) continue;
            for (png_uint_32 i = 0; i < rows; i++) {
                png_read_row(png, (png_bytep)reader->row, NULL);
                if (reader->has_alpha) cic_premultiply_row((uint8_t *)reader->row, cols);
                cic_box_add_row(reader->box, PNG_ROW_FROM_PASS_ROW(i, pass), reader->row,
                                PNG_PASS_START_COL(pass), 1u << PNG_PASS_COL_SHIFT(pass), cols);
            }
        }
    }
    cic_box_finish(reader->box);
}

int cic_png_decode(cic_png *reader, uint8_t *dst, size_t stride, uint32_t dst_width, uint32_t dst_height,
                   size_t *scratch_bytes, cic_error *err) {
    reader->err = err;
    *scratch_bytes = 0;
    png_structp png = reader->png;
    png_infop info = reader->info;
    if (setjmp(png_jmpbuf(png))) return -1;

    const int color_type = png_get_color_type(png, info);
    const int bit_depth = png_get_bit_depth(png, info);
    const png_uint_32 width = png_get_image_width(png, info);
    const png_uint_32 height = png_get_image_height(png, info);
    const int interlaced = png_get_interlace_type(png, info) != PNG_INTERLACE_NONE;
    const int reduced = dst_width != width || dst_height != height;
    if (dst_width == 0 || dst_height == 0 || dst_width > width || dst_height > height) {
        set_error(err, CIC_LIMIT, "PNG output size must be within the image's");
        return -1;
    }

    // Normalise every PNG flavour to 8-bit RGBA with libpng's transforms:
    // palette -> RGB, gray 1/2/4 -> 8 bits, tRNS -> alpha channel.
    png_set_expand(png);
    // 16-bit samples: scale_16 rounds (v * 255 / 65535); strip_16 would truncate.
    if (bit_depth == 16) png_set_scale_16(png);
    if ((color_type & PNG_COLOR_MASK_COLOR) == 0) png_set_gray_to_rgb(png);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    png_set_bgr(png);  // memory order B, G, R, A = native 0xAARRGGBB
    if (!reader->has_alpha) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
#else
    png_set_swap_alpha(png);  // A, R, G, B
    if (!reader->has_alpha) png_set_filler(png, 0xFF, PNG_FILLER_BEFORE);
#endif
    // Adam7 at full size: libpng runs the 7 passes over the full rows we hand
    // it. A reduced decode takes the passes one by one instead.
    if (!reduced) png_set_interlace_handling(png);
    // gAMA, cHRM and iCCP are deliberately not applied: samples are shown as
    // sRGB, as the JPEG and WebP paths do.
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) {
        set_error(err, CIC_UNSUPPORTED, "PNG layout could not be converted to 32-bit pixels");
        return -1;
    }

    if (reduced) {
        decode_reduced(reader, interlaced, dst, stride, dst_width, dst_height, scratch_bytes, err);
    } else {
        decode_full(reader, dst, stride, err);
    }
    return 0;
}

void cic_png_destroy(cic_png *reader) {
    if (reader == NULL) return;
    png_destroy_read_struct(&reader->png, &reader->info, NULL);
    free(reader->rows);
    free(reader->row);
    cic_box_destroy(reader->box);
    free(reader);
}
