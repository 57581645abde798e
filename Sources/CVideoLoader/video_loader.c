// See CVideoLoader.h: FFmpeg's libraries opened with dlopen by the first clip.
#include "video_private.h"

#include <CPlatform.h>
#include <pthread.h>
#include <stdio.h>

cvideo_ffmpeg ff;

#define CVIDEO_NAME(name) #name,
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
