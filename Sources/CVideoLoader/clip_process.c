// See CVideoLoader.h: clips decoded in a helper process.
#include "CVideoLoader.h"

#include <CPlatform.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// ---------------------------------------------------------------- the wire

// One fixed-size message each way over a SOCK_SEQPACKET pair: a message is
// read whole or not at all, so a helper cannot make the parent read a
// length it chose. Every field the parent reads is checked before use.
enum {
    op_info = 1,     // helper -> parent, once: the clip opened (info) or not (error)
    op_map = 2,      // parent -> helper, with a memory file: map it as region `region`
    op_next = 3,     // decode the next frame: reply frame (time), end, or error
    op_draw = 4,     // draw the current frame into region `region` at `offset`
    op_rewind = 5,
    op_scaler = 6,
    op_ok = 7,       // helper -> parent: done (draw: the size drawn)
    op_frame = 8,
    op_end = 9,
    op_error = 10,
};

#define CVIDEO_REGIONS 8

typedef struct message {
    uint32_t op;
    uint32_t region;
    uint64_t offset;  // op_map: the file's size; op_draw: where the destination starts
    int32_t width, height, stride;  // op_draw: the destination
    int32_t rx, ry, rw, rh;          // op_draw: the rectangle; op_scaler: rx scaler, ry accurate
    double time;                     // op_frame
    cvideo_info info;                // op_info
    char text[240];                  // op_error
} message;

static int send_message(int socket, const message *m, int fd) {
    if (fd >= 0) return cplatform_send_with_fd(socket, m, sizeof *m, fd) == (ssize_t)sizeof *m ? 0 : -1;
    for (;;) {
        ssize_t n = send(socket, m, sizeof *m, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        return n == (ssize_t)sizeof *m ? 0 : -1;
    }
}

// ---------------------------------------------------------------- the sandbox

#if defined(__x86_64__)
#define CVIDEO_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CVIDEO_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
// FIXME: 32-bit ARM (mmap2, fstatat64, _llseek...) has no filter yet: there
// the helper refuses every clip ("no system call filter for this
// architecture") rather than decode one unconfined.

#define ALLOW(name) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_##name, 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int cvideo_sandbox(int hardware, char *error, size_t error_size) {
#ifndef CVIDEO_AUDIT_ARCH
    (void)hardware;
    snprintf(error, error_size, "no system call filter for this architecture");
    return -1;
#else
    // What decoding needs once the clip, FFmpeg's libraries and its threads
    // are open: memory, threads' futexes, the socket to the parent, reads
    // of the clip's descriptor. Anything else (openat, socket, connect,
    // execve, ptrace, kill of another process...) fails with EPERM: a
    // codec bug taken over by a crafted clip reaches no file, device or
    // network. V4L2 decoders (hardware) talk to their device by ioctl and poll.
    struct sock_filter common[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CVIDEO_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        ALLOW(read), ALLOW(write), ALLOW(readv), ALLOW(writev), ALLOW(pread64), ALLOW(lseek), ALLOW(close),
        ALLOW(fstat), ALLOW(newfstatat), ALLOW(mmap), ALLOW(munmap), ALLOW(mprotect), ALLOW(mremap), ALLOW(madvise),
        ALLOW(brk), ALLOW(futex), ALLOW(sched_yield), ALLOW(sched_getaffinity), ALLOW(clone), ALLOW(clone3),
        ALLOW(set_robust_list), ALLOW(rseq), ALLOW(rt_sigprocmask), ALLOW(rt_sigreturn), ALLOW(sigaltstack),
        ALLOW(exit), ALLOW(exit_group), ALLOW(gettid), ALLOW(getpid), ALLOW(tgkill), ALLOW(clock_gettime),
        ALLOW(clock_nanosleep), ALLOW(nanosleep), ALLOW(getrandom), ALLOW(sendmsg), ALLOW(recvmsg), ALLOW(sendto),
        ALLOW(recvfrom), ALLOW(ppoll),
#ifdef __NR_poll
        ALLOW(poll),
#endif
    };
    struct sock_filter device[] = {ALLOW(ioctl)};
    struct sock_filter last[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))};
    size_t n = sizeof common / sizeof *common, d = hardware ? sizeof device / sizeof *device : 0;
    struct sock_filter program[sizeof common / sizeof *common + sizeof device / sizeof *device + 1];
    memcpy(program, common, sizeof common);
    memcpy(program + n, device, d * sizeof *device);
    program[n + d] = last[0];
    struct sock_fprog filter = {(unsigned short)(n + d + 1), program};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(error, error_size, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
        return -1;
    }
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter) != 0) {
        int code = errno;
        // What systemd's SystemCallFilter=@system-service does to it.
        snprintf(error, error_size, "seccomp(SECCOMP_SET_MODE_FILTER): %s%s", strerror(code),
                 code == EPERM ? " (a system call filter around carouseld refuses it: carouseld.service allows it "
                                 "with SystemCallFilter=seccomp)" : "");
        return -1;
    }
    return 0;
#endif
}

// ---------------------------------------------------------------- the helper's side

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

// ---------------------------------------------------------------- the parent's side

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
