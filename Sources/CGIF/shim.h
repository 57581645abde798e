// giflib 5 (Debian: libgif-dev; it ships no pkg-config file, the header is in /usr/include).
#include <gif_lib.h>
