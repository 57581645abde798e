// libjpeg-turbo (Debian: libjpeg62-turbo-dev, pkg-config: libjpeg).
// jpeglib.h uses size_t and FILE without including their headers itself.
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
