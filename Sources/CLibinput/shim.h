// libinput (Debian: libinput-dev, pkg-config: libinput): touch, pointer and
// keyboard events from evdev devices found through udev.
#include <libinput.h>
