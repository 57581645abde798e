// libinput's header (Debian: libinput-dev, in /usr/include): touch, pointer
// and keyboard events from evdev devices found through udev. The header
// only: the library is opened with dlopen and called through CInputLoader's
// table.
#include <libinput.h>
