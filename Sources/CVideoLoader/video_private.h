// What the clip reader's files share: FFmpeg's headers and its functions
// as loaded (video_loader.c), and the clip (video_clip.c opens, decodes and
// rewinds it; video_draw.c scales its frames and turns them upright).
// Private to CVideoLoader: FFmpeg's headers stay out of CVideoLoader.h.
#ifndef CVIDEO_VIDEO_PRIVATE_H
#define CVIDEO_VIDEO_PRIVATE_H

#include "CVideoLoader.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#define CVIDEO_AVUTIL(X) \
    X(av_frame_alloc) X(av_frame_free) X(av_frame_unref) X(av_frame_move_ref) X(av_strerror) \
    X(av_display_rotation_get) X(av_log_set_level) X(av_get_pix_fmt_name) X(av_pix_fmt_desc_get) \
    X(av_dict_set) X(av_dict_free) X(av_get_media_type_string)
#define CVIDEO_SWSCALE(X) \
    X(sws_getCachedContext) X(sws_scale) X(sws_freeContext) X(sws_setColorspaceDetails) \
    X(sws_getColorspaceDetails) X(sws_getCoefficients) X(sws_isSupportedInput)
#define CVIDEO_AVCODEC(X) \
    X(avcodec_find_decoder) X(avcodec_find_decoder_by_name) X(avcodec_alloc_context3) X(avcodec_free_context) \
    X(avcodec_parameters_to_context) X(avcodec_open2) X(avcodec_send_packet) X(avcodec_receive_frame) \
    X(avcodec_flush_buffers) X(av_packet_alloc) X(av_packet_free) X(av_packet_unref) X(avcodec_get_name)
#define CVIDEO_AVFORMAT(X) \
    X(avformat_open_input) X(avformat_find_stream_info) X(av_find_best_stream) X(av_read_frame) \
    X(avformat_seek_file) X(avformat_close_input) X(av_stream_get_side_data)

#define CVIDEO_FIELD(name) __typeof__(name) *name;
/// FFmpeg's functions, each with its header's prototype.
typedef struct cvideo_ffmpeg {
    struct { CVIDEO_AVUTIL(CVIDEO_FIELD) } util;
    struct { CVIDEO_SWSCALE(CVIDEO_FIELD) } sws;
    struct { CVIDEO_AVCODEC(CVIDEO_FIELD) } codec;
    struct { CVIDEO_AVFORMAT(CVIDEO_FIELD) } format;
} cvideo_ffmpeg;

/// The table `cvideo_load` fills (defined in video_loader.c). Hidden: a
/// name of this library's own, never one the executable exports.
extern cvideo_ffmpeg ff __attribute__((visibility("hidden")));

struct cvideo_clip {
    AVFormatContext *format;
    AVCodecContext *decoder;
    AVPacket *packet;
    AVFrame *incoming;   // what avcodec_receive_frame writes
    AVFrame *current;    // the frame next() returned last (what draw writes)
    int stream;
    int rotation;
    int64_t max_pixels;
    AVRational time_base;
    int64_t start;        // the stream's start_time, or 0
    double frame_step;    // 1/frame rate, for frames without a timestamp
    double last_time;
    int has_time;
    int draining;         // the demuxer reached the end; the decoder was sent NULL
    int pending;          // `current` holds a frame decoded but not yet returned (the first, from open)
    int bad_packets;      // packets the decoder refused since the last frame
    int64_t packets_sent;
    // Scaling, reused from frame to frame.
    struct SwsContext *sws;
    int sws_key[8];       // src w, h, format, colorspace, range; dst w, h; flags
    int scaler_flags;
    uint8_t *scratch;
    size_t scratch_size;
};

#endif
