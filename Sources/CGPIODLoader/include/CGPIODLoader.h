// CGPIODLoader: libgpiod (v1, Debian 12's libgpiod2 1.6), loaded when
// `[power] presence = gpio:...` is configured rather than when carouseld
// starts.
//
// Most frames have no presence sensor, and the package does not depend on
// libgpiod: the library is opened with dlopen() the first time a GPIO line
// is configured, and called through the table below. Every entry has its
// prototype from <gpiod.h>, so a mismatch is a compile error.
#ifndef CGPIODLOADER_H
#define CGPIODLOADER_H

#include <stddef.h>
#include <gpiod.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CGPIOD_FUNCTIONS(X) \
    X(gpiod_chip_open_lookup) \
    X(gpiod_chip_close) \
    X(gpiod_chip_name) \
    X(gpiod_chip_label) \
    X(gpiod_chip_get_line) \
    X(gpiod_chip_find_line) \
    X(gpiod_line_offset) \
    X(gpiod_line_request_both_edges_events_flags) \
    X(gpiod_line_event_get_fd) \
    X(gpiod_line_event_read_fd_multiple) \
    X(gpiod_line_get_value) \
    X(gpiod_line_release)

/// libgpiod's functions, as loaded. Every entry is set when the table is given out.
typedef struct cgpiod_library {
#define CGPIOD_FIELD(name) __typeof__(name) *_Nonnull name;
    CGPIOD_FUNCTIONS(CGPIOD_FIELD)
#undef CGPIOD_FIELD
} cgpiod_library;

/// The soname opened: Debian 12's libgpiod2 (the v1 API; libgpiod 2.x is libgpiod.so.3).
#define CGPIOD_SONAME "libgpiod.so.2"

/// GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW, as a plain int for Swift.
static const int cgpiod_flag_active_low = GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW;

/// Opens libgpiod and fills `table`: 0, or -1 with why in `error`
/// (NUL-terminated, at most `error_size` bytes) when it cannot be loaded or
/// lacks a function (`table` must not be used then). Called once per
/// process, by Swift's lazy `GPIOPresenceLine.library`.
int cgpiod_load(cgpiod_library *_Nonnull table, char *_Nonnull error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
