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
// FFmpeg's headers stay out of this header (video_private.h includes them):
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

// ---------------------------------------------------------------- the helper process
//
// A clip is decoded in a helper process (carouseld's hidden `decode-clip`
// subcommand), never in the display process: FFmpeg's libraries are mapped
// only there. The parent opens the file read-only and hands the helper its
// descriptor and one end of a SOCK_SEQPACKET pair; the helper opens the
// clip, then shuts itself in (`cvideo_sandbox`) and answers one request at
// a time: the next frame's time, a draw into memory the parent shares with
// it (a memory file mapped by both: the frame's pixels are written once,
// by libswscale, straight where the parent composes them). A helper that
// dies, does not answer in time or answers what was not asked
// is killed, and every later call fails with that one reason.

/// The environment variable of the helper's test faults (tests only):
/// `SIGSEGV` dies on the tenth frame, `hang` stops answering there (idle),
/// `spin` too (busy), `lie`
/// answers every draw with a size it was not asked for, `escape` tries to
/// open a file and a socket on the first frame and fails it saying what it
/// got, `oversize` announces a clip 2^20 pixels wide.
#define CVIDEO_TEST_FAULT_VARIABLE "CAROUSELD_TEST_CLIP_FAULT"

/// The helper's side: opens the clip on `clip_fd`, installs the sandbox,
/// then serves the parent on `channel` until it hangs up. The exit status
/// for the helper (0 whenever the parent was answered).
int cvideo_serve(int clip_fd, int channel, int hardware, int64_t max_pixels);

/// NO_NEW_PRIVS and a seccomp filter that lets this process use memory,
/// threads, the descriptors it holds and (with `hardware`, for V4L2) ioctl,
/// and fails everything else with EPERM: no file, socket or device can be
/// opened any more. 0, or -1 with why in `error`.
int cvideo_sandbox(int hardware, char *_Nonnull error, size_t error_size);

typedef struct cvideo_remote cvideo_remote;

/// Starts the helper (`executable` with `argv` and `envp`: carouseld
/// decode-clip, which calls `cvideo_serve`) on `path`, opened here, and
/// waits for what it says of the clip, checked (a size within
/// `max_pixels`, a quarter turn) into `info`. The helper may spend
/// `timeout_ms` of CPU time on each answer, and 12 times that on the clock.
/// NULL with why in `error`.
cvideo_remote *_Nullable cvideo_remote_open(const char *_Nonnull executable, char *_Nullable const argv[_Nonnull],
                                            char *_Nullable const envp[_Nonnull], const char *_Nonnull path,
                                            int64_t max_pixels, int timeout_ms, cvideo_info *_Nonnull info,
                                            char *_Nonnull error, size_t error_size);

/// `cvideo_next`, in the helper.
int cvideo_remote_next(cvideo_remote *_Nonnull remote, double *_Nonnull time, char *_Nonnull error, size_t error_size);

/// `cvideo_draw`, in the helper: straight into `dest` when it lies in
/// memory shared with `cvideo_remote_share`, else through a shared scratch
/// buffer and a copy.
int cvideo_remote_draw(cvideo_remote *_Nonnull remote, void *_Nonnull dest, int width, int height, ptrdiff_t stride,
                       int rx, int ry, int rw, int rh, char *_Nonnull error, size_t error_size);

/// Makes `bytes` at `memory` (page-aligned, from mmap: mapped over with
/// MAP_FIXED) memory shared with the helper, so that draws into it are
/// written there by the helper without a copy. It must stay mapped while
/// the remote lives (its contents are lost). At most 7 such. 0, or -1 with why.
int cvideo_remote_share(cvideo_remote *_Nonnull remote, void *_Nonnull memory, size_t bytes, char *_Nonnull error,
                        size_t error_size);

int cvideo_remote_rewind(cvideo_remote *_Nonnull remote, char *_Nonnull error, size_t error_size);
void cvideo_remote_set_scaler(cvideo_remote *_Nonnull remote, cvideo_scaler scaler, int accurate_rounding);

/// Kills and reaps the helper, releases what the remote holds; NULL is allowed.
void cvideo_remote_close(cvideo_remote *_Nullable remote);

#ifdef __cplusplus
}
#endif

#endif
