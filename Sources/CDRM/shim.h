// libdrm (Debian: libdrm-dev, pkg-config: libdrm, which adds -I/usr/include/libdrm).
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>
