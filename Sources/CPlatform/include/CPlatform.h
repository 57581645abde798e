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

// An anonymous file in memory (memfd_create with MFD_CLOEXEC): a buffer with
// a descriptor for writers that want one, where /tmp may be read-only.
int cplatform_memory_file(const char *name);

// rename(2) that never replaces: renameat2 with RENAME_NOREPLACE (declared
// by glibc only with _GNU_SOURCE). 0, or -1 with errno (EEXIST: the name is taken).
int cplatform_rename_noreplace(const char *from, const char *to);

/// Starts `path` with `argv` and `envp` as a helper process that sees
/// `input` as its descriptor 3 and `output` as its descriptor 4, /dev/null
/// as 0, 1 and 2, and no other descriptor of ours; its signal mask is empty
/// and TERM, INT, HUP and PIPE are at their defaults (we block some of
/// them for the loop's signalfd). posix_spawn, so a process with threads
/// may call it. Returns 0 and sets `*pid`, or an errno value.
int cplatform_spawn_helper(const char *path, char *const argv[], char *const envp[],
                           int input, int output, pid_t *pid);

/// Starts `path` (found on PATH when it has no slash) with `argv` and
/// `envp`, /dev/null as its standard input and `output` and `errors` as its
/// standard output and error, no other descriptor of ours, an empty signal
/// mask and default dispositions, as `cplatform_spawn_helper` does. For
/// tools the sync runs (rclone). Returns 0 and sets `*pid`, or an errno value.
int cplatform_spawn_tool(const char *path, char *const argv[], char *const envp[],
                         int output, int errors, pid_t *pid);

/// pidfd_open(2): a descriptor that polls readable once `pid` has ended.
/// -1 with errno (ENOSYS before Linux 5.3).
int cplatform_pidfd_open(pid_t pid);

/// Raises the calling thread's nice value by `increment` (on Linux nice is
/// a thread's own), the first time it is called on a thread; later calls on
/// the same thread do nothing. Returns 0, or -1 with errno set.
int cplatform_nice_this_thread(int increment);

/// The calling thread's id (gettid).
pid_t cplatform_thread_id(void);

/// For a helper process: killed when its parent ends (PR_SET_PDEATHSIG),
/// no core file (RLIMIT_CORE 0: a helper's crash is an expected outcome the
/// parent reports in one line), and the out-of-memory killer's first choice
/// (oom_score_adj 1000). Returns 0 or -1 with errno.
int cplatform_helper_process_setup(void);

/// Caps this process's address space (RLIMIT_AS) at what it has mapped now
/// plus `allowance` bytes, so that an allocation past it fails (malloc gives
/// NULL) instead of growing the process; a lower cap already set stays. 0,
/// or -1 with errno when /proc/self/statm cannot be read or the limit cannot
/// be set.
int cplatform_limit_address_space(size_t allowance);

/// Opens the shared library `soname` (dlopen, RTLD_NOW | RTLD_LOCAL) and
/// resolves the `count` functions named in `names` into `table`, in order.
/// For libraries only some runs need (libheif, libmosquitto): linked, every
/// start of carouseld would load them and their dependencies. Returns 0, or
/// -1 with why in `error` (NUL-terminated, at most `error_size` bytes);
/// `table` is then partly filled and must not be used.
int cplatform_load_library(const char *soname, const char *const *names, size_t count,
                           void **table, char *error, size_t error_size);

#endif
