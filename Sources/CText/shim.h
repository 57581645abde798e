// Text for captions and the clock: fontconfig finds fonts, FreeType
// rasterises glyphs, HarfBuzz shapes (Debian: libfontconfig-dev,
// libfreetype-dev, libharfbuzz-dev; pkg-config harfbuzz adds
// -I/usr/include/harfbuzz and -I/usr/include/freetype2).
#include <fontconfig/fontconfig.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include <hb.h>
#include <hb-ft.h>
