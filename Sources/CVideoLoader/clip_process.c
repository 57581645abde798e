// See CVideoLoader.h: clips decoded in a helper process, the parent's side
// (the helper's is clip_helper.c, the messages between them clip_wire.h).
#include "clip_wire.h"

#include <CPlatform.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct cvideo_remote {
    pid_t pid;
    int socket;
    int timeout_ms;
    int broken;  // the helper died, hung or lied: every later call fails
    char broken_reason[240];
    struct { uint8_t *base; size_t size; int owned; } regions[CVIDEO_REGIONS];
    int scratch;  // the region draws into memory not shared go through, or -1
};

static const char *signal_name(int number) {
    switch (number) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGSYS: return "SIGSYS";
    default: return NULL;
    }
}

/// The helper is of no more use: killed and reaped, and why said once.
static void give_up(cvideo_remote *remote, const char *why, int ended) {
    if (remote->pid > 0) {
        int status = 0;
        // A helper that closed its end is most likely ending (the kernel
        // closes descriptors before the process becomes a zombie): a
        // second at most to learn how, then it is killed.
        pid_t done = 0;
        for (int i = 0; i < (ended ? 100 : 1) && (done = waitpid(remote->pid, &status, WNOHANG)) == 0; i++) {
            struct timespec pause = {0, 10 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
        if (done == 0) {
            kill(remote->pid, SIGKILL);
            while (waitpid(remote->pid, &status, 0) < 0 && errno == EINTR) {}
            status = 0;  // killed by us: why is `why`
        }
        remote->pid = 0;
        if (done > 0 && WIFSIGNALED(status)) {
            const char *name = signal_name(WTERMSIG(status));
            char number[16];
            snprintf(number, sizeof number, "signal %d", WTERMSIG(status));
            snprintf(remote->broken_reason, sizeof remote->broken_reason,
                     "FFmpeg crashed on it (%s in the process that decodes it; carouseld runs on)", name ? name : number);
            remote->broken = 1;
            return;
        }
        if (done > 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
            snprintf(remote->broken_reason, sizeof remote->broken_reason,
                     "its decoding process exited with status %d", WEXITSTATUS(status));
            remote->broken = 1;
            return;
        }
    }
    if (!remote->broken) snprintf(remote->broken_reason, sizeof remote->broken_reason, "%s", why);
    remote->broken = 1;
}

static long long elapsed_ms(const struct timespec *from, const struct timespec *to) {
    return (to->tv_sec - from->tv_sec) * 1000LL + (to->tv_nsec - from->tv_nsec) / 1000000;
}

/// Waits for the helper's next message into `reply`: 0, or -1 with why in
/// `error` (the helper is then given up). A helper is stopped once it has
/// spent the remote's timeout of CPU time on one request (a decoder in an
/// endless loop), or twelve times that on the clock (one that waits for
/// nothing). CPU time, not the clock, for the first: on a board whose CPU
/// the playing clip already fills, a poster's helper (at the decode
/// threads' lower priority) waits its turn for seconds without being hung.
static int await_answer(cvideo_remote *remote, message *reply, const char *what, char *error, size_t error_size) {
    clockid_t cpu_clock;
    int has_cpu_clock = clock_getcpuclockid(remote->pid, &cpu_clock) == 0;
    struct timespec start, cpu_start = {0, 0};
    clock_gettime(CLOCK_MONOTONIC, &start);
    if (has_cpu_clock && clock_gettime(cpu_clock, &cpu_start) != 0) has_cpu_clock = 0;
    long long wall_limit = 12LL * remote->timeout_ms;
    for (;;) {
        struct timespec now, cpu_now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long waited = elapsed_ms(&start, &now);
        long long worked = has_cpu_clock && clock_gettime(cpu_clock, &cpu_now) == 0 ? elapsed_ms(&cpu_start, &cpu_now) : 0;
        if (worked >= remote->timeout_ms || waited >= wall_limit || (!has_cpu_clock && waited >= remote->timeout_ms)) {
            char why[160];
            if (worked >= remote->timeout_ms || !has_cpu_clock) {
                snprintf(why, sizeof why, "its decoding process did not %s within %d s of work; it was stopped", what,
                         remote->timeout_ms / 1000);
            } else {
                snprintf(why, sizeof why, "its decoding process did not %s within %lld s; it was stopped", what,
                         wall_limit / 1000);
            }
            give_up(remote, why, 0);
            snprintf(error, error_size, "%s", remote->broken_reason);
            return -1;
        }
        // Looks again at least every second: the CPU budget is not a wake-up.
        long long slice = wall_limit - waited;
        if (slice > 1000) slice = 1000;
        struct pollfd entry = {remote->socket, POLLIN, 0};
        int ready = poll(&entry, 1, (int)slice);
        if (ready <= 0) continue;
        ssize_t got = recv(remote->socket, reply, sizeof *reply, MSG_DONTWAIT | MSG_TRUNC);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) {
            give_up(remote, "its decoding process ended without answering", 1);
        } else if (got != (ssize_t)sizeof *reply) {
            give_up(remote, "its decoding process gave a malformed answer", 0);
        } else {
            reply->text[sizeof reply->text - 1] = 0;
            // One log line: the helper's words lose their control characters.
            for (char *c = reply->text; *c; c++) {
                if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
            }
            return 0;
        }
        snprintf(error, error_size, "%s", remote->broken_reason);
        return -1;
    }
}

/// Sends `request` (with `fd`, if any) and waits for the answer
/// (`await_answer`): 0, or -1 with why in `error` (the helper is then given up).
static int exchange(cvideo_remote *remote, const message *request, int fd, message *reply, char *error, size_t error_size) {
    if (remote->broken) {
        snprintf(error, error_size, "%s", remote->broken_reason);
        return -1;
    }
    if (send_message(remote->socket, request, fd) != 0) {
        give_up(remote, "its decoding process is gone", 1);
        snprintf(error, error_size, "%s", remote->broken_reason);
        return -1;
    }
    return await_answer(remote, reply, "answer", error, error_size);
}

cvideo_remote *cvideo_remote_open(const char *executable, char *const argv[], char *const envp[], const char *path,
                                  int64_t max_pixels, int timeout_ms, cvideo_info *info, char *error, size_t error_size) {
    memset(info, 0, sizeof *info);
    cvideo_remote *remote = calloc(1, sizeof *remote);
    if (remote == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    remote->socket = -1;
    remote->scratch = -1;
    remote->timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
    // Opened here, read-only: the helper never names a file itself.
    int clip = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (clip < 0) {
        snprintf(error, error_size, "cannot open: %s", strerror(errno));
        free(remote);
        return NULL;
    }
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        snprintf(error, error_size, "socketpair: %s", strerror(errno));
        close(clip);
        free(remote);
        return NULL;
    }
    int spawned = cplatform_spawn_helper(executable, argv, envp, clip, pair[1], &remote->pid);
    close(clip);
    close(pair[1]);
    remote->socket = pair[0];
    if (spawned != 0) {
        snprintf(error, error_size, "cannot start its decoding process (posix_spawn %s: %s)", executable,
                 strerror(spawned));
        remote->pid = 0;
        cvideo_remote_close(remote);
        return NULL;
    }
    // The first answer comes unasked: the clip opened, or why not.
    message reply;
    if (await_answer(remote, &reply, "open it", error, error_size) != 0) {
        cvideo_remote_close(remote);
        return NULL;
    }
    if (reply.op != op_info && reply.op != op_error) give_up(remote, "its decoding process gave a malformed answer", 0);
    if (remote->broken) {
        snprintf(error, error_size, "%s", remote->broken_reason);
        cvideo_remote_close(remote);
        return NULL;
    }
    reply.text[sizeof reply.text - 1] = 0;
    for (char *c = reply.text; *c; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
    }
    if (reply.op == op_error) {
        snprintf(error, error_size, "%s", reply.text[0] ? reply.text : "unknown error");
        cvideo_remote_close(remote);
        return NULL;
    }
    // What it says of the clip is checked as if a file said it.
    cvideo_info said = reply.info;
    said.codec[sizeof said.codec - 1] = 0;
    said.decoder[sizeof said.decoder - 1] = 0;
    for (char *c = said.codec; *c; c++) if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
    for (char *c = said.decoder; *c; c++) if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
    if (said.coded_width <= 0 || said.coded_height <= 0 || (int64_t)said.coded_width * said.coded_height > max_pixels
        || (said.rotation != 0 && said.rotation != 90 && said.rotation != 180 && said.rotation != 270)
        || said.duration != said.duration || said.frame_rate != said.frame_rate || said.frame_rate < 0) {
        snprintf(error, error_size, "its decoding process announced a %dx%d clip it was not allowed to",
                 said.coded_width, said.coded_height);
        cvideo_remote_close(remote);
        return NULL;
    }
    *info = said;
    return remote;
}

int cvideo_remote_next(cvideo_remote *remote, double *time, char *error, size_t error_size) {
    message request, reply;
    memset(&request, 0, sizeof request);
    request.op = op_next;
    if (exchange(remote, &request, -1, &reply, error, error_size) != 0) return -1;
    switch (reply.op) {
    case op_frame:
        if (!isfinite(reply.time)) break;
        *time = reply.time;
        return 1;
    case op_end:
        return 0;
    case op_error:
        snprintf(error, error_size, "%s", reply.text[0] ? reply.text : "unknown error");
        return -1;
    }
    give_up(remote, "its decoding process gave a malformed answer", 0);
    snprintf(error, error_size, "%s", remote->broken_reason);
    return -1;
}

int cvideo_remote_rewind(cvideo_remote *remote, char *error, size_t error_size) {
    message request, reply;
    memset(&request, 0, sizeof request);
    request.op = op_rewind;
    if (exchange(remote, &request, -1, &reply, error, error_size) != 0) return -1;
    if (reply.op == op_ok) return 0;
    if (reply.op == op_error) {
        snprintf(error, error_size, "%s", reply.text[0] ? reply.text : "unknown error");
        return -1;
    }
    give_up(remote, "its decoding process gave a malformed answer", 0);
    snprintf(error, error_size, "%s", remote->broken_reason);
    return -1;
}

void cvideo_remote_set_scaler(cvideo_remote *remote, cvideo_scaler scaler, int accurate_rounding) {
    message request, reply;
    memset(&request, 0, sizeof request);
    request.op = op_scaler;
    request.rx = (int32_t)scaler;
    request.ry = accurate_rounding;
    char ignored[8];
    // A helper that fails here fails its next request the same way.
    (void)exchange(remote, &request, -1, &reply, ignored, sizeof ignored);
}

/// A new memory file of `bytes` shared with the helper as region `region`,
/// mapped at `at` (MAP_FIXED over memory the caller owns) or anywhere.
static uint8_t *share_region(cvideo_remote *remote, int region, void *at, size_t bytes, char *error, size_t error_size) {
    int fd = cplatform_memory_file("carousel-frame");
    if (fd < 0) {
        snprintf(error, error_size, "memfd_create: %s", strerror(errno));
        return NULL;
    }
    if (ftruncate(fd, (off_t)bytes) != 0) {
        snprintf(error, error_size, "no memory for a frame of %zu bytes (ftruncate: %s)", bytes, strerror(errno));
        close(fd);
        return NULL;
    }
    void *base = mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | (at ? MAP_FIXED : 0), fd, 0);
    if (base == MAP_FAILED) {
        snprintf(error, error_size, "mapping a frame's memory: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    message request, reply;
    memset(&request, 0, sizeof request);
    request.op = op_map;
    request.region = (uint32_t)region;
    request.offset = bytes;
    int result = exchange(remote, &request, fd, &reply, error, error_size);
    close(fd);
    if (result == 0 && reply.op != op_ok) {
        snprintf(error, error_size, "%s", reply.op == op_error && reply.text[0] ? reply.text : "its decoding process gave a malformed answer");
        result = -1;
    }
    if (result != 0) {
        // Memory the caller owns stays mapped (now to the file); ours goes.
        if (at == NULL) munmap(base, bytes);
        return NULL;
    }
    if (remote->regions[region].owned) munmap(remote->regions[region].base, remote->regions[region].size);
    remote->regions[region].base = base;
    remote->regions[region].size = bytes;
    remote->regions[region].owned = at == NULL;
    return base;
}

int cvideo_remote_share(cvideo_remote *remote, void *memory, size_t bytes, char *error, size_t error_size) {
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || ((uintptr_t)memory % (uintptr_t)page) != 0 || bytes == 0) {
        snprintf(error, error_size, "cannot share memory that does not start on a page");
        return -1;
    }
    size_t mapped = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    int region = -1;
    for (int i = 0; i < CVIDEO_REGIONS && region < 0; i++) {
        if (remote->regions[i].base == NULL) region = i;
    }
    if (region < 0) {
        snprintf(error, error_size, "no room for another shared frame");
        return -1;
    }
    return share_region(remote, region, memory, mapped, error, error_size) ? 0 : -1;
}

int cvideo_remote_draw(cvideo_remote *remote, void *dest, int width, int height, ptrdiff_t stride, int rx, int ry, int rw,
                       int rh, char *error, size_t error_size) {
    if (rw <= 0 || rh <= 0 || width <= 0 || height <= 0) return 0;
    if (stride < (ptrdiff_t)width * 4 || stride > INT32_MAX) {
        snprintf(error, error_size, "cannot draw: a stride of %td bytes for %d pixels", stride, width);
        return -1;
    }
    size_t bytes = (size_t)stride * (size_t)height;
    // The destination in memory the helper shares, or the scratch region
    // and a copy: posters and the first frame, once a clip.
    int region = -1;
    size_t offset = 0;
    for (int i = 0; i < CVIDEO_REGIONS && region < 0; i++) {
        uint8_t *base = remote->regions[i].base;
        if (base && (uint8_t *)dest >= base && (size_t)((uint8_t *)dest - base) <= remote->regions[i].size
            && bytes <= remote->regions[i].size - (size_t)((uint8_t *)dest - base)) {
            region = i;
            offset = (size_t)((uint8_t *)dest - base);
        }
    }
    int copy = region < 0;
    if (copy) {
        if (remote->scratch < 0 || remote->regions[remote->scratch].size < bytes) {
            int slot = remote->scratch;
            for (int i = 0; i < CVIDEO_REGIONS && slot < 0; i++) {
                if (remote->regions[i].base == NULL) slot = i;
            }
            if (slot < 0) {
                snprintf(error, error_size, "no room for another shared frame");
                return -1;
            }
            if (share_region(remote, slot, NULL, bytes, error, error_size) == NULL) return -1;
            remote->scratch = slot;
        }
        region = remote->scratch;
        offset = 0;
        // What the rectangle leaves of the destination stays as it was.
        if (rx > 0 || ry > 0 || (int64_t)rx + rw < width || (int64_t)ry + rh < height) {
            memcpy(remote->regions[region].base, dest, bytes);
        }
    }
    message request, reply;
    memset(&request, 0, sizeof request);
    request.op = op_draw;
    request.region = (uint32_t)region;
    request.offset = offset;
    request.width = width;
    request.height = height;
    request.stride = (int32_t)stride;
    request.rx = rx;
    request.ry = ry;
    request.rw = rw;
    request.rh = rh;
    if (exchange(remote, &request, -1, &reply, error, error_size) != 0) return -1;
    if (reply.op == op_error) {
        snprintf(error, error_size, "%s", reply.text[0] ? reply.text : "unknown error");
        return -1;
    }
    if (reply.op != op_ok || reply.rw != rw || reply.rh != rh) {
        char why[160];
        snprintf(why, sizeof why, "its decoding process drew a %dx%d frame it was not asked for (%dx%d)", reply.rw,
                 reply.rh, rw, rh);
        give_up(remote, why, 0);
        snprintf(error, error_size, "%s", remote->broken_reason);
        return -1;
    }
    if (copy) {
        memcpy(dest, remote->regions[region].base, bytes);
        // Copies are rare (a clip's first frame at its own size, a poster):
        // its memory, as large as the clip's frames, is not kept in either
        // process for the clip's length.
        message drop, answer;
        memset(&drop, 0, sizeof drop);
        drop.op = op_map;
        drop.region = (uint32_t)region;
        munmap(remote->regions[region].base, remote->regions[region].size);
        remote->regions[region].base = NULL;
        remote->regions[region].size = 0;
        remote->regions[region].owned = 0;
        remote->scratch = -1;
        char ignored[8];
        // A helper that fails here fails its next request the same way.
        (void)exchange(remote, &drop, -1, &answer, ignored, sizeof ignored);
    }
    return 0;
}

void cvideo_remote_close(cvideo_remote *remote) {
    if (remote == NULL) return;
    if (remote->socket >= 0) close(remote->socket);
    remote->socket = -1;
    if (remote->pid > 0) {
        // Its end is ours to reap: killed, since nothing it holds is worth waiting for.
        kill(remote->pid, SIGKILL);
        int status;
        while (waitpid(remote->pid, &status, 0) < 0 && errno == EINTR) {}
    }
    for (int i = 0; i < CVIDEO_REGIONS; i++) {
        if (remote->regions[i].owned) munmap(remote->regions[i].base, remote->regions[i].size);
    }
    free(remote);
}
