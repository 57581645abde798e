#ifndef CFBDEV_H
#define CFBDEV_H

#include <stddef.h>
#include <stdint.h>

/* What the Linux framebuffer device says about itself (FBIOGET_VSCREENINFO
 * and FBIOGET_FSCREENINFO, linux/fb.h), in plain fields Swift can read. */
struct cfbdev_info {
    char id[17];
    uint32_t xres, yres, xres_virtual, yres_virtual;
    uint32_t bits_per_pixel;
    uint32_t red_offset, red_length, green_offset, green_length, blue_offset, blue_length;
    uint32_t line_length;
    uint32_t smem_len;
    /* Picoseconds a pixel, and the blanking, for the refresh rate (0: unknown). */
    uint32_t pixclock, left_margin, right_margin, upper_margin, lower_margin, hsync_len, vsync_len;
    /* The panel's size in millimetres (0: unknown). */
    uint32_t width_mm, height_mm;
};

/* 0 or -1 with errno set. */
int cfbdev_get_info(int fd, struct cfbdev_info *info);

/* FBIO_WAITFORVSYNC: waits for the next vertical blank. -1 with errno
 * ENOTTY (or EINVAL) where the driver has no such wait. */
int cfbdev_wait_vsync(int fd);

/* FBIOBLANK: FB_BLANK_UNBLANK (on) or FB_BLANK_POWERDOWN (off). */
int cfbdev_blank(int fd, int off);

/* KDGETMODE / KDSETMODE on a virtual terminal: graphics (the console stops
 * drawing on the framebuffer) or text. `previous` gets the mode it had. */
int cfbdev_set_graphics(int tty, int graphics, int *previous);
int cfbdev_set_kd_mode(int tty, int mode);

/* One row of XRGB8888 pixels as RGB565 (5 bits red at bit 11, 6 green, 5
 * blue at bit 0: the top bits of each channel), or BGR565 (red at bit 0,
 * blue at bit 11) when `red_low` is set. */
void cfbdev_xrgb_to_565(const uint32_t *source, uint16_t *destination, size_t count, int red_low);

#endif
