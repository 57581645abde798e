// PNG encoding through libpng 1.6, for screenshots and `carouseld render`.
// As for reading, libpng's errors longjmp: they land in this file only.
#include "CImageCodecs.h"
#include "rows.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <png.h>

struct writer {
    cic_error *err;
};

static void on_write_error(png_structp png, png_const_charp message) {
    struct writer *w = png_get_error_ptr(png);
    if (w->err != NULL) {
        int code = errno;
        w->err->kind = strstr(message, "memory") ? CIC_NO_MEMORY : CIC_CORRUPT;
        if (strcmp(message, "Write Error") == 0 && code != 0) {
            // libpng's own fwrite failed: say why (a full disk, say).
            snprintf(w->err->message, sizeof w->err->message, "write error: %s", strerror(code));
        } else {
            snprintf(w->err->message, sizeof w->err->message, "%s", message);
        }
    }
    png_longjmp(png, 1);
}

static void on_write_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

// Encodes the pixels into `file` (closed by the caller). 0 or -1 with `err` set.
static int encode(FILE *file, const char *name, const uint8_t *pixels, uint32_t width, uint32_t height,
                  size_t stride, cic_error *err) {
    errno = 0;  // so that a write error names its own cause, not an older one
    struct writer w = {err};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w, on_write_error, on_write_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    // Volatile: modified between setjmp and a possible longjmp.
    uint8_t *volatile row = NULL;
    if (png == NULL || info == NULL) {
        err->kind = CIC_NO_MEMORY;
        snprintf(err->message, sizeof err->message, "out of memory creating the PNG writer");
        if (png != NULL) png_destroy_write_struct(&png, NULL);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        return -1;
    }
    row = malloc((size_t)width * 3);
    if (row == NULL) png_error(png, "out of memory for a row");
    png_init_io(png, file);
    png_set_compression_level(png, 1);
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (uint32_t y = 0; y < height; y++) {
        const uint32_t *src = (const uint32_t *)(pixels + (size_t)y * stride);
        cic_xrgb_row_to_rgb(src, row, width);
        png_write_row(png, row);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(row);
    // libpng's write callback ignores short writes: a full disk shows here.
    if (fflush(file) != 0 || ferror(file)) {
        err->kind = CIC_CORRUPT;
        snprintf(err->message, sizeof err->message, "cannot write %s: %s", name, strerror(errno));
        return -1;
    }
    return 0;
}

int cic_png_write_file(const char *path, const uint8_t *pixels, uint32_t width, uint32_t height,
                       size_t stride, cic_error *err) {
    // The file is written under a fresh name and renamed into place. The
    // name is unpredictable and created with O_CREAT|O_EXCL (mkstemp), so a
    // symlink planted at a guessable "PATH.tmp" cannot redirect the write;
    // rename() replaces a link at PATH itself rather than writing through it.
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) {
        err->kind = CIC_LIMIT;
        snprintf(err->message, sizeof err->message, "path too long");
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        err->kind = CIC_CORRUPT;
        snprintf(err->message, sizeof err->message, "cannot create a file next to %s: %s", path, strerror(errno));
        return -1;
    }
    // mkstemp creates 0600; a screenshot is for others to read (reading the
    // umask would mean setting it, which is process-wide and racy).
    fchmod(fd, 0644);
    FILE *file = fdopen(fd, "wb");
    if (file == NULL) {
        err->kind = CIC_CORRUPT;
        snprintf(err->message, sizeof err->message, "cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    int rc = encode(file, tmp, pixels, width, height, stride, err);
    if (fclose(file) != 0 && rc == 0) {
        err->kind = CIC_CORRUPT;
        snprintf(err->message, sizeof err->message, "cannot write %s: %s", tmp, strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        err->kind = CIC_CORRUPT;
        snprintf(err->message, sizeof err->message, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int cic_png_write_descriptor(int fd, const uint8_t *pixels, uint32_t width, uint32_t height,
                             size_t stride, cic_error *err) {
    // The caller keeps `fd`; the stream gets its own copy to close.
    int own = dup(fd);
    FILE *file = own < 0 ? NULL : fdopen(own, "wb");
    if (file == NULL) {
        err->kind = CIC_CORRUPT;
        snprintf(err->message, sizeof err->message, "cannot write the file passed: %s", strerror(errno));
        if (own >= 0) close(own);
        return -1;
    }
    int rc = encode(file, "the file passed", pixels, width, height, stride, err);
    if (fclose(file) != 0 && rc == 0) {
        err->kind = CIC_CORRUPT;
        snprintf(err->message, sizeof err->message, "cannot write the file passed: %s", strerror(errno));
        rc = -1;
    }
    return rc;
}
