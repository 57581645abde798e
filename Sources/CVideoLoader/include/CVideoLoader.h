// CVideoLoader: FFmpeg (libavformat, libavcodec, libswscale, libavutil),
// loaded when the first clip is opened rather than when carouseld starts,
// and the clip reader built on it: demux, decode, the display matrix's
// rotation, conversion and scaling into XRGB8888.
//
// libavcodec links dozens of codec libraries (dav1d, libvpx, x264/x265,
// libaom, codec2, OpenJPEG, ...): linked normally, every start of carouseld
// would map and relocate them although most frames never show a clip. So
// the four libraries are opened with dlopen() by the first clip, by soname
// built from the headers' major versions (libavcodec.so.<LIBAVCODEC_VERSION_MAJOR>):
// a header/library mismatch is a load error, never a silent ABI break. Every
// function is called through a table whose entries have the prototype of
// FFmpeg's headers (`__typeof__`), so a mismatch is a compile error.
//
// FFmpeg's headers stay out of this header (video_loader.c includes them):
// Swift sees only the opaque clip and plain numbers, and FFmpeg's structs
// (AVFrame, AVPacket fields) are touched in C only.
#ifndef CVIDEOLOADER_H
#define CVIDEOLOADER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What `cvideo_open` learnt of a clip.
typedef struct cvideo_info {
    /// The decoded frames' size (after the codec's cropping).
    int coded_width;
    int coded_height;
    /// The clockwise turn that makes frames upright: 0, 90, 180 or 270
    /// (the stream's display matrix; mirroring is ignored, as ffmpeg 5.1's
    /// autorotate ignores it).
    int rotation;
    /// Seconds; negative when the container does not say.
    double duration;
    /// Average frames per second; 0 when unknown.
    double frame_rate;
    /// avcodec_get_name of the stream's codec ("h264") and the decoder's name ("h264_v4l2m2m").
    char codec[32];
    char decoder[48];
} cvideo_info;

/// How frames are scaled (libswscale's algorithms).
typedef enum cvideo_scaler {
    cvideo_scaler_point = 0,
    cvideo_scaler_fast_bilinear = 1,
    cvideo_scaler_bilinear = 2,
    cvideo_scaler_bicubic = 3,
} cvideo_scaler;

typedef struct cvideo_clip cvideo_clip;

/// Opens FFmpeg's four libraries once per process (later calls return the
/// first result): 0, or -1 with why in `error` (NUL-terminated, at most
/// `error_size` bytes), naming the Debian packages to install.
int cvideo_load(char *_Nonnull error, size_t error_size);

/// Opens `path` (the `file` protocol only; the mov/mp4 and Matroska/WebM
/// demuxers only), finds its best video stream and a decoder, and decodes
/// the first frame (so that a clip that opens has at least one frame).
/// Only H.264, HEVC, VP8, VP9 and AV1 decoders are ever opened (FFmpeg's
/// `codec_whitelist`, probing included), no audio decoder: a clip of any
/// other codec is refused, naming it.
/// `hardware`: the codec's V4L2 memory-to-memory decoder first, when a
/// /dev/video* node exists and it opens. Clips of more than `max_pixels`
/// coded pixels are refused before a decoder is opened. NULL with why in
/// `error` on failure; `info` is then unspecified.
cvideo_clip *_Nullable cvideo_open(const char *_Nonnull path, int hardware, int64_t max_pixels,
                                   cvideo_info *_Nonnull info, char *_Nonnull error, size_t error_size);

/// The next frame in presentation order: 1 with its time in seconds from the
/// stream's start in `time`, 0 at the end of the stream, -1 with why in `error`.
int cvideo_next(cvideo_clip *_Nonnull clip, double *_Nonnull time, char *_Nonnull error, size_t error_size);

/// Writes the frame `cvideo_next` returned last, turned upright and scaled to
/// the rectangle (rx, ry, rw, rh) in `dest` (`height` rows of `stride` bytes
/// of native-endian XRGB8888, `width` pixels each); only the part of the
/// rectangle inside the destination is written. 0, or -1 with why in `error`.
int cvideo_draw(cvideo_clip *_Nonnull clip, void *_Nonnull dest, int width, int height, ptrdiff_t stride,
                int rx, int ry, int rw, int rh, char *_Nonnull error, size_t error_size);

/// Back to the first frame: 0, or -1 with why in `error`.
int cvideo_rewind(cvideo_clip *_Nonnull clip, char *_Nonnull error, size_t error_size);

/// The scaling algorithm and whether libswscale rounds accurately
/// (SWS_ACCURATE_RND) for the following draws.
void cvideo_set_scaler(cvideo_clip *_Nonnull clip, cvideo_scaler scaler, int accurate_rounding);

/// Releases everything the clip holds; NULL is allowed.
void cvideo_close(cvideo_clip *_Nullable clip);

#ifdef __cplusplus
}
#endif

#endif
