// pixman (Debian: libpixman-1-dev, pkg-config: pixman-1, which adds -I/usr/include/pixman-1).
#include <pixman.h>
