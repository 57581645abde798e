// CCurlLoader: libcurl, loaded by `carouseld sync` when it first fetches
// rather than linked into carouseld.
//
// libcurl brings OpenSSL, nghttp2, libssh2, LDAP, Kerberos and more: a
// dozen libraries whose relocations every start of the daemon would pay
// for, although only the sync process talks HTTP. So the library is opened
// with dlopen() by the sync, and called through the table below. Every
// entry has its prototype from <curl/curl.h>, so a mismatch is a compile
// error. curl_easy_setopt and curl_easy_getinfo are variadic, which Swift
// cannot call: the typed wrappers below call them.
#ifndef CCURLLOADER_H
#define CCURLLOADER_H

#include <stddef.h>
#include <curl/curl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CCURL_FUNCTIONS(X) \
    X(curl_global_init) \
    X(curl_easy_init) \
    X(curl_easy_cleanup) \
    X(curl_easy_reset) \
    X(curl_easy_setopt) \
    X(curl_easy_perform) \
    X(curl_easy_getinfo) \
    X(curl_easy_strerror) \
    X(curl_slist_append) \
    X(curl_slist_free_all) \
    X(curl_version)

/// libcurl's functions, as loaded. Every entry is set when the table is given out.
typedef struct ccurl_library {
#define CCURL_FIELD(name) __typeof__(name) *_Nonnull name;
    CCURL_FUNCTIONS(CCURL_FIELD)
#undef CCURL_FIELD
} ccurl_library;

/// The soname opened: Debian 12's libcurl4 (OpenSSL).
#define CCURL_SONAME "libcurl.so.4"

/// Opens libcurl, fills `table` and calls curl_global_init: 0, or -1 with
/// why in `error` (NUL-terminated, at most `error_size` bytes).
int ccurl_load(ccurl_library *_Nonnull table, char *_Nonnull error, size_t error_size);

/// curl_easy_setopt for each kind of value an option takes.
CURLcode ccurl_setopt_long(const ccurl_library *_Nonnull table, CURL *_Nonnull handle, CURLoption option, long value);
CURLcode ccurl_setopt_string(const ccurl_library *_Nonnull table, CURL *_Nonnull handle, CURLoption option,
                             const char *_Nullable value);
CURLcode ccurl_setopt_pointer(const ccurl_library *_Nonnull table, CURL *_Nonnull handle, CURLoption option,
                              void *_Nullable value);
CURLcode ccurl_setopt_off(const ccurl_library *_Nonnull table, CURL *_Nonnull handle, CURLoption option, curl_off_t value);

/// The callback libcurl calls with each piece of a response's body (CURLOPT_WRITEFUNCTION).
typedef size_t (*ccurl_write_callback)(char *_Nonnull data, size_t size, size_t count, void *_Nullable context);
CURLcode ccurl_setopt_write(const ccurl_library *_Nonnull table, CURL *_Nonnull handle, ccurl_write_callback _Nonnull callback,
                            void *_Nullable context);

/// The callback libcurl calls while a transfer runs (CURLOPT_XFERINFOFUNCTION):
/// non-zero aborts it (CURLE_ABORTED_BY_CALLBACK).
typedef int (*ccurl_progress_callback)(void *_Nullable context, curl_off_t download_total, curl_off_t downloaded,
                                       curl_off_t upload_total, curl_off_t uploaded);
CURLcode ccurl_setopt_progress(const ccurl_library *_Nonnull table, CURL *_Nonnull handle,
                               ccurl_progress_callback _Nonnull callback, void *_Nullable context);

/// curl_easy_getinfo for a long (CURLINFO_RESPONSE_CODE) and a curl_off_t (sizes).
CURLcode ccurl_getinfo_long(const ccurl_library *_Nonnull table, CURL *_Nonnull handle, CURLINFO info, long *_Nonnull value);
CURLcode ccurl_getinfo_off(const ccurl_library *_Nonnull table, CURL *_Nonnull handle, CURLINFO info,
                           curl_off_t *_Nonnull value);

#ifdef __cplusplus
}
#endif

#endif
