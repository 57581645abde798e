// See CVideoLoader.h: a clip opened, its frames decoded in presentation
// order with their times, and rewound.
#include "video_private.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
