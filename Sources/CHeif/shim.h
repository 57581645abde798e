// libheif: HEIF (HEVC, Apple's .heic) and AVIF (AV1) images (Debian: libheif-dev, pkg-config: libheif).
#include <libheif/heif.h>
