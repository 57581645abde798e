// libwebp decoder (Debian: libwebp-dev, pkg-config: libwebp), and libwebpdemux
// (same package, pkg-config: libwebpdemux) for the frames of an animated WebP.
#include <webp/decode.h>
#include <webp/demux.h>
