// libpng 1.6 (Debian: libpng-dev, pkg-config: libpng16).
#include <png.h>
