// Descriptor passing over Unix sockets, and memfd_create (glibc declares it
// only with _GNU_SOURCE, which Swift's Glibc module does not define).
#define _GNU_SOURCE
#include "CPlatform.h"

#include <sys/mman.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { MAX_PASSED = 8 };

ssize_t cplatform_recv_with_fds(int socket, void *buffer, size_t length, int *fds, int max_fds, int *nfds) {
    *nfds = 0;
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int) * MAX_PASSED)];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = buffer, .iov_len = length};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control};
    ssize_t n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0) return n;
    int keep = (msg.msg_flags & MSG_CTRUNC) ? 0 : max_fds;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (*nfds < keep) {
                fds[(*nfds)++] = fd;
            } else {
                close(fd);
            }
        }
    }
    return n;
}

ssize_t cplatform_send_with_fd(int socket, const void *buffer, size_t length, int fd) {
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = (void *)buffer, .iov_len = length};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(socket, &msg, MSG_NOSIGNAL);
}

int cplatform_memory_file(const char *name) {
    return memfd_create(name, MFD_CLOEXEC);
}

// Starts `path` with the child's descriptors 0 to 4 as `fds` says (-1:
// /dev/null, or nothing past `count`), no other descriptor of ours, an
// empty signal mask and TERM, INT, HUP and PIPE at their defaults. The
// one posix_spawn both kinds of child below go through.
static int spawn_mapped(const char *path, char *const argv[], char *const envp[], const int *fds, int count,
                        pid_t *pid) {
    // Copies above 4 first: dup2 onto a descriptor that is already that
    // number would keep its close-on-exec flag, and one copy must not
    // overwrite another's source (`output` may be 3).
    int copies[5] = {-1, -1, -1, -1, -1};
    int result = 0;
    for (int i = 0; i < count && result == 0; i++) {
        if (fds[i] >= 0 && (copies[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) < 0) result = errno;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    if (result == 0 && (result = posix_spawn_file_actions_init(&actions)) == 0) {
        if ((result = posix_spawnattr_init(&attributes)) == 0) {
            sigset_t none, defaults;
            sigemptyset(&none);
            sigemptyset(&defaults);
            sigaddset(&defaults, SIGTERM);
            sigaddset(&defaults, SIGINT);
            sigaddset(&defaults, SIGHUP);
            sigaddset(&defaults, SIGPIPE);
            if ((result = posix_spawnattr_setsigmask(&attributes, &none)) == 0
                && (result = posix_spawnattr_setsigdefault(&attributes, &defaults)) == 0) {
                result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
            }
            for (int i = 0; i < count && result == 0; i++) {
                result = copies[i] >= 0 ? posix_spawn_file_actions_adddup2(&actions, copies[i], i)
                                        : posix_spawn_file_actions_addopen(&actions, i, "/dev/null", i == 0 ? O_RDONLY : O_WRONLY, 0);
            }
            if (result == 0) result = posix_spawn_file_actions_addclosefrom_np(&actions, count);
            if (result == 0) {
                result = strchr(path, '/') ? posix_spawn(pid, path, &actions, &attributes, argv, envp)
                                           : posix_spawnp(pid, path, &actions, &attributes, argv, envp);
            }
            posix_spawnattr_destroy(&attributes);
        }
        posix_spawn_file_actions_destroy(&actions);
    }
    for (int i = 0; i < count; i++) {
        if (copies[i] >= 0) close(copies[i]);
    }
    return result;
}

int cplatform_spawn_helper(const char *path, char *const argv[], char *const envp[],
                           int input, int output, pid_t *pid) {
    const int fds[5] = {-1, -1, -1, input, output};
    return spawn_mapped(path, argv, envp, fds, 5, pid);
}

int cplatform_spawn_tool(const char *path, char *const argv[], char *const envp[],
                         int output, int errors, pid_t *pid) {
    const int fds[3] = {-1, output, errors};
    return spawn_mapped(path, argv, envp, fds, 3, pid);
}

int cplatform_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int cplatform_helper_process_setup(void) {
    // Each step on its own: a sandbox that refuses one (a stricter system
    // call filter than the unit's) does not undo the others.
    int result = 0;
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) result = -1;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) result = -1;
    // The kernel's first choice when memory runs out: a damaged picture
    // can make libheif allocate gigabytes, and it must be the helper that
    // goes, not the daemon. Raising one's own score needs no privilege.
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    if (write(fd, "1000", 4) != 4) result = -1;
    close(fd);
    return result;
}

int cplatform_limit_address_space(size_t allowance) {
    // statm's first field: the whole virtual size, in pages.
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char text[128];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) {
        errno = EIO;
        return -1;
    }
    text[n] = 0;
    unsigned long long pages = strtoull(text, NULL, 10);
    long page_size = sysconf(_SC_PAGESIZE);
    if (pages == 0 || page_size <= 0) {
        errno = EIO;
        return -1;
    }
    unsigned long long mapped = pages * (unsigned long long)page_size;
    unsigned long long wanted = mapped + allowance;
    if (wanted < mapped) wanted = RLIM_INFINITY;  // overflow: no cap
    struct rlimit cap = {(rlim_t)wanted, (rlim_t)wanted};
    struct rlimit current;
    // Never raise a cap someone else set lower (a unit's LimitAS=).
    if (getrlimit(RLIMIT_AS, &current) == 0 && current.rlim_max != RLIM_INFINITY && current.rlim_max < cap.rlim_max) {
        cap.rlim_cur = cap.rlim_max = current.rlim_max;
    }
    return setrlimit(RLIMIT_AS, &cap);
}

int cplatform_load_library(const char *soname, const char *const *names, size_t count,
                           void **table, char *error, size_t error_size) {
    // RTLD_LOCAL: nothing else in the process binds to the library's symbols.
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        snprintf(error, error_size, "%s", why ? why : "dlopen failed");
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        // POSIX: dlsym's result converts to a function pointer.
        table[i] = dlsym(handle, names[i]);
        if (table[i] == NULL) {
            snprintf(error, error_size, "%s has no %s", soname, names[i]);
            return -1;
        }
    }
    return 0;
}

pid_t cplatform_thread_id(void) { return (pid_t)syscall(SYS_gettid); }

int cplatform_nice_this_thread(int increment) {
    static __thread int niced;
    if (niced) return 0;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int current = getpriority(PRIO_PROCESS, (id_t)tid);
    if (current == -1 && errno != 0) return -1;
    if (setpriority(PRIO_PROCESS, (id_t)tid, current + increment) != 0) return -1;
    niced = 1;
    return 0;
}

int cplatform_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
