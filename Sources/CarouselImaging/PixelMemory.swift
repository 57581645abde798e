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

    /// Asks the processor to bring `bytes` at `pointer` into its caches
    /// ahead of a copy: a hint, never a fault (`cic_prefetch`).
    public static func prefetch(_ pointer: UnsafeRawPointer, bytes: Int) {
        cic_prefetch(pointer, bytes)
    }
}
