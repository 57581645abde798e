// See CVideoLoader.h: the helper's side of a clip decoded in a helper
// process (carouseld decode-clip): it opens the clip, shuts itself in
// (clip_sandbox.c) and answers the parent (clip_process.c).
#include "clip_wire.h"

#include <CPlatform.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die_by(int signal_number) {
    signal(signal_number, SIG_DFL);
    raise(signal_number);
    _exit(70);
}

/// A test's fault, from CVIDEO_TEST_FAULT_VARIABLE: what the helper does
/// on its tenth frame (die, hang, spin), on every draw (lie), on its first frame
/// (escape: tries what the sandbox forbids and says what it got), or in
/// what it says of the clip (oversize: a width of 2^20).
static int test_fault(const char *name) {
    const char *value = getenv(CVIDEO_TEST_FAULT_VARIABLE);
    return value != NULL && strcmp(value, name) == 0;
}

int cvideo_serve(int clip_fd, int channel, int hardware, int64_t max_pixels) {
    message m;
    memset(&m, 0, sizeof m);
    char path[32];
    snprintf(path, sizeof path, "/proc/self/fd/%d", clip_fd);
    cvideo_clip *clip = cvideo_open(path, hardware, max_pixels, &m.info, m.text, sizeof m.text);
    if (clip == NULL) {
        m.op = op_error;
        return send_message(channel, &m, -1) == 0 ? 0 : 1;
    }
    // Nothing more to open: the file, FFmpeg's libraries, its threads and
    // (hardware) the V4L2 device are. From here on only the descriptors
    // held now are reachable.
    close(clip_fd);  // FFmpeg reads through its own descriptor of the file
    int fault_die = test_fault("SIGSEGV"), fault_hang = test_fault("hang"), fault_lie = test_fault("lie");
    int fault_escape = test_fault("escape"), fault_spin = test_fault("spin");
    // ioctl only for a V4L2 decoder actually in use, not merely allowed.
    int device = hardware && strstr(m.info.decoder, "v4l2m2m") != NULL;
    if (cvideo_sandbox(device, m.text, sizeof m.text) != 0) {
        m.op = op_error;
        send_message(channel, &m, -1);
        return 1;
    }
    m.op = op_info;
    if (test_fault("oversize")) m.info.coded_width = 1 << 20;  // a clip far past max_pixels
    if (send_message(channel, &m, -1) != 0) return 1;
    struct { uint8_t *base; size_t size; } regions[CVIDEO_REGIONS] = {{0}};
    long frames = 0;
    for (;;) {
        message request;
        int fds[1] = {-1};
        int nfds = 0;
        ssize_t got = cplatform_recv_with_fds(channel, &request, sizeof request, fds, 1, &nfds);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
            // cplatform_recv_with_fds does not block: wait for the next request.
            struct pollfd entry = {channel, POLLIN, 0};
            if (errno == EAGAIN && poll(&entry, 1, -1) < 0 && errno != EINTR) break;
            continue;
        }
        if (got != (ssize_t)sizeof request) break;  // the parent is gone, or spoke nonsense
        message reply;
        memset(&reply, 0, sizeof reply);
        reply.op = op_ok;
        switch (request.op) {
        case op_map:
            if (nfds == 0 && request.offset == 0 && request.region < CVIDEO_REGIONS) {
                // No file: the region goes (the parent's scratch after a copy).
                if (regions[request.region].base) munmap(regions[request.region].base, regions[request.region].size);
                regions[request.region].base = NULL;
                regions[request.region].size = 0;
            } else if (nfds != 1 || request.region >= CVIDEO_REGIONS || request.offset == 0 || request.offset > SIZE_MAX) {
                reply.op = op_error;
                snprintf(reply.text, sizeof reply.text, "a memory file it could not map");
            } else {
                if (regions[request.region].base) munmap(regions[request.region].base, regions[request.region].size);
                void *base = mmap(NULL, (size_t)request.offset, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
                regions[request.region].base = base == MAP_FAILED ? NULL : base;
                regions[request.region].size = base == MAP_FAILED ? 0 : (size_t)request.offset;
                if (base == MAP_FAILED) {
                    reply.op = op_error;
                    snprintf(reply.text, sizeof reply.text, "mapping frames' memory: %s", strerror(errno));
                }
            }
            break;
        case op_next: {
            frames++;
            if (fault_die && frames == 10) die_by(SIGSEGV);
            // nanosleep, not pause: the filter refuses pause (EPERM at once).
            if (fault_hang && frames == 10) for (;;) nanosleep(&(struct timespec){3600, 0}, NULL);
            if (fault_spin && frames == 10) for (volatile unsigned long spin = 0;; spin++) {}
            if (fault_escape) {
                int file = openat(AT_FDCWD, "/etc/hostname", O_RDONLY);
                int file_errno = errno;
                int net = socket(AF_INET, SOCK_STREAM, 0);
                int net_errno = errno;
                if (file >= 0) close(file);
                if (net >= 0) close(net);
                reply.op = op_error;
                snprintf(reply.text, sizeof reply.text, "escape: openat %s, socket %s",
                         file >= 0 ? "succeeded" : file_errno == EPERM ? "refused (EPERM)" : "failed otherwise",
                         net >= 0 ? "succeeded" : net_errno == EPERM ? "refused (EPERM)" : "failed otherwise");
                break;
            }
            int result = cvideo_next(clip, &reply.time, reply.text, sizeof reply.text);
            reply.op = result > 0 ? op_frame : result == 0 ? op_end : op_error;
            break;
        }
        case op_draw: {
            uint8_t *base = request.region < CVIDEO_REGIONS ? regions[request.region].base : NULL;
            size_t size = base ? regions[request.region].size : 0;
            size_t rows = request.height > 0 ? (size_t)request.height : 0;
            // The destination within the region, whatever the parent asked.
            if (base == NULL || request.width <= 0 || request.height <= 0 || request.stride < 4 * request.width
                || request.offset > size || rows > (size - request.offset) / (size_t)request.stride) {
                reply.op = op_error;
                snprintf(reply.text, sizeof reply.text, "a destination outside its memory");
                break;
            }
            if (cvideo_draw(clip, base + request.offset, request.width, request.height, request.stride, request.rx,
                            request.ry, request.rw, request.rh, reply.text, sizeof reply.text) != 0) {
                reply.op = op_error;
                break;
            }
            reply.rw = request.rw + (fault_lie ? 1 : 0);
            reply.rh = request.rh;
            break;
        }
        case op_rewind:
            if (cvideo_rewind(clip, reply.text, sizeof reply.text) != 0) reply.op = op_error;
            break;
        case op_scaler:
            cvideo_set_scaler(clip, (cvideo_scaler)request.rx, request.ry);
            break;
        default:
            reply.op = op_error;
            snprintf(reply.text, sizeof reply.text, "an unknown request");
            break;
        }
        if (nfds == 1) close(fds[0]);
        if (send_message(channel, &reply, -1) != 0) break;
    }
    cvideo_close(clip);
    return 0;
}
