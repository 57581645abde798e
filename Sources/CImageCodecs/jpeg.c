// JPEG decoding through libjpeg-turbo with an error manager that returns
// instead of exiting. See CImageCodecs.h for the contract.
#include "CImageCodecs.h"
#include "rows.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

// A progressive JPEG may hold any number of scans, each of which makes
// libjpeg walk the whole coefficient buffer: a few KB of crafted scans can
// cost minutes of CPU. libjpeg-turbo's TurboJPEG API refuses more than 500
// (TJFLAG_LIMITSCANS); we apply the same bound through the progress monitor.
enum { CIC_JPEG_MAX_SCANS = 500 };

struct cic_jpeg {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr error_mgr;
    struct jpeg_progress_mgr progress;
    // Armed by every public entry point before it calls into libjpeg; the
    // error handler longjmps here, never across a Swift frame.
    jmp_buf jump;
    cic_error *err;  // the current call's, where messages go
    const uint8_t *data;
    size_t size;
    int created;     // jpeg_create_decompress succeeded
    int is_cmyk;     // decoded as CMYK and converted by us
};

static void set_error(cic_error *err, cic_error_kind kind, const char *message) {
    if (err == NULL) return;
    err->kind = kind;
    snprintf(err->message, sizeof err->message, "%s", message);
}

static cic_error_kind kind_for_code(int code) {
    switch (code) {
    case JERR_OUT_OF_MEMORY:
        return CIC_NO_MEMORY;
    case JERR_BAD_PRECISION:       // 12-bit and 16-bit lossless files
    case JERR_NOT_COMPILED:
    case JERR_NOTIMPL:
    case JERR_CONVERSION_NOTIMPL:  // unusual component counts / color spaces
        return CIC_UNSUPPORTED;
    default:
        return CIC_CORRUPT;
    }
}

// Replaces libjpeg's error_exit, which would print and call exit().
static void on_error_exit(j_common_ptr cinfo) {
    cic_jpeg *jpeg = (cic_jpeg *)cinfo->client_data;
    char buffer[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, buffer);
    set_error(jpeg->err, kind_for_code(cinfo->err->msg_code), buffer);
    longjmp(jpeg->jump, 1);
}

// Replaces emit_message, which would print warnings to stderr. Most warnings
// are about recoverable damage (extraneous bytes before a marker, which many
// cameras write) and libjpeg carries on; we do too. A premature end of file
// is different: libjpeg pads the rest of the image with grey, and showing
// half a grey photo is worse than skipping it, so it becomes an error.
static void on_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level >= 0) return;  // trace output
    if (cinfo->err->msg_code == JWRN_JPEG_EOF) on_error_exit(cinfo);
    cinfo->err->num_warnings++;
}

static void on_progress(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return;
    cic_jpeg *jpeg = (cic_jpeg *)cinfo->client_data;
    if (jpeg->cinfo.input_scan_number > CIC_JPEG_MAX_SCANS) {
        char message[CIC_MESSAGE_MAX];
        snprintf(message, sizeof message,
                 "progressive JPEG with more than %d scans (refused as a likely denial of service)",
                 CIC_JPEG_MAX_SCANS);
        set_error(jpeg->err, CIC_LIMIT, message);
        longjmp(jpeg->jump, 1);
    }
}

// The setjmp lives in its own frame so that `jpeg` is a parameter that is
// never assigned after setjmp, which longjmp cannot clobber.
static int create_decompressor(cic_jpeg *jpeg) {
    if (setjmp(jpeg->jump)) {
        // jpeg_create_decompress fails only when its memory manager cannot be
        // allocated; jpeg_destroy_decompress copes with the half-made struct.
        jpeg_destroy_decompress(&jpeg->cinfo);
        return -1;
    }
    jpeg_create_decompress(&jpeg->cinfo);
    return 0;
}

cic_jpeg *cic_jpeg_create(const uint8_t *data, size_t size) {
    cic_jpeg *jpeg = calloc(1, sizeof *jpeg);
    if (jpeg == NULL) return NULL;
    jpeg->data = data;
    jpeg->size = size;
    jpeg->cinfo.err = jpeg_std_error(&jpeg->error_mgr);
    jpeg->error_mgr.error_exit = on_error_exit;
    jpeg->error_mgr.emit_message = on_emit_message;
    jpeg->cinfo.client_data = jpeg;
    if (create_decompressor(jpeg) != 0) {
        free(jpeg);
        return NULL;
    }
    jpeg->created = 1;
    jpeg->progress.progress_monitor = on_progress;
    jpeg->cinfo.progress = &jpeg->progress;
    return jpeg;
}

int cic_jpeg_read_header(cic_jpeg *jpeg, uint32_t *width, uint32_t *height,
                         int *is_cmyk, cic_error *err) {
    jpeg->err = err;
    if (setjmp(jpeg->jump)) return -1;
    // jpeg_mem_src reads from our buffer; it fails with JERR_INPUT_EMPTY for
    // zero bytes, hence inside the setjmp.
    jpeg_mem_src(&jpeg->cinfo, jpeg->data, (unsigned long)jpeg->size);
    // TRUE: a tables-only ("abbreviated") stream is an error, not a success.
    jpeg_read_header(&jpeg->cinfo, TRUE);

    switch (jpeg->cinfo.jpeg_color_space) {
    case JCS_CMYK:
    case JCS_YCCK:
        // libjpeg-turbo has no CMYK -> RGB conversion; we take CMYK and convert.
        jpeg->cinfo.out_color_space = JCS_CMYK;
        jpeg->is_cmyk = 1;
        break;
    default:
        // Gray, YCbCr and RGB convert straight into 32-bit pixels. The "EXT"
        // color spaces are libjpeg-turbo extensions; the alpha byte is set to
        // 0xFF. B,G,R,A in memory is a native 0xAARRGGBB on little-endian.
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        jpeg->cinfo.out_color_space = JCS_EXT_BGRA;
#else
        jpeg->cinfo.out_color_space = JCS_EXT_ARGB;
#endif
        jpeg->is_cmyk = 0;
        break;
    }
    *width = jpeg->cinfo.image_width;
    *height = jpeg->cinfo.image_height;
    *is_cmyk = jpeg->is_cmyk;
    return 0;
}

size_t cic_jpeg_coefficient_bytes(const cic_jpeg *jpeg) {
    const struct jpeg_decompress_struct *cinfo = &jpeg->cinfo;
    // What libjpeg's input controller decides at the first SOS (jdinput.c,
    // initial_setup): several scans when the first one has fewer components
    // than the frame, or the file is progressive. Then its coefficient
    // controller (jdcoefct.c) keeps a whole-image array per component, its
    // blocks rounded up to the sampling factors, of JBLOCKs (64 JCOEFs of 2
    // bytes).
    if (!cinfo->progressive_mode && cinfo->comps_in_scan >= cinfo->num_components) return 0;
    size_t total = 0;
    for (int i = 0; i < cinfo->num_components; i++) {
        const jpeg_component_info *c = &cinfo->comp_info[i];
        size_t across = (c->width_in_blocks + c->h_samp_factor - 1) / c->h_samp_factor * c->h_samp_factor;
        size_t down = (c->height_in_blocks + c->v_samp_factor - 1) / c->v_samp_factor * c->v_samp_factor;
        total += across * down * sizeof(JBLOCK);
    }
    return total;
}

int cic_jpeg_set_scale(cic_jpeg *jpeg, unsigned scale_eighths,
                       uint32_t *out_width, uint32_t *out_height, cic_error *err) {
    jpeg->err = err;
    if (scale_eighths < 1 || scale_eighths > 8) {
        set_error(err, CIC_LIMIT, "JPEG scale must be 1/8 to 8/8");
        return -1;
    }
    if (setjmp(jpeg->jump)) return -1;
    // libjpeg-turbo scales in the DCT domain by any n/8: it runs a smaller
    // inverse DCT per 8x8 block, so a 1/4 decode does about 1/16 of the work
    // and never holds the full-size image. Output size is ceil(size * n / 8).
    jpeg->cinfo.scale_num = scale_eighths;
    jpeg->cinfo.scale_denom = 8;
    jpeg_calc_output_dimensions(&jpeg->cinfo);
    *out_width = jpeg->cinfo.output_width;
    *out_height = jpeg->cinfo.output_height;
    return 0;
}

int cic_jpeg_is_cmyk(const cic_jpeg *jpeg) { return jpeg->is_cmyk; }

int cic_jpeg_decode(cic_jpeg *jpeg, uint8_t *dst, size_t stride, int packed, cic_error *err) {
    jpeg->err = err;
    if (packed && jpeg->is_cmyk) {
        set_error(err, CIC_UNSUPPORTED, "a CMYK JPEG decodes to 32-bit pixels only");
        return -1;
    }
    if (setjmp(jpeg->jump)) return -1;
    if (packed) {
        // 3 bytes a pixel, as the decode cache keeps pictures: the value
        // 0xRRGGBB in the machine's byte order (pixman's r8g8b8).
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        jpeg->cinfo.out_color_space = JCS_EXT_BGR;
#else
        jpeg->cinfo.out_color_space = JCS_EXT_RGB;
#endif
    }
    // A baseline file streams: DCT scaling keeps libjpeg's own buffers to a
    // few block rows. A progressive one refines every block in every scan,
    // so jpeg_start_decompress allocates the whole image's coefficients, 2
    // bytes per sample at full size whatever the scale (145 MB for a 24 MP
    // 4:4:4 photo). FIXME: bound it (cinfo.mem->max_memory_to_use makes
    // libjpeg fail with "Backing store not supported" past a limit), which
    // needs a policy for refusing valid pictures; until then max_pixels is
    // the only bound.
    jpeg_start_decompress(&jpeg->cinfo);
    if (jpeg->cinfo.output_components != (packed ? 3 : 4)) {
        set_error(err, CIC_UNSUPPORTED, "JPEG color space cannot be converted to RGB");
        return -1;
    }
    const uint32_t width = jpeg->cinfo.output_width;
    const int inverted = jpeg->cinfo.saw_Adobe_marker;
    while (jpeg->cinfo.output_scanline < jpeg->cinfo.output_height) {
        // Offer several rows at once: some upsamplers produce two per call.
        enum { BATCH = 16 };
        JSAMPROW rows[BATCH];
        JDIMENSION first = jpeg->cinfo.output_scanline;
        JDIMENSION count = jpeg->cinfo.output_height - first;
        if (count > BATCH) count = BATCH;
        for (JDIMENSION i = 0; i < count; i++) rows[i] = dst + (size_t)(first + i) * stride;
        JDIMENSION got = jpeg_read_scanlines(&jpeg->cinfo, rows, count);
        if (jpeg->is_cmyk) {
            for (JDIMENSION i = 0; i < got; i++) cic_cmyk_row_to_native(rows[i], width, inverted);
        }
        if (got == 0) {
            // Only a suspending data source returns 0 rows; ours never
            // suspends, so this means the stream is unusable.
            set_error(err, CIC_CORRUPT, "decoder made no progress");
            return -1;
        }
    }
    // Not jpeg_finish_decompress: it would read on to the EOI marker and
    // fail a file whose pixels are all here but whose last 2 bytes are not.
    jpeg_abort_decompress(&jpeg->cinfo);
    return 0;
}

void cic_jpeg_destroy(cic_jpeg *jpeg) {
    if (jpeg == NULL) return;
    // libjpeg documents jpeg_destroy_decompress as safe after an error exit.
    if (jpeg->created) jpeg_destroy_decompress(&jpeg->cinfo);
    free(jpeg);
}
