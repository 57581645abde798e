// CMosquittoLoader: libmosquitto, loaded when [mqtt] first connects rather
// than when carouseld starts.
//
// libmosquitto pulls in OpenSSL (libssl, libcrypto: ~1.5 MB of resident
// pages and their relocations at every start) although most frames use no
// MQTT. So the library is opened with dlopen() the first time a broker is
// configured, and called through the table below. Every entry has its
// prototype from <mosquitto.h>, so a mismatch is a compile error.
#ifndef CMOSQUITTOLOADER_H
#define CMOSQUITTOLOADER_H

#include <stddef.h>
#include <mosquitto.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CMOSQ_FUNCTIONS(X) \
    X(mosquitto_lib_init) \
    X(mosquitto_new) \
    X(mosquitto_destroy) \
    X(mosquitto_user_data_set) \
    X(mosquitto_connect_callback_set) \
    X(mosquitto_disconnect_callback_set) \
    X(mosquitto_message_callback_set) \
    X(mosquitto_int_option) \
    X(mosquitto_will_set) \
    X(mosquitto_username_pw_set) \
    X(mosquitto_tls_set) \
    X(mosquitto_strerror) \
    X(mosquitto_connack_string) \
    X(mosquitto_socket) \
    X(mosquitto_want_write) \
    X(mosquitto_loop_misc) \
    X(mosquitto_connect_async) \
    X(mosquitto_loop_read) \
    X(mosquitto_loop_write) \
    X(mosquitto_subscribe) \
    X(mosquitto_publish) \
    X(mosquitto_disconnect)

/// libmosquitto's functions, as loaded. Every entry is set when the table is given out.
typedef struct cmosq_library {
#define CMOSQ_FIELD(name) __typeof__(name) *_Nonnull name;
    CMOSQ_FUNCTIONS(CMOSQ_FIELD)
#undef CMOSQ_FIELD
} cmosq_library;

/// The soname opened: Debian 12's libmosquitto1.
#define CMOSQ_SONAME "libmosquitto.so.1"

/// Opens libmosquitto, fills `table` and calls mosquitto_lib_init: 0, or -1
/// with why in `error` (NUL-terminated, at most `error_size` bytes) when it
/// cannot be loaded or lacks a function (`table` must not be used then).
/// Called once per process, by Swift's lazy `MQTTLink.library`.
int cmosq_load(cmosq_library *_Nonnull table, char *_Nonnull error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
