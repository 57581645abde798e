// Linux headers Swift's Glibc module does not bring in: the event loop's
// descriptors (epoll, timerfd, signalfd, eventfd), and the CMSG macros that
// passing a descriptor over a Unix socket needs (they are macros, which
// Swift cannot call).
#ifndef CPLATFORM_H
#define CPLATFORM_H

#include <stddef.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/types.h>

/// recv() on a Unix stream socket that also takes descriptors sent with the
/// bytes (SCM_RIGHTS), close-on-exec. Up to `max_fds` land in `fds` and
/// `*nfds` says how many; any beyond (or all, if the control data was cut
/// short) are closed at once, so a client cannot make the daemon hold more.
/// Returns what recv() returns (-1 with errno on error).
ssize_t cplatform_recv_with_fds(int socket, void *buffer, size_t length, int *fds, int max_fds, int *nfds);

/// send() of `length` bytes with one descriptor attached (SCM_RIGHTS).
/// Returns what sendmsg() returns.
ssize_t cplatform_send_with_fd(int socket, const void *buffer, size_t length, int fd);

#endif

// An anonymous file in memory (memfd_create with MFD_CLOEXEC): a buffer with
// a descriptor for writers that want one, where /tmp may be read-only.
int cplatform_memory_file(const char *name);
