#ifndef CFUZZSUPPORT_H
#define CFUZZSUPPORT_H

#include <stddef.h>
#include <stdint.h>

/// The allocations a piece of code makes, seen through AddressSanitizer's
/// allocation hooks: only in a build with AddressSanitizer (scripts/fuzz.sh),
/// where the HEIF and AVIF fuzz targets hold decodes to the helper's cap.
/// Elsewhere `cfuzz_meter_start` returns -1 and nothing is measured.
///
/// Starts measuring (installing the hooks on the first call). 0, or -1
/// where no AddressSanitizer is linked in.
int cfuzz_meter_start(void);

/// The largest single allocation any thread made since `cfuzz_meter_start`
/// (allocations the allocator refused are not seen).
int64_t cfuzz_meter_largest(void);

#endif
