// CInputShim: the parts of libinput that Swift cannot call or be called by.
//
// libinput reports its log messages through a printf-style handler taking a
// va_list, which Swift can neither implement nor forward. The handler here
// formats each message with vsnprintf and passes the finished text to a plain
// C function pointer (a Swift @convention(c) function), with the context so
// that the receiver can find its owner through libinput_get_user_data().
// libinput is not linked (see CInputLoader.h): the caller hands in
// libinput_log_set_handler from its loaded table.
//
// It also brings in the kernel's input event codes (KEY_*, BTN_*), so that
// Swift uses linux/input-event-codes.h's values instead of copies.
#ifndef CINPUTSHIM_H
#define CINPUTSHIM_H

#include <libinput.h>
#include <linux/input-event-codes.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Receives one formatted libinput log message. `priority` is a
/// `enum libinput_log_priority` value; `text` is valid only during the call
/// and usually ends with a newline.
typedef void (*cis_log_sink)(struct libinput *libinput, int priority, const char *text);

/// Installs the formatting handler on `libinput` through `set_handler`
/// (libinput_log_set_handler, as loaded by CInputLoader) and makes `sink`
/// the receiver of every message. The sink is process-wide (libinput's
/// handler has no user-data argument of its own): every context installed
/// this way reports to the most recently installed sink, which callers keep
/// the same function.
void cis_log_install(struct libinput *libinput, cis_log_sink sink,
                     __typeof__(libinput_log_set_handler) *set_handler);

#ifdef __cplusplus
}
#endif

#endif
