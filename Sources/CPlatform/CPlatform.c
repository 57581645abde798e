// Descriptor passing over Unix sockets, and memfd_create (glibc declares it
// only with _GNU_SOURCE, which Swift's Glibc module does not define).
#define _GNU_SOURCE
#include "CPlatform.h"

#include <sys/mman.h>

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
