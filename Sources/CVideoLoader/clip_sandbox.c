// See CVideoLoader.h: the helper's system call filter (cvideo_sandbox).
#include "CVideoLoader.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

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
