// Headers only; SwiftPM wants one source file in a C target.
#include "CPlatform.h"
