// libwebp decoder (Debian: libwebp-dev, pkg-config: libwebp).
#include <webp/decode.h>
