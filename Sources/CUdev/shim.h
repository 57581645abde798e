// libudev (Debian: libudev-dev, pkg-config: libudev): device enumeration and
// hotplug monitoring; libinput's udev backend takes a `struct udev *`.
#include <libudev.h>
