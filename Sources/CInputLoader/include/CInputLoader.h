// CInputLoader: libinput, loaded when the daemon opens its input devices
// (after the first picture is on screen) rather than when carouseld starts.
//
// libinput pulls in libwacom, libgudev, glib and gobject (whose constructors
// run at load), libpcre2-8, libffi, libevdev and libmtdev: linked normally,
// every start of carouseld loaded and relocated those nine libraries before
// main, although the daemon reads no device until its first frame is handed
// to the display (InputService) and most subcommands never do (issue 31).
// So it is opened with dlopen() by the first InputContext of the process and
// called through the table below. Every entry has its prototype from
// <libinput.h>, so a mismatch is a compile error, not a crash. Its types and
// enums (struct libinput_interface, LIBINPUT_EVENT_TOUCH_DOWN) come from the
// same header and need no library.
//
// The header is in /usr/include (Debian: libinput-dev); the CLibinput module
// names it without linking the library.
#ifndef CINPUTLOADER_H
#define CINPUTLOADER_H

#include <stddef.h>
#include <libinput.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Every libinput function carouseld calls: from Swift (CarouselInput's
/// InputContext) and from C (CInputShim's log handler, which is given
/// `libinput_log_set_handler` from this table).
#define CINPUT_FUNCTIONS(X) \
    X(libinput_udev_create_context) \
    X(libinput_udev_assign_seat) \
    X(libinput_unref) \
    X(libinput_get_user_data) \
    X(libinput_get_fd) \
    X(libinput_dispatch) \
    X(libinput_get_event) \
    X(libinput_suspend) \
    X(libinput_resume) \
    X(libinput_log_set_handler) \
    X(libinput_log_set_priority) \
    X(libinput_event_destroy) \
    X(libinput_event_get_type) \
    X(libinput_event_get_device) \
    X(libinput_event_get_touch_event) \
    X(libinput_event_get_pointer_event) \
    X(libinput_event_get_keyboard_event) \
    X(libinput_event_touch_get_seat_slot) \
    X(libinput_event_touch_get_x_transformed) \
    X(libinput_event_touch_get_y_transformed) \
    X(libinput_event_touch_get_time_usec) \
    X(libinput_event_pointer_get_dx) \
    X(libinput_event_pointer_get_dy) \
    X(libinput_event_pointer_get_absolute_x_transformed) \
    X(libinput_event_pointer_get_absolute_y_transformed) \
    X(libinput_event_pointer_get_button) \
    X(libinput_event_pointer_get_button_state) \
    X(libinput_event_pointer_get_time_usec) \
    X(libinput_event_keyboard_get_key) \
    X(libinput_event_keyboard_get_key_state) \
    X(libinput_event_keyboard_get_time_usec) \
    X(libinput_device_get_name) \
    X(libinput_device_get_sysname) \
    X(libinput_device_get_size) \
    X(libinput_device_get_udev_device) \
    X(libinput_device_has_capability) \
    X(libinput_device_config_calibration_has_matrix) \
    X(libinput_device_config_calibration_get_default_matrix) \
    X(libinput_device_config_calibration_set_matrix) \
    X(libinput_config_status_to_str)

/// libinput's functions, as loaded. Every entry is set when the table is given out.
typedef struct cinput_library {
#define CINPUT_FIELD(name) __typeof__(name) *_Nonnull name;
    CINPUT_FUNCTIONS(CINPUT_FIELD)
#undef CINPUT_FIELD
} cinput_library;

/// The soname opened: Debian 12's libinput10.
#define CINPUT_SONAME "libinput.so.10"

/// Opens libinput and fills `table`: 0, or -1 with why in `error`
/// (NUL-terminated, at most `error_size` bytes, naming the library) when it
/// cannot be loaded or lacks a function; `table` must not be used then.
/// Called once per process, by Swift's lazy `InputLibrary.loaded`.
int cinput_load(cinput_library *_Nonnull table, char *_Nonnull error, size_t error_size);

/// `cinput_load` with another soname: for tests of a library that is
/// missing or is not libinput.
int cinput_load_soname(const char *_Nonnull soname, cinput_library *_Nonnull table, char *_Nonnull error,
                       size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
