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

/// A dumb buffer: scanout memory the CPU writes, with its framebuffers and
/// its mapping. The one owner of all of them; releases them exactly once, in
/// reverse order (`release()` or deinit), and tolerates a half-built buffer.
///
/// The buffer is `extent` pixels, the panel's `size` or longer along one
/// axis; `framebuffer` shows its top-left `size` window. Other windows get
/// framebuffers of their own on the same memory (`framebuffer(at:)`: the
/// buffer's pitch and `offsets[0]` pointing at the window's first pixel),
/// which is how a slide moves the picture without copying it.
final class DumbBuffer {
    let device: DRMDevice
    /// The window shown: the mode's size.
    let size: PixelSize
    /// The whole buffer.
    let extent: PixelSize
    private(set) var handle: UInt32 = 0
    private(set) var framebuffer: UInt32 = 0
    private(set) var pixels: UnsafeMutableRawPointer? = nil
    private(set) var stride = 0
    private(set) var byteCount = 0
    /// Framebuffers of windows other than the top-left one, least recently
    /// used first.
    private var windows: [(window: PixelPoint, framebuffer: UInt32)] = []

    /// Creates an `extent` XRGB8888 buffer (default: `size`), adds a `size`
    /// framebuffer for its top-left window and maps it. `cleared`: written
    /// black, for a buffer a modeset shows before anything is drawn into it
    /// (the kernel need not clear video memory); the others are shown only
    /// after a frame was written into what they show, and clearing one cost
    /// a write of all its memory (two buffers with room for a slide are four
    /// screens: 33 MB at 1080p, the moment the first picture was up).
    /// All or nothing: a failure releases what was made.
    /// The corresponding C functions are `drmModeCreateDumbBuffer`,
    /// `drmModeAddFB2`, `drmModeMapDumbBuffer` and `mmap`.
    init(device: DRMDevice, size: PixelSize, extent: PixelSize? = nil, cleared: Bool = false) throws(DisplayError) {
        self.device = device
        self.size = size
        self.extent = extent ?? size
        do {
            try create(cleared: cleared)
        } catch {
            release()
            throw error
        }
    }

    private func create(cleared: Bool) throws(DisplayError) {
        let fd = device.fd
        var pitch: UInt32 = 0, bytes: UInt64 = 0
        try device.call("drmModeCreateDumbBuffer", "\(extent) XRGB8888") {
            drmModeCreateDumbBuffer(fd, UInt32(extent.width), UInt32(extent.height), 32, 0, &handle, &pitch, &bytes)
        }
        stride = Int(pitch)
        byteCount = Int(bytes)
        framebuffer = try addFramebuffer(offset: 0, what: "\(size) XRGB8888")
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
        // Write-only: scanout memory is often write-combined.
        if cleared { memset(pixels!, 0, byteCount) }
    }

    /// A `size` framebuffer whose first pixel is `offset` bytes into the buffer.
    /// The corresponding C function is `drmModeAddFB2`.
    private func addFramebuffer(offset: Int, what: @autoclosure () -> String) throws(DisplayError) -> UInt32 {
        let fd = device.fd, w = UInt32(size.width), h = UInt32(size.height)
        var handles: [UInt32] = [handle, 0, 0, 0], pitches: [UInt32] = [UInt32(stride), 0, 0, 0]
        var offsets: [UInt32] = [UInt32(offset), 0, 0, 0], id: UInt32 = 0
        try device.call("drmModeAddFB2", what()) {
            drmModeAddFB2(fd, w, h, drmFormatXRGB8888, &handles, &pitches, &offsets, &id, 0)
        }
        return id
    }

    /// The framebuffer showing the `size` window whose top-left corner is
    /// `window`: `framebuffer` for (0, 0), else one made on first use and
    /// kept until `evictWindows` removes it. Throws what the kernel says
    /// (EINVAL: the driver takes no offset there, or the window does not lie
    /// in the buffer).
    /// The corresponding C function is `drmModeAddFB2`.
    func framebuffer(at window: PixelPoint) throws(DisplayError) -> UInt32 {
        if window == .zero { return framebuffer }
        if let i = windows.firstIndex(where: { $0.window == window }) {
            let entry = windows.remove(at: i)
            windows.append(entry)
            return entry.framebuffer
        }
        guard window.x >= 0, window.y >= 0 else {
            throw DisplayError("a window at \(window) starts outside the \(extent) buffer on \(device.path)",
                               hint: "a bug in the renderer")
        }
        // Unchecked against the extent on purpose: the kernel checks that
        // the framebuffer lies in the buffer (drm_gem_fb_init_with_funcs).
        let offset = window.y * stride + window.x * 4
        guard offset <= Int(UInt32.max) else {
            throw DisplayError("a window at \(window) is beyond what a framebuffer offset can reach on \(device.path)",
                               hint: "a bug in the renderer")
        }
        let id = try addFramebuffer(offset: offset, what: "\(size) window at \(window) of a \(extent) XRGB8888 buffer")
        windows.append((window, id))
        return id
    }

    /// The window framebuffer `id` shows, if it is one of this buffer's.
    func window(of id: UInt32) -> PixelPoint? {
        guard id != 0 else { return nil }
        if id == framebuffer { return .zero }
        return windows.first { $0.framebuffer == id }?.window
    }

    /// Whether `id` is one of this buffer's framebuffers.
    func owns(_ id: UInt32) -> Bool {
        id != 0 && (id == framebuffer || windows.contains { $0.framebuffer == id })
    }

    /// Removes window framebuffers, least recently used first, until at most
    /// `limit` are left, never one in `keep` (on screen or with a flip in
    /// flight: removing a framebuffer being scanned out turns the CRTC off).
    /// The corresponding C function is `drmModeRmFB`.
    func evictWindows(keeping keep: [UInt32], limit: Int) {
        var excess = windows.count - limit
        var i = 0
        while excess > 0, i < windows.count {
            let id = windows[i].framebuffer
            if keep.contains(id) {
                i += 1
                continue
            }
            _ = try? device.call("drmModeRmFB") { drmModeRmFB(device.fd, id) }
            windows.remove(at: i)
            excess -= 1
        }
    }

    /// Window framebuffers made so far and still kept (for tests and figures).
    var windowFramebufferCount: Int { windows.count }

    /// Unmaps, removes the framebuffers and destroys the buffer; each only if
    /// it was made, each once. No framebuffer of it may be on screen any more
    /// (removing a framebuffer being scanned out turns the CRTC off).
    /// The corresponding C functions are `munmap`, `drmModeRmFB` and `drmModeDestroyDumbBuffer`.
    func release() {
        let fd = device.fd
        if let p = pixels {
            _ = try? systemCall("munmap") { munmap(p, byteCount) }
            pixels = nil
        }
        for w in windows { _ = try? device.call("drmModeRmFB") { drmModeRmFB(fd, w.framebuffer) } }
        windows = []
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
