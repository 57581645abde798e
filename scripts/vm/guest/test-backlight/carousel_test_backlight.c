// SPDX-License-Identifier: GPL-2.0
/*
 * A backlight for the test machine, which has none: QEMU emulates no panel
 * with a backlight controller. It registers a device of the kernel's own
 * backlight class (drivers/video/backlight), so /sys/class/backlight/NAME,
 * its brightness, bl_power, max_brightness and actual_brightness files, their
 * permission checks, range checks and uevents are the kernel's, exactly as
 * a board's panel driver gets them. What a real driver would send to the
 * hardware, this one logs ("carousel_test_backlight: brightness B power P")
 * and reports back through actual_brightness (0 while powered down), which is
 * what the tests read.
 */
#include <linux/backlight.h>
#include <linux/fb.h>
#include <linux/module.h>

static int max_brightness = 1023;
module_param(max_brightness, int, 0444);
MODULE_PARM_DESC(max_brightness, "the panel's max_brightness (default 1023)");

static int brightness = 700;
module_param(brightness, int, 0444);
MODULE_PARM_DESC(brightness, "the level it starts at, as firmware left it (default 700)");

static struct backlight_device *device;
/* What the "hardware" shows: the level, or 0 while powered down. */
static int lit;

static int test_backlight_update_status(struct backlight_device *bd)
{
	int level = bd->props.brightness;
	int power = bd->props.power;

	lit = power == FB_BLANK_UNBLANK ? level : 0;
	pr_info("carousel_test_backlight: brightness %d power %d\n", level, power);
	return 0;
}

static int test_backlight_get_brightness(struct backlight_device *bd)
{
	return lit;
}

static const struct backlight_ops test_backlight_ops = {
	.update_status = test_backlight_update_status,
	.get_brightness = test_backlight_get_brightness,
};

static int __init test_backlight_init(void)
{
	struct backlight_properties props = {
		.type = BACKLIGHT_RAW,
		.max_brightness = max_brightness,
		.brightness = brightness,
		.power = FB_BLANK_UNBLANK,
	};

	if (max_brightness < 1 || brightness < 0 || brightness > max_brightness)
		return -EINVAL;
	device = backlight_device_register("carousel-test", NULL, NULL, &test_backlight_ops, &props);
	if (IS_ERR(device))
		return PTR_ERR(device);
	lit = brightness;
	return 0;
}

static void __exit test_backlight_exit(void)
{
	backlight_device_unregister(device);
}

module_init(test_backlight_init);
module_exit(test_backlight_exit);
MODULE_DESCRIPTION("A backlight class device for carouseld's test machine");
MODULE_LICENSE("GPL");
