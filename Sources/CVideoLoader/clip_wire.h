// The messages between carouseld and its clip helper: clip_process.c is
// the parent's side, clip_helper.c the helper's. Private to CVideoLoader.
#ifndef CVIDEO_CLIP_WIRE_H
#define CVIDEO_CLIP_WIRE_H

#include "CVideoLoader.h"

#include <CPlatform.h>
#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>

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

static inline int send_message(int socket, const message *m, int fd) {
    if (fd >= 0) return cplatform_send_with_fd(socket, m, sizeof *m, fd) == (ssize_t)sizeof *m ? 0 : -1;
    for (;;) {
        ssize_t n = send(socket, m, sizeof *m, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        return n == (ssize_t)sizeof *m ? 0 : -1;
    }
}

#endif
