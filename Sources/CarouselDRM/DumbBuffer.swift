import CDRM
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// `DRM_FORMAT_XRGB8888` (`fourcc_code('X', 'R', '2', '4')`: a function-like
/// macro Swift does not import): 32-bit pixels, 0xXXRRGGBB in native order.
let drmFormatXRGB8888: UInt32 = 0x3432_5258

/// A dumb buffer: scanout memory the CPU writes, with its framebuffer and
/// its mapping. The one owner of all three; releases them exactly once, in
/// reverse order (`release()` or deinit), and tolerates a half-built buffer.
final class DumbBuffer {
    let device: DRMDevice
    let size: PixelSize
    private(set) var handle: UInt32 = 0
    private(set) var framebuffer: UInt32 = 0
    private(set) var pixels: UnsafeMutableRawPointer? = nil
    private(set) var stride = 0
    private(set) var byteCount = 0

    /// Creates a `size` XRGB8888 buffer, adds a framebuffer for it, maps it
    /// and clears it to black. All or nothing: a failure releases what was
    /// made.
    /// The corresponding C functions are `drmModeCreateDumbBuffer`,
    /// `drmModeAddFB2`, `drmModeMapDumbBuffer` and `mmap`.
    init(device: DRMDevice, size: PixelSize) throws(DisplayError) {
        self.device = device
        self.size = size
        do {
            try create()
        } catch {
            release()
            throw error
        }
    }

    private func create() throws(DisplayError) {
        let fd = device.fd, w = UInt32(size.width), h = UInt32(size.height)
        var pitch: UInt32 = 0, bytes: UInt64 = 0
        try device.call("drmModeCreateDumbBuffer", "\(size) XRGB8888") {
            drmModeCreateDumbBuffer(fd, w, h, 32, 0, &handle, &pitch, &bytes)
        }
        stride = Int(pitch)
        byteCount = Int(bytes)
        var handles: [UInt32] = [handle, 0, 0, 0], pitches: [UInt32] = [pitch, 0, 0, 0], offsets: [UInt32] = [0, 0, 0, 0]
        try device.call("drmModeAddFB2", "\(size) XRGB8888") {
            drmModeAddFB2(fd, w, h, drmFormatXRGB8888, &handles, &pitches, &offsets, &framebuffer, 0)
        }
        var offset: UInt64 = 0
        try device.call("drmModeMapDumbBuffer") { drmModeMapDumbBuffer(fd, handle, &offset) }
        let mapFailed = UnsafeMutableRawPointer(bitPattern: -1)
        do throws(SystemCallError) {
            pixels = try systemCall("mmap", failed: { $0 == mapFailed || $0 == nil }) {
                mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset))
            }
        } catch {
            throw DRMErrors.failed(error, what: "\(byteCount) bytes of a dumb buffer", device: device.path)
        }
        // Write-only, row after row: scanout memory is often write-combined.
        memset(pixels!, 0, byteCount)
    }

    /// Unmaps, removes the framebuffer and destroys the buffer; each only if
    /// it was made, each once. The framebuffer must not be on screen any more
    /// (removing a framebuffer being scanned out turns the CRTC off).
    /// The corresponding C functions are `munmap`, `drmModeRmFB` and `drmModeDestroyDumbBuffer`.
    func release() {
        let fd = device.fd
        if let p = pixels {
            _ = try? systemCall("munmap") { munmap(p, byteCount) }
            pixels = nil
        }
        if framebuffer != 0 {
            _ = try? device.call("drmModeRmFB") { drmModeRmFB(fd, framebuffer) }
            framebuffer = 0
        }
        if handle != 0 {
            _ = try? device.call("drmModeDestroyDumbBuffer") { drmModeDestroyDumbBuffer(fd, handle) }
            handle = 0
        }
    }

    deinit { release() }
}

/// `systemCall` for calls that return a pointer, failing on `failed`.
func systemCall<T>(_ name: String, failed: (T) -> Bool, _ body: () -> T) throws(SystemCallError) -> T {
    guard let result = try attemptSystemCall(name, failed: failed, body) else {
        throw SystemCallError(call: name, errno: EAGAIN)
    }
    return result
}
