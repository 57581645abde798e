// libwebp decoder (Debian: libwebp-dev, pkg-config: libwebp), its one-call
// encoder (the web page's thumbnails), and libwebpdemux
// (same package, pkg-config: libwebpdemux) for the frames of an animated WebP.
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
