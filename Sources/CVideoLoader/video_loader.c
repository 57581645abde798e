// See CVideoLoader.h.
#include "CVideoLoader.h"

#include <CPlatform.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

// ---------------------------------------------------------------- loading

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
#define CVIDEO_NAME(name) #name,
static struct {
    struct { CVIDEO_AVUTIL(CVIDEO_FIELD) } util;
    struct { CVIDEO_SWSCALE(CVIDEO_FIELD) } sws;
    struct { CVIDEO_AVCODEC(CVIDEO_FIELD) } codec;
    struct { CVIDEO_AVFORMAT(CVIDEO_FIELD) } format;
} ff;
static const char *const util_names[] = {CVIDEO_AVUTIL(CVIDEO_NAME)};
static const char *const sws_names[] = {CVIDEO_SWSCALE(CVIDEO_NAME)};
static const char *const codec_names[] = {CVIDEO_AVCODEC(CVIDEO_NAME)};
static const char *const format_names[] = {CVIDEO_AVFORMAT(CVIDEO_NAME)};
// Each part is filled as an array of function pointers.
_Static_assert(sizeof ff.util == sizeof util_names / sizeof util_names[0] * sizeof(void *), "one pointer per function");
_Static_assert(sizeof ff.sws == sizeof sws_names / sizeof sws_names[0] * sizeof(void *), "one pointer per function");
_Static_assert(sizeof ff.codec == sizeof codec_names / sizeof codec_names[0] * sizeof(void *), "one pointer per function");
_Static_assert(sizeof ff.format == sizeof format_names / sizeof format_names[0] * sizeof(void *), "one pointer per function");

#define SONAME(lib, major) "lib" lib ".so." AV_STRINGIFY(major)
#define PACKAGES "libavutil" AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR) " libavcodec" AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR) \
    " libavformat" AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR) " libswscale" AV_STRINGIFY(LIBSWSCALE_VERSION_MAJOR)

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status = -1;
static char load_error[320];

static void load_all(void) {
    char why[256];
    struct { const char *soname; const char *const *names; size_t count; void **table; } parts[] = {
        {SONAME("avutil", LIBAVUTIL_VERSION_MAJOR), util_names, sizeof util_names / sizeof *util_names, (void **)&ff.util},
        {SONAME("swscale", LIBSWSCALE_VERSION_MAJOR), sws_names, sizeof sws_names / sizeof *sws_names, (void **)&ff.sws},
        {SONAME("avcodec", LIBAVCODEC_VERSION_MAJOR), codec_names, sizeof codec_names / sizeof *codec_names, (void **)&ff.codec},
        {SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR), format_names, sizeof format_names / sizeof *format_names, (void **)&ff.format},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (cplatform_load_library(parts[i].soname, parts[i].names, parts[i].count, parts[i].table, why, sizeof why) != 0) {
            snprintf(load_error, sizeof load_error, "FFmpeg's libraries are not installed (%s); apt install " PACKAGES, why);
            return;
        }
    }
    // FFmpeg's own log lines carry no syslog priority, and a damaged clip
    // that loops would log a line per broken macroblock for as long as it
    // plays; what went wrong reaches the log once, as the clip's error.
    ff.util.av_log_set_level(AV_LOG_QUIET);
    load_status = 0;
}

int cvideo_load(char *error, size_t error_size) {
    pthread_once(&load_once, load_all);
    if (load_status != 0) snprintf(error, error_size, "%s", load_error);
    return load_status;
}

// ---------------------------------------------------------------- the clip

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

static void describe(int status, const char *what, char *error, size_t error_size) {
    char text[AV_ERROR_MAX_STRING_SIZE] = "unknown error";
    ff.util.av_strerror(status, text, sizeof text);
    snprintf(error, error_size, "%s: %s", what, text);
}

/// The clockwise turn, 0/90/180/270, that the stream's display matrix asks for.
static int stream_rotation(AVStream *stream) {
    size_t size = 0;
    const uint8_t *matrix = ff.format.av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (matrix == NULL || size < 9 * sizeof(int32_t)) return 0;
    // av_display_rotation_get: the angle the frame is turned counter-clockwise
    // by the matrix, in [-180, 180]; undoing it (as ffmpeg's autorotate does)
    // is a clockwise turn by the same angle. A matrix that is not a rotation
    // (shear, scale) gives NaN.
    double ccw = ff.util.av_display_rotation_get((const int32_t *)matrix);
    if (ccw != ccw) return 0;
    long quarter = lround(-ccw / 90.0);
    return (int)(((quarter % 4) + 4) % 4) * 90;
}

static int have_video_device(void) {
    DIR *dir = opendir("/dev");
    if (dir == NULL) return 0;
    int found = 0;
    struct dirent *entry;
    while (!found && (entry = readdir(dir)) != NULL) found = strncmp(entry->d_name, "video", 5) == 0;
    closedir(dir);
    return found;
}

/// The software decoder's thread count: frame and slice threads, at most 4.
/// Frame threading keeps one frame in flight per thread: each holds its own
/// decoded picture and reference state, about 3 MB per thread at 1080p
/// yuv420p (12 MB at 4K), and adds thread_count - 1 frames of latency.
static int decoder_threads(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    return cores > 4 ? 4 : (int)cores;
}

/// The max_pixels given to FFmpeg's decoders (ours and those of
/// avformat_find_stream_info). They check a frame with its width rounded up
/// to their stride alignment (ff_get_buffer: FFALIGN(width, STRIDE_ALIGN),
/// 64 on x86 builds with AVX-512), so a clip within max_pixels whose width is
/// not a multiple had every frame refused and read as "truncated" or
/// "decoding failed: Invalid argument" (the clip fuzz target's 16x8 and 8x8
/// seeds under max_pixels 256). Twice the limit admits any width from 64 up;
/// decode() still refuses a frame of more than max_pixels, with its size.
/// FIXME: clips narrower than 64 pixels within 2x of the limit stay refused
/// with those reasons.
static int64_t decoder_pixel_limit(int64_t max_pixels) {
    return max_pixels > INT64_MAX / 2 ? INT64_MAX : 2 * max_pixels;
}

/// The codecs a phone or a camera records: the only video decoders opened,
/// and no audio decoder at all. FFmpeg carries a hundred decoders for
/// formats no phone makes (Cinepak, msvideo1, ms-adpcm...), each parser a
/// way into the process for a crafted file named .mov or .mkv; the frame
/// shows what it takes pictures of, and nothing else is decoded.
static int allowed_codec(enum AVCodecID id) {
    return id == AV_CODEC_ID_H264 || id == AV_CODEC_ID_HEVC || id == AV_CODEC_ID_VP8 || id == AV_CODEC_ID_VP9
        || id == AV_CODEC_ID_AV1;
}

/// The same, by decoder name, for FFmpeg's `codec_whitelist`: what
/// avformat_find_stream_info may open to probe a stream (it opens a decoder
/// for every stream, the audio's included) and what avcodec_open2 accepts.
/// Every decoder FFmpeg 5/6 has for those codecs: the native ones, the
/// libraries Debian links (dav1d, libaom, libvpx) and the V4L2 wrappers.
#define CVIDEO_DECODERS \
    "h264,hevc,vp8,vp9,av1,libdav1d,libaom-av1,libvpx,libvpx-vp9," \
    "h264_v4l2m2m,hevc_v4l2m2m,vp8_v4l2m2m,vp9_v4l2m2m"

static AVCodecContext *open_decoder(const AVCodec *codec, AVStream *stream, int software, int64_t max_pixels) {
    AVCodecContext *context = ff.codec.avcodec_alloc_context3(codec);
    if (context == NULL) return NULL;
    if (ff.codec.avcodec_parameters_to_context(context, stream->codecpar) < 0) goto fail;
    context->pkt_timebase = stream->time_base;
    // Frames larger than this are refused by the decoder itself, should the
    // stream change size midway.
    context->max_pixels = decoder_pixel_limit(max_pixels);
    if (software) {
        context->thread_count = decoder_threads();
        context->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    }
    AVDictionary *options = NULL;
    ff.util.av_dict_set(&options, "codec_whitelist", CVIDEO_DECODERS, 0);
    int result = ff.codec.avcodec_open2(context, codec, &options);
    ff.util.av_dict_free(&options);
    if (result < 0) goto fail;
    return context;
fail:
    ff.codec.avcodec_free_context(&context);
    return NULL;
}

void cvideo_close(cvideo_clip *clip) {
    if (clip == NULL) return;
    if (clip->sws) ff.sws.sws_freeContext(clip->sws);
    free(clip->scratch);
    if (clip->incoming) ff.util.av_frame_free(&clip->incoming);
    if (clip->current) ff.util.av_frame_free(&clip->current);
    if (clip->packet) ff.codec.av_packet_free(&clip->packet);
    if (clip->decoder) ff.codec.avcodec_free_context(&clip->decoder);
    if (clip->format) ff.format.avformat_close_input(&clip->format);
    free(clip);
}

static int decode(cvideo_clip *clip, char *error, size_t error_size);

cvideo_clip *cvideo_open(const char *path, int hardware, int64_t max_pixels, cvideo_info *info,
                         char *error, size_t error_size) {
    if (cvideo_load(error, error_size) != 0) return NULL;
    memset(info, 0, sizeof *info);
    struct stat status;
    if (stat(path, &status) != 0) {
        snprintf(error, error_size, "cannot open: %s", strerror(errno));
        return NULL;
    }
    if (status.st_size == 0) {
        snprintf(error, error_size, "empty file");
        return NULL;
    }
    cvideo_clip *clip = calloc(1, sizeof *clip);
    if (clip == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    clip->max_pixels = max_pixels;
    clip->scaler_flags = SWS_BILINEAR;

    // "file:" so that a name with a colon is never taken for a protocol; the
    // whitelists keep a file in the album from making FFmpeg read anything
    // but itself (an HLS or concat playlist named .mp4) or parse it with any
    // demuxer but the two the album's extensions name.
    size_t url_size = strlen(path) + 6;
    char *url = malloc(url_size);
    if (url == NULL) {
        snprintf(error, error_size, "out of memory");
        goto fail;
    }
    snprintf(url, url_size, "file:%s", path);
    AVDictionary *options = NULL;
    ff.util.av_dict_set(&options, "protocol_whitelist", "file", 0);
    ff.util.av_dict_set(&options, "format_whitelist", "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm", 0);
    ff.util.av_dict_set(&options, "codec_whitelist", CVIDEO_DECODERS, 0);
    int result = ff.format.avformat_open_input(&clip->format, url, NULL, &options);
    ff.util.av_dict_free(&options);
    free(url);
    if (result == AVERROR_EOF) {
        snprintf(error, error_size, "truncated: the file ends before its first frame");
        goto fail;
    }
    if (result < 0) {
        describe(result, "not a clip FFmpeg can read", error, error_size);
        goto fail;
    }
    // avformat_find_stream_info decodes a few frames of each stream (H.264's
    // to guess its reorder delay): with max_pixels its decoders refuse a
    // frame larger than the limit instead of allocating it, and the size
    // the header declares is refused below, before our decoder exists.
    unsigned streams = clip->format->nb_streams;
    AVDictionary **probe_options = streams ? calloc(streams, sizeof *probe_options) : NULL;
    char limit[24];
    snprintf(limit, sizeof limit, "%lld", (long long)decoder_pixel_limit(max_pixels));
    for (unsigned i = 0; probe_options && i < streams; i++) ff.util.av_dict_set(&probe_options[i], "max_pixels", limit, 0);
    result = ff.format.avformat_find_stream_info(clip->format, probe_options);
    for (unsigned i = 0; probe_options && i < streams; i++) ff.util.av_dict_free(&probe_options[i]);
    free(probe_options);
    if (result < 0) {
        describe(result, "cannot read the streams", error, error_size);
        goto fail;
    }
    int index = ff.format.av_find_best_stream(clip->format, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (index < 0) {
        char kinds[96] = "";
        for (unsigned i = 0; i < clip->format->nb_streams && strlen(kinds) < 64; i++) {
            const char *kind = ff.util.av_get_media_type_string(clip->format->streams[i]->codecpar->codec_type);
            if (strstr(kinds, kind ? kind : "unknown")) continue;
            strcat(kinds, *kinds ? ", " : "");
            strcat(kinds, kind ? kind : "unknown");
        }
        snprintf(error, error_size, "no video stream (%s)", *kinds ? kinds : "the file has no streams");
        goto fail;
    }
    clip->stream = index;
    AVStream *stream = clip->format->streams[index];
    AVCodecParameters *parameters = stream->codecpar;
    snprintf(info->codec, sizeof info->codec, "%s", ff.codec.avcodec_get_name(parameters->codec_id));
    if (parameters->codec_id != AV_CODEC_ID_NONE && !allowed_codec(parameters->codec_id)) {
        snprintf(error, error_size, "%s is not a codec phones or cameras record (only H.264, HEVC, VP8, VP9 and AV1 clips play)",
                 info->codec);
        goto fail;
    }

    // Bounded memory: refused before any decoder or frame is allocated.
    if ((int64_t)parameters->width * parameters->height > max_pixels) {
        snprintf(error, error_size, "%dx%d is larger than [video] max_pixels (%lld)", parameters->width,
                 parameters->height, (long long)max_pixels);
        goto fail;
    }

    const AVCodec *software = ff.codec.avcodec_find_decoder(parameters->codec_id);
    if (hardware && have_video_device()) {
        // FFmpeg's V4L2 mem2mem wrappers are named for the codec, except
        // mpeg1video and mpeg2video ("mpeg2_v4l2m2m").
        char name[48];
        const char *codec_name = info->codec;
        size_t length = strlen(codec_name);
        if (length > 5 && strcmp(codec_name + length - 5, "video") == 0) length -= 5;
        snprintf(name, sizeof name, "%.*s_v4l2m2m", (int)length, codec_name);
        const AVCodec *wrapper = ff.codec.avcodec_find_decoder_by_name(name);
        if (wrapper) {
            clip->decoder = open_decoder(wrapper, stream, 0, max_pixels);
            if (clip->decoder) snprintf(info->decoder, sizeof info->decoder, "%s", wrapper->name);
        }
    }
    if (clip->decoder == NULL) {
        if (software == NULL) {
            if (parameters->codec_id == AV_CODEC_ID_NONE) {
                snprintf(error, error_size, "no decoder: the video stream's codec is unknown to FFmpeg");
            } else {
                snprintf(error, error_size, "no decoder for %s in this FFmpeg build", info->codec);
            }
            goto fail;
        }
        clip->decoder = open_decoder(software, stream, 1, max_pixels);
        if (clip->decoder == NULL) {
            snprintf(error, error_size, "the %s decoder cannot be opened for this stream", software->name);
            goto fail;
        }
        snprintf(info->decoder, sizeof info->decoder, "%s", software->name);
    }

    clip->packet = ff.codec.av_packet_alloc();
    clip->incoming = ff.util.av_frame_alloc();
    clip->current = ff.util.av_frame_alloc();
    if (!clip->packet || !clip->incoming || !clip->current) {
        snprintf(error, error_size, "out of memory");
        goto fail;
    }
    clip->time_base = stream->time_base;
    clip->start = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
    AVRational rate = stream->avg_frame_rate;
    if (rate.num > 0 && rate.den > 0) info->frame_rate = av_q2d(rate);
    if (rate.num <= 0 || rate.den <= 0) rate = stream->r_frame_rate;
    clip->frame_step = rate.num > 0 && rate.den > 0 ? 1.0 / av_q2d(rate) : 1.0 / 25;
    if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0) {
        info->duration = stream->duration * av_q2d(stream->time_base);
    } else if (clip->format->duration != AV_NOPTS_VALUE && clip->format->duration > 0) {
        info->duration = clip->format->duration / (double)AV_TIME_BASE;
    } else {
        info->duration = -1;
    }
    clip->rotation = info->rotation = stream_rotation(stream);

    // The first frame, so that a clip that opens can be shown: a clip whose
    // stream holds no frame, or none that decodes, fails here.
    result = decode(clip, error, error_size);
    if (result < 0) goto fail;
    if (result == 0) {
        if (clip->packets_sent == 0) {
            snprintf(error, error_size, "the video stream has no frames");
        } else {
            snprintf(error, error_size, "truncated: no frame could be decoded");
        }
        goto fail;
    }
    clip->pending = 1;
    info->coded_width = clip->current->width;
    info->coded_height = clip->current->height;
    return clip;
fail:
    cvideo_close(clip);
    return NULL;
}

/// Gives FFmpeg's decoder packets until it hands out a frame, which goes
/// to `current` with its time in `last_time`: 1, 0 at the end, -1 on error.
static int decode(cvideo_clip *clip, char *error, size_t error_size) {
    for (;;) {
        int result = ff.codec.avcodec_receive_frame(clip->decoder, clip->incoming);
        if (result == 0) {
            AVFrame *frame = clip->incoming;
            if ((int64_t)frame->width * frame->height > clip->max_pixels) {
                snprintf(error, error_size, "a frame of %dx%d is larger than [video] max_pixels (%lld)", frame->width,
                         frame->height, (long long)clip->max_pixels);
                ff.util.av_frame_unref(frame);
                return -1;
            }
            int64_t stamp = frame->best_effort_timestamp;
            double time;
            if (stamp != AV_NOPTS_VALUE) {
                // In double: a damaged file's stamp and start time are any
                // int64_t, and their difference would overflow (undefined).
                time = ((double)stamp - (double)clip->start) * av_q2d(clip->time_base);
            } else {
                time = clip->has_time ? clip->last_time + clip->frame_step : 0;
            }
            clip->last_time = time;
            clip->has_time = 1;
            clip->bad_packets = 0;
            ff.util.av_frame_unref(clip->current);
            ff.util.av_frame_move_ref(clip->current, frame);
            return 1;
        }
        if (result == AVERROR_EOF) return 0;
        if (result != AVERROR(EAGAIN)) {
            describe(result, "decoding failed", error, error_size);
            return -1;
        }
        if (clip->draining) return 0;  // not expected: a draining decoder says EOF
        result = ff.format.av_read_frame(clip->format, clip->packet);
        if (result == AVERROR_EOF || result == AVERROR(EIO) || result == AVERROR_INVALIDDATA) {
            // The end, or a file cut short (a truncated mp4 reads as an early
            // end or as invalid data in the last packet): what was decoded
            // stands, the decoder hands out what it still holds.
            clip->draining = 1;
            ff.codec.avcodec_send_packet(clip->decoder, NULL);
            continue;
        }
        if (result < 0) {
            describe(result, "reading the file failed", error, error_size);
            return -1;
        }
        if (clip->packet->stream_index != clip->stream) {
            ff.codec.av_packet_unref(clip->packet);
            continue;
        }
        result = ff.codec.avcodec_send_packet(clip->decoder, clip->packet);
        ff.codec.av_packet_unref(clip->packet);
        clip->packets_sent++;
        if (result == AVERROR_INVALIDDATA) {
            // A corrupt packet: the decoder conceals it from the next frames.
            // Only a run of them is a broken stream.
            if (++clip->bad_packets >= 32) {
                describe(result, "corrupt stream: 32 packets in a row do not decode", error, error_size);
                return -1;
            }
            continue;
        }
        if (result < 0 && result != AVERROR(EAGAIN)) {
            describe(result, "decoding failed", error, error_size);
            return -1;
        }
        // EAGAIN cannot happen: every frame is received before a packet is sent.
    }
}

int cvideo_next(cvideo_clip *clip, double *time, char *error, size_t error_size) {
    if (clip->pending) {
        clip->pending = 0;
        *time = clip->last_time;
        return 1;
    }
    int result = decode(clip, error, error_size);
    if (result == 1) *time = clip->last_time;
    return result;
}

int cvideo_rewind(cvideo_clip *clip, char *error, size_t error_size) {
    int result = ff.format.avformat_seek_file(clip->format, clip->stream, INT64_MIN, clip->start, clip->start,
                                              AVSEEK_FLAG_BACKWARD);
    if (result < 0) {
        describe(result, "cannot go back to the first frame", error, error_size);
        return -1;
    }
    ff.codec.avcodec_flush_buffers(clip->decoder);
    clip->draining = 0;
    clip->pending = 0;
    clip->has_time = 0;
    clip->bad_packets = 0;
    return 0;
}

void cvideo_set_scaler(cvideo_clip *clip, cvideo_scaler scaler, int accurate_rounding) {
    static const int algorithms[] = {SWS_POINT, SWS_FAST_BILINEAR, SWS_BILINEAR, SWS_BICUBIC};
    clip->scaler_flags = algorithms[scaler <= cvideo_scaler_bicubic ? scaler : cvideo_scaler_bilinear]
        | (accurate_rounding ? SWS_ACCURATE_RND : 0);
}

// ---------------------------------------------------------------- drawing

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
