import CImageCodecs
#if canImport(Glibc)
import Glibc
#endif

/// Memory for pixel buffers, mapped from the kernel directly.
///
/// glibc's malloc serves a large block with mmap only while it is above a
/// threshold that it raises each time such a block is freed (up to 32 MiB),
/// after which multi-megabyte pictures come from the heap and, freed, stay in
/// the process: a cache that turns pictures over grew to six times its budget
/// that way. Mapping pixel buffers ourselves returns every byte on release,
/// so resident memory follows the cache's budget.
public enum PixelMemory {
    /// `bytes` of zeroed, page-aligned memory, or `nil` if the kernel refuses
    /// (the caller reports out of memory). The corresponding C function is `mmap`.
    public static func allocate(_ bytes: Int) -> UnsafeMutableRawPointer? {
        guard bytes > 0 else { return nil }
        let p = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let p, p != MAP_FAILED else { return nil }
        return p
    }

    /// Returns memory from `allocate` (`munmap`).
    public static func release(_ pointer: UnsafeMutableRawPointer, _ bytes: Int) {
        munmap(pointer, bytes)
    }

    /// Returns the whole pages of `allocate`d memory past its first `bytes`
    /// of `mapped` (a picture packed in place needs less); the bytes still
    /// mapped, which `release` is then given.
    public static func shrink(_ pointer: UnsafeMutableRawPointer, from mapped: Int, to bytes: Int) -> Int {
        let page = max(Int(sysconf(Int32(_SC_PAGESIZE))), 1)
        let kept = (bytes + page - 1) / page * page
        guard kept < mapped else { return mapped }
        munmap(pointer + kept, mapped - kept)
        return kept
    }

    /// The board's memory in bytes (`Int.max` when it cannot be read).
    public static let boardBytes: Int = {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, size > 0 else { return Int.max }
        let (bytes, overflow) = pages.multipliedReportingOverflow(by: size)
        return overflow ? Int.max : bytes
    }()

    /// Asks the processor to bring `bytes` at `pointer` into its caches
    /// ahead of a copy: a hint, never a fault (`cic_prefetch`).
    public static func prefetch(_ pointer: UnsafeRawPointer, bytes: Int) {
        cic_prefetch(pointer, bytes)
    }
}

/// Rows of pictures kept at 3 bytes a pixel (`PixelFormat.rgb888`).
public enum PackedPixels {
    /// Widens `count` packed pixels at `packed` into opaque 32-bit XRGB
    /// pixels at `destination` (not overlapping). The corresponding C
    /// function is `cic_widen_rgb_row`.
    @inline(__always)
    public static func widen(_ packed: UnsafeRawPointer, into destination: UnsafeMutablePointer<UInt32>, count: Int) {
        cic_widen_rgb_row(packed.assumingMemoryBound(to: UInt8.self), destination, count)
    }

    /// Packs `count` 32-bit XRGB pixels at `source` into 3 bytes each at
    /// `destination`, which may be `source` or lie before it. The
    /// corresponding C function is `cic_pack_xrgb_row`.
    public static func pack(_ source: UnsafePointer<UInt32>, into destination: UnsafeMutableRawPointer, count: Int) {
        cic_pack_xrgb_row(source, destination.assumingMemoryBound(to: UInt8.self), count)
    }
}
