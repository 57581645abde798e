// See CCurlLoader.h.
#include "CCurlLoader.h"

#include <CPlatform.h>
#include <stdio.h>

static const char *const names[] = {
#define CCURL_NAME(name) #name,
    CCURL_FUNCTIONS(CCURL_NAME)
#undef CCURL_NAME
};
// The table is filled as an array of function pointers.
_Static_assert(sizeof(ccurl_library) == sizeof names / sizeof names[0] * sizeof(void *), "one pointer per function");

int ccurl_load(ccurl_library *table, char *error, size_t error_size) {
    if (cplatform_load_library(CCURL_SONAME, names, sizeof names / sizeof names[0], (void **)table, error,
                               error_size) != 0) {
        return -1;
    }
    CURLcode rc = table->curl_global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        snprintf(error, error_size, "curl_global_init failed: %s", table->curl_easy_strerror(rc));
        return -1;
    }
    return 0;
}

CURLcode ccurl_setopt_long(const ccurl_library *table, CURL *handle, CURLoption option, long value) {
    return table->curl_easy_setopt(handle, option, value);
}

CURLcode ccurl_setopt_string(const ccurl_library *table, CURL *handle, CURLoption option, const char *value) {
    return table->curl_easy_setopt(handle, option, value);
}

CURLcode ccurl_setopt_pointer(const ccurl_library *table, CURL *handle, CURLoption option, void *value) {
    return table->curl_easy_setopt(handle, option, value);
}

CURLcode ccurl_setopt_off(const ccurl_library *table, CURL *handle, CURLoption option, curl_off_t value) {
    return table->curl_easy_setopt(handle, option, value);
}

CURLcode ccurl_setopt_write(const ccurl_library *table, CURL *handle, ccurl_write_callback callback, void *context) {
    CURLcode rc = table->curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
    if (rc != CURLE_OK) return rc;
    return table->curl_easy_setopt(handle, CURLOPT_WRITEDATA, context);
}

CURLcode ccurl_setopt_progress(const ccurl_library *table, CURL *handle, ccurl_progress_callback callback, void *context) {
    CURLcode rc = table->curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
    if (rc == CURLE_OK) rc = table->curl_easy_setopt(handle, CURLOPT_XFERINFODATA, context);
    if (rc == CURLE_OK) rc = table->curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
    return rc;
}

CURLcode ccurl_getinfo_long(const ccurl_library *table, CURL *handle, CURLINFO info, long *value) {
    return table->curl_easy_getinfo(handle, info, value);
}

CURLcode ccurl_getinfo_off(const ccurl_library *table, CURL *handle, CURLINFO info, curl_off_t *value) {
    return table->curl_easy_getinfo(handle, info, value);
}
