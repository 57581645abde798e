#include "CFBDev.h"

#include <errno.h>
#include <linux/fb.h>
#include <linux/kd.h>
#include <string.h>
#include <sys/ioctl.h>

int cfbdev_get_info(int fd, struct cfbdev_info *info) {
    struct fb_var_screeninfo var;
    struct fb_fix_screeninfo fix;
    if (ioctl(fd, FBIOGET_VSCREENINFO, &var) != 0) return -1;
    if (ioctl(fd, FBIOGET_FSCREENINFO, &fix) != 0) return -1;
    memset(info, 0, sizeof *info);
    memcpy(info->id, fix.id, sizeof fix.id);
    info->id[16] = 0;
    info->xres = var.xres;
    info->yres = var.yres;
    info->xres_virtual = var.xres_virtual;
    info->yres_virtual = var.yres_virtual;
    info->bits_per_pixel = var.bits_per_pixel;
    info->red_offset = var.red.offset;
    info->red_length = var.red.length;
    info->green_offset = var.green.offset;
    info->green_length = var.green.length;
    info->blue_offset = var.blue.offset;
    info->blue_length = var.blue.length;
    info->line_length = fix.line_length;
    info->smem_len = fix.smem_len;
    info->pixclock = var.pixclock;
    info->left_margin = var.left_margin;
    info->right_margin = var.right_margin;
    info->upper_margin = var.upper_margin;
    info->lower_margin = var.lower_margin;
    info->hsync_len = var.hsync_len;
    info->vsync_len = var.vsync_len;
    info->width_mm = var.width == (uint32_t)-1 ? 0 : var.width;
    info->height_mm = var.height == (uint32_t)-1 ? 0 : var.height;
    return 0;
}

int cfbdev_wait_vsync(int fd) {
    __u32 crtc = 0;
    return ioctl(fd, FBIO_WAITFORVSYNC, &crtc);
}

int cfbdev_blank(int fd, int off) {
    return ioctl(fd, FBIOBLANK, off ? FB_BLANK_POWERDOWN : FB_BLANK_UNBLANK);
}

int cfbdev_set_graphics(int tty, int graphics, int *previous) {
    int mode = KD_TEXT;
    if (ioctl(tty, KDGETMODE, &mode) != 0) return -1;
    if (previous) *previous = mode;
    return ioctl(tty, KDSETMODE, graphics ? KD_GRAPHICS : KD_TEXT);
}

int cfbdev_set_kd_mode(int tty, int mode) {
    return ioctl(tty, KDSETMODE, mode);
}

void cfbdev_xrgb_to_565(const uint32_t *source, uint16_t *destination, size_t count, int red_low) {
    if (red_low) {
        for (size_t i = 0; i < count; i++) {
            uint32_t p = source[i];
            destination[i] = (uint16_t)(((p >> 19) & 0x001f) | ((p >> 5) & 0x07e0) | ((p << 8) & 0xf800));
        }
        return;
    }
    for (size_t i = 0; i < count; i++) {
        uint32_t p = source[i];
        destination[i] = (uint16_t)(((p >> 8) & 0xf800) | ((p >> 5) & 0x07e0) | ((p >> 3) & 0x001f));
    }
}
