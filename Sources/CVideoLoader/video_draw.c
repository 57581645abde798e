// See CVideoLoader.h: the current frame scaled into the caller's XRGB8888
// buffer and turned upright (libswscale).
#include "video_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cvideo_set_scaler(cvideo_clip *clip, cvideo_scaler scaler, int accurate_rounding) {
    static const int algorithms[] = {SWS_POINT, SWS_FAST_BILINEAR, SWS_BILINEAR, SWS_BICUBIC};
    clip->scaler_flags = algorithms[scaler <= cvideo_scaler_bicubic ? scaler : cvideo_scaler_bilinear]
        | (accurate_rounding ? SWS_ACCURATE_RND : 0);
}

// Native-endian 0xAARRGGBB words: BGRA in memory on little-endian machines.
#define CVIDEO_OUTPUT_FORMAT AV_PIX_FMT_RGB32

/// The scaler from the current frame to `width` x `height`, made again only
/// when the frame's format or colour, the size or the flags change.
static int prepare_scaler(cvideo_clip *clip, int width, int height, char *error, size_t error_size) {
    AVFrame *frame = clip->current;
    int key[8] = {frame->width, frame->height, frame->format, frame->colorspace, frame->color_range, width, height,
                  clip->scaler_flags};
    if (clip->sws && memcmp(key, clip->sws_key, sizeof key) == 0) return 0;
    if (!ff.sws.sws_isSupportedInput(frame->format)) {
        const char *name = ff.util.av_get_pix_fmt_name(frame->format);
        snprintf(error, error_size, "libswscale cannot convert %s frames", name ? name : "these");
        return -1;
    }
    clip->sws = ff.sws.sws_getCachedContext(clip->sws, frame->width, frame->height, frame->format, width, height,
                                            CVIDEO_OUTPUT_FORMAT, clip->scaler_flags, NULL, NULL, NULL);
    if (clip->sws == NULL) {
        snprintf(error, error_size, "libswscale cannot scale %dx%d to %dx%d", frame->width, frame->height, width, height);
        memset(clip->sws_key, 0, sizeof clip->sws_key);
        return -1;
    }
    // The stream's matrix and range, as ffmpeg's scale filter takes them
    // from the frame: an unspecified range keeps libswscale's default for
    // the format (limited for yuv*, full for yuvj*); an unspecified matrix is
    // BT.601 (sws_getCoefficients' default).
    int *inverse, *table, source_full, destination_full, brightness, contrast, saturation;
    if (ff.sws.sws_getColorspaceDetails(clip->sws, &inverse, &source_full, &table, &destination_full, &brightness,
                                        &contrast, &saturation) >= 0) {
        if (frame->color_range == AVCOL_RANGE_JPEG) source_full = 1;
        if (frame->color_range == AVCOL_RANGE_MPEG) source_full = 0;
        // Fails for RGB sources, which have no matrix: nothing to set then.
        ff.sws.sws_setColorspaceDetails(clip->sws, ff.sws.sws_getCoefficients(frame->colorspace), source_full,
                                        ff.sws.sws_getCoefficients(SWS_CS_DEFAULT), 1, brightness, contrast,
                                        saturation);
    }
    memcpy(clip->sws_key, key, sizeof key);
    return 0;
}

static int scale_into(cvideo_clip *clip, uint8_t *destination, ptrdiff_t stride, int height) {
    uint8_t *planes[4] = {destination, NULL, NULL, NULL};
    int strides[4] = {(int)stride, 0, 0, 0};
    return ff.sws.sws_scale(clip->sws, (const uint8_t *const *)clip->current->data, clip->current->linesize, 0,
                            clip->current->height, planes, strides) == height ? 0 : -1;
}

static void force_opaque(uint8_t *row, ptrdiff_t stride, int width, int height) {
    for (int y = 0; y < height; y++, row += stride) {
        uint32_t *pixel = (uint32_t *)row;
        for (int x = 0; x < width; x++) pixel[x] |= 0xFF000000u;
    }
}

int cvideo_draw(cvideo_clip *clip, void *dest, int width, int height, ptrdiff_t stride, int rx, int ry, int rw, int rh,
                char *error, size_t error_size) {
    if (clip->current->data[0] == NULL) {
        snprintf(error, error_size, "no frame to draw: next() has not returned one");
        return -1;
    }
    if (rw <= 0 || rh <= 0 || width <= 0 || height <= 0) return 0;
    int left = rx > 0 ? rx : 0, top = ry > 0 ? ry : 0;
    int64_t right64 = (int64_t)rx + rw, bottom64 = (int64_t)ry + rh;
    int right = right64 < width ? (int)right64 : width, bottom = bottom64 < height ? (int)bottom64 : height;
    if (right <= left || bottom <= top) return 0;
    const AVPixFmtDescriptor *descriptor = ff.util.av_pix_fmt_desc_get(clip->current->format);
    int has_alpha = descriptor && (descriptor->flags & AV_PIX_FMT_FLAG_ALPHA);
    uint8_t *base = dest;

    // The common case: upright frames, the rectangle inside and a multiple
    // of 16 pixels wide: one sws_scale straight into the destination.
    // libswscale writes a row in blocks of 8 pixels (x86's SIMD output and
    // yuv2rgb, up to the stride) or 16 (aarch64's NEON yuv2rgb): a width
    // that is not a multiple overwrites up to 15 pixels right of the
    // rectangle, which are the caller's (the picture around a clip, or past
    // the buffer's end on its last row). The clip target found it
    // (Fuzz/corpus/clip/hevc-mkv: 4 pixels wide at x = 4 wrote x = 8).
    if (clip->rotation == 0 && left == rx && top == ry && right == rx + rw && bottom == ry + rh && rw % 16 == 0) {
        if (prepare_scaler(clip, rw, rh, error, error_size) != 0) return -1;
        uint8_t *origin = base + (ptrdiff_t)ry * stride + (ptrdiff_t)rx * 4;
        if (scale_into(clip, origin, stride, rh) != 0) {
            snprintf(error, error_size, "libswscale failed");
            return -1;
        }
        if (has_alpha) force_opaque(origin, stride, rw, rh);
        return 0;
    }

    // Otherwise the whole rectangle in coded orientation into the scratch
    // buffer, then its visible part turned into the destination.
    // FIXME: a cover crop scales rows and columns nobody sees (a 2400x1350
    // rectangle on a 1920x1080 panel is 15x a memcpy against 8x straight
    // into dest, carousel-bench --video). FFmpeg 5's sws_receive_slice can
    // produce only the visible rows, straight into dest when only the
    // vertical overflows; it wants the destination as a refcounted AVFrame,
    // i.e. a small allocation a frame, so it waits for a measurement on a board.
    int quarter = clip->rotation == 90 || clip->rotation == 270;
    int cw = quarter ? rh : rw, ch = quarter ? rw : rh;
    // A rectangle far larger than any clip is a caller's mistake, not a
    // reason to allocate gigabytes.
    if ((int64_t)cw * ch > ((int64_t)1 << 26)) {
        snprintf(error, error_size, "cannot draw into a %dx%d rectangle: larger than 64 megapixels", rw, rh);
        return -1;
    }
    // Rows padded to 16 pixels: what libswscale writes past cw stays in its row.
    size_t pitch = ((size_t)cw + 15) & ~(size_t)15;
    size_t cstride = pitch * 4;
    size_t needed = cstride * (size_t)ch;
    if (needed > clip->scratch_size) {
        free(clip->scratch);
        clip->scratch_size = 0;
        if (posix_memalign((void **)&clip->scratch, 64, needed) != 0) {
            clip->scratch = NULL;
            snprintf(error, error_size, "out of memory for a %dx%d frame", cw, ch);
            return -1;
        }
        clip->scratch_size = needed;
    }
    if (prepare_scaler(clip, cw, ch, error, error_size) != 0) return -1;
    if (scale_into(clip, clip->scratch, (ptrdiff_t)cstride, ch) != 0) {
        snprintf(error, error_size, "libswscale failed");
        return -1;
    }
    const uint32_t *coded = (const uint32_t *)clip->scratch;
    uint32_t opaque = has_alpha ? 0xFF000000u : 0;
    for (int y = top; y < bottom; y++) {
        uint32_t *row = (uint32_t *)(base + (ptrdiff_t)y * stride);
        int v = y - ry;
        int u0 = left - rx, count = right - left;
        switch (clip->rotation) {
        case 0:
            if (opaque) {
                for (int i = 0; i < count; i++) row[left + i] = coded[(size_t)v * pitch + u0 + i] | opaque;
            } else {
                memcpy(row + left, coded + (size_t)v * pitch + u0, (size_t)count * 4);
            }
            break;
        case 90:  // upright (u, v) is coded (v, ch - 1 - u)
            for (int i = 0; i < count; i++) row[left + i] = coded[(size_t)(ch - 1 - (u0 + i)) * pitch + v] | opaque;
            break;
        case 180:  // upright (u, v) is coded (cw - 1 - u, ch - 1 - v)
            for (int i = 0; i < count; i++) row[left + i] = coded[(size_t)(ch - 1 - v) * pitch + (cw - 1 - (u0 + i))] | opaque;
            break;
        default:  // 270: upright (u, v) is coded (cw - 1 - v, u)
            for (int i = 0; i < count; i++) row[left + i] = coded[(size_t)(u0 + i) * pitch + (cw - 1 - v)] | opaque;
            break;
        }
    }
    return 0;
}
