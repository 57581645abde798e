import CFBDev
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The Linux framebuffer device (`/dev/fbN`), for SPI panels (fbtft, tinydrm's
/// fbdev emulation) and vendor kernels without KMS.
///
/// The daemon draws XRGB8888 into a buffer in ordinary memory, which
/// `present` writes into the device's memory in the device's own format
/// (XRGB8888 row copies, RGB565 converted row by row): framebuffer memory is
/// often uncached or write-combined and is never read. Frames are paced by
/// `FBIO_WAITFORVSYNC` where the driver has it, else by the daemon's timer
/// at the mode's refresh rate. The console is switched to graphics mode
/// (`KDSETMODE`) while the carousel draws, and back on `restore`; where it
/// cannot be (no access to the terminal, as under the hardened unit), the
/// framebuffer's contents at start are written back on `restore`.
public final class FBDevBackend: DisplayBackend {
    public let devicePath: String
    public let panelSize: PixelSize
    public let panelRotation = PanelOrientation.normal
    public let physicalSize: PhysicalSize?
    public let framePeriodMicroseconds: Int64
    public let pixelFormat = PixelFormat.xrgb8888
    public let presentsAsynchronously = false
    public let fileDescriptor: Int32? = nil
    public private(set) var isPoweredOn = true
    /// The device's format: 32 (XRGB8888) or 16 (RGB565) bits a pixel.
    public let bitsPerPixel: Int
    /// At 16 bits, red in the low bits (BGR565) rather than the high ones.
    public let redLow: Bool
    /// The driver's name (`fb_fix_screeninfo.id`).
    public let driverName: String
    /// Whether the driver waits for vertical blank (`FBIO_WAITFORVSYNC`).
    public private(set) var waitsForVSync: Bool

    private let device: FileDescriptor
    private let memory: UnsafeMutableRawPointer
    private let memoryLength: Int
    private let lineLength: Int
    /// The frame the daemon writes (XRGB8888, ordinary memory).
    private let shadow: UnsafeMutableRawPointer
    private let shadowStride: Int
    /// What writing frames into the device cost (µs each), for the line
    /// `restore` logs beside a memcpy of the same frame.
    private var writeMicroseconds: [Int64] = []
    /// What the framebuffer showed before the carousel, when the console
    /// could not be switched to graphics (and so will not redraw itself on
    /// exit): written back by `restore`. Read once, at start.
    private var found: UnsafeMutableRawPointer?
    /// The console's terminal and the mode it had, while switched to graphics.
    private var terminal: (fd: FileDescriptor, mode: Int32)?
    private var restored = false

    public var summary: String {
        "fbdev \(devicePath) \(panelSize.width)x\(panelSize.height) \(bitsPerPixel) bpp\(redLow ? " BGR565" : bitsPerPixel == 16 ? " RGB565" : "") (\(driverName))"
    }
    /// The device's name (fb0): what stands for a connector.
    public var connectorName: String { devicePath.split(separator: "/").last.map(String.init) ?? devicePath }
    public var modeName: String { "\(panelSize.width)x\(panelSize.height)" }

    /// The device `[display] device = auto` names.
    public static let defaultDevice = "/dev/fb0"

    /// Opens `path` (default /dev/fb0), reads its mode and maps its memory.
    /// Throws, with what to do, when the device is missing, not a
    /// framebuffer, or in a format other than XRGB8888 and RGB565; a
    /// missing one (`.noDevice`) is worth waiting for (`isWorthWaiting`).
    /// The corresponding C functions are `open`, `ioctl(FBIOGET_VSCREENINFO,
    /// FBIOGET_FSCREENINFO)` and `mmap`.
    public init(device path: String? = nil, terminal terminalPath: String? = "/dev/tty0") throws(DisplayError) {
        let path = path ?? Self.defaultDevice
        devicePath = path
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw Self.openError(path, errno: errno) }
        device = FileDescriptor(fd)
        var info = cfbdev_info()
        guard cfbdev_get_info(fd, &info) == 0 else {
            throw DisplayError("\(path) is not a framebuffer device: FBIOGET_VSCREENINFO: \(errnoDescription(errno))")
        }
        driverName = withUnsafeBytes(of: info.id) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        bitsPerPixel = Int(info.bits_per_pixel)
        let xrgb = info.bits_per_pixel == 32 && info.red_offset == 16 && info.green_offset == 8 && info.blue_offset == 0
            && info.red_length == 8 && info.green_length == 8 && info.blue_length == 8
        // 5-6-5 with red on top (most SPI panels) or at the bottom (vfb, some controllers).
        let rgb565 = info.bits_per_pixel == 16 && info.red_length == 5 && info.green_offset == 5 && info.green_length == 6
            && info.blue_length == 5 && ((info.red_offset == 11 && info.blue_offset == 0) || (info.red_offset == 0 && info.blue_offset == 11))
        guard xrgb || rgb565 else {
            throw DisplayError("\(path) (\(driverName)) is \(info.bits_per_pixel) bits a pixel with red at \(info.red_offset)/\(info.red_length), "
                               + "green \(info.green_offset)/\(info.green_length), blue \(info.blue_offset)/\(info.blue_length)",
                               hint: "carouseld writes XRGB8888 and RGB565 (or BGR565); set one with fbset -depth 32 or -depth 16")
        }
        redLow = rgb565 && info.red_offset == 0
        guard info.xres > 0, info.yres > 0, info.line_length >= info.xres * info.bits_per_pixel / 8 else {
            throw DisplayError("\(path) reports a mode of \(info.xres)x\(info.yres) with \(info.line_length) bytes a line")
        }
        panelSize = PixelSize(width: Int(info.xres), height: Int(info.yres))
        lineLength = Int(info.line_length)
        memoryLength = max(Int(info.smem_len), lineLength * Int(info.yres))
        guard let mapped = mmap(nil, memoryLength, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw DisplayError("cannot map \(path)'s memory (\(memoryLength) bytes): \(errnoDescription(errno))")
        }
        memory = mapped
        physicalSize = info.width_mm > 0 && info.height_mm > 0
            ? PhysicalSize(widthMillimetres: Int(info.width_mm), heightMillimetres: Int(info.height_mm)) : nil
        framePeriodMicroseconds = Self.framePeriod(info)
        shadowStride = panelSize.width * 4
        shadow = UnsafeMutableRawPointer.allocate(byteCount: shadowStride * panelSize.height, alignment: 64)
        shadow.initializeMemory(as: UInt8.self, repeating: 0, count: shadowStride * panelSize.height)
        waitsForVSync = true
        if let terminalPath { switchToGraphics(terminalPath) }
        if terminal == nil {
            let bytes = lineLength * panelSize.height
            found = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
            found?.copyMemory(from: memory, byteCount: bytes)
        }
    }

    /// Why `path` did not open. No node (ENOENT), or a node with no driver
    /// behind it (ENXIO, ENODEV: the framebuffer's driver is not loaded, or
    /// was unloaded) is `.noDevice`: an SPI panel's fbtft driver often loads
    /// after carouseld at boot.
    static func openError(_ path: String, errno e: Int32) -> DisplayError {
        let message = "cannot open \(path): \(errnoDescription(e))"
        switch e {
        case ENOENT, ENXIO, ENODEV:
            return DisplayError(message, hint: "no framebuffer there: is the panel's driver (fbtft, vfb, the DRM driver's fbdev emulation) loaded? see carouseld probe",
                                reason: .noDevice)
        case EACCES, EPERM:
            return DisplayError(message, hint: "run carouseld as root or in the video group", reason: .permission)
        default:
            return DisplayError(message)
        }
    }

    // MARK: waiting for a framebuffer

    /// Whether waiting can cure `error` from `init`: no framebuffer device
    /// (yet). A device of the wrong kind or format, or no rights to it, stays
    /// as it is: the daemon exits rather than wait for nothing.
    public static func isWorthWaiting(_ error: DisplayError) -> Bool {
        switch error.reason {
        case .noDevice: return true
        case .notConnected, .permission, .busy, .gone, .windowRefused, .other: return false
        }
    }

    /// Blocks until `path` (default /dev/fb0) opens, or fails to open for a
    /// reason waiting will not cure (`init` then says which), checking every
    /// `interval` seconds: for startup, before the event loop runs. Returns
    /// `false` once `shouldStop` returns `true` (checked each round, e.g. a
    /// pending SIGTERM). The framebuffer's driver registers its node when
    /// the device is ready, so polling the node is all there is to watch.
    public static func waitForDevice(_ path: String? = nil, interval: Double = 1,
                                     shouldStop: () -> Bool = { false }) -> Bool {
        let path = path ?? defaultDevice
        while !shouldStop() {
            let fd = open(path, O_RDWR | O_CLOEXEC)
            if fd >= 0 {
                close(fd)
                return true
            }
            guard isWorthWaiting(openError(path, errno: errno)) else { return true }
            // A signal restarts the pause (the helper retries EINTR): harmless here.
            _ = try? systemCall("poll") { poll(nil, 0, Int32(clamping: Int(interval * 1000))) }
        }
        return false
    }

    deinit {
        restore()
        shadow.deallocate()
        found?.deallocate()
    }

    /// The mode's refresh period from its pixel clock and blanking; 60 Hz
    /// where the driver does not say (most SPI panels).
    static func framePeriod(_ info: cfbdev_info) -> Int64 {
        let htotal = UInt64(info.xres) + UInt64(info.left_margin) + UInt64(info.right_margin) + UInt64(info.hsync_len)
        let vtotal = UInt64(info.yres) + UInt64(info.upper_margin) + UInt64(info.lower_margin) + UInt64(info.vsync_len)
        guard info.pixclock > 0, htotal > 0, vtotal > 0 else { return 16_667 }
        // pixclock is picoseconds a pixel.
        let period = UInt64(info.pixclock) * htotal * vtotal / 1_000_000
        return (5_000...100_000).contains(period) ? Int64(period) : 16_667
    }

    /// The console stops drawing on the framebuffer while the carousel
    /// does; without a terminal (none, or no permission) it may draw over
    /// the pictures, which one warning says.
    private func switchToGraphics(_ path: String) {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else {
            log(.warning, "display: cannot open \(path) to switch the console to graphics: \(errnoDescription(errno)); its cursor may show")
            return
        }
        var previous: Int32 = 0
        guard cfbdev_set_graphics(fd, 1, &previous) == 0 else {
            log(.warning, "display: \(path): KDSETMODE: \(errnoDescription(errno)); the console's cursor may show")
            close(fd)
            return
        }
        terminal = (FileDescriptor(fd), previous)
    }

    public func acquire() -> ScanoutBuffer? {
        guard isPoweredOn, !restored else { return nil }
        return ScanoutBuffer(pixels: shadow, stride: shadowStride, size: panelSize, index: 0)
    }

    /// Writes the frame into the device's memory, after the vertical blank
    /// where the driver waits for one.
    public func present(_ buffer: ScanoutBuffer, window: PixelPoint) throws(DisplayError) {
        guard !restored else { throw DisplayError("\(devicePath) was restored", reason: .gone) }
        guard window == .zero else { throw DisplayError("fbdev shows no windows of a buffer", reason: .windowRefused) }
        if waitsForVSync, cfbdev_wait_vsync(device.raw) != 0 {
            let e = errno
            if e == ENOTTY || e == EINVAL || e == EOPNOTSUPP {
                waitsForVSync = false
                log(.info, "display: \(devicePath) has no FBIO_WAITFORVSYNC: frames are paced by the timer")
            } else if e == ENODEV {
                throw DisplayError("\(devicePath): FBIO_WAITFORVSYNC: \(errnoDescription(e))", reason: .gone)
            }
        }
        let start = MonotonicClock.now()
        write(from: buffer.pixels, stride: buffer.stride)
        if writeMicroseconds.count < 10_000 { writeMicroseconds.append(MonotonicClock.now() - start) }
    }

    /// One line: the frames written, the median cost of writing one into the
    /// device, and the ratio to a memcpy of the frame in ordinary memory
    /// measured now (figures for the benchmark notes; nothing depends on them).
    private func logWriteCost() {
        guard !writeMicroseconds.isEmpty else { return }
        let bytes = shadowStride * panelSize.height
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        defer { scratch.deallocate() }
        var copies: [Int64] = []
        for _ in 0..<9 {
            let start = MonotonicClock.now()
            memcpy(scratch, shadow, bytes)
            copies.append(MonotonicClock.now() - start)
        }
        let write = writeMicroseconds.sorted()[writeMicroseconds.count / 2]
        let copy = max(copies.sorted()[copies.count / 2], 1)
        let ratio = (Double(write) / Double(copy) * 100).rounded() / 100
        log(.info, "fbdev: \(writeMicroseconds.count) frames written at \(bitsPerPixel) bpp, median \(write) us each; "
            + "a memcpy of the frame \(copy) us (ratio \(ratio))")
    }

    /// The frame in the device's format, row by row; never a read of its memory.
    func write(from source: UnsafeMutableRawPointer, stride: Int) {
        let width = panelSize.width
        if bitsPerPixel == 32 {
            for y in 0..<panelSize.height {
                memcpy(memory + y * lineLength, source + y * stride, width * 4)
            }
        } else {
            for y in 0..<panelSize.height {
                cfbdev_xrgb_to_565((source + y * stride).assumingMemoryBound(to: UInt32.self),
                                   (memory + y * lineLength).assumingMemoryBound(to: UInt16.self), width, redLow ? 1 : 0)
            }
        }
    }

    public func reserveWindowRoom(_ room: Int, along axis: ScanoutAxis) -> Int { 0 }
    public func dispatch() throws(DisplayError) -> Bool { false }
    public func reprobe() throws(DisplayError) -> Bool { false }

    /// The framebuffer's mode is the driver's (or fbset's): only the one it has.
    public func changeMode(to request: DisplayModeRequest?) throws(DisplayError) -> Bool {
        guard let request, request.width != panelSize.width || request.height != panelSize.height else { return false }
        throw DisplayError("\(devicePath) shows \(modeName); fbdev cannot switch modes here",
                           hint: "set the mode with the driver's options or fbset, and display.mode = auto")
    }

    /// `FBIOBLANK`: powered down or on; where the driver cannot, nothing is
    /// drawn while off and the panel shows the last frame.
    public func setPower(on: Bool) throws(DisplayError) {
        guard on != isPoweredOn else { return }
        if cfbdev_blank(device.raw, on ? 0 : 1) != 0 {
            let e = errno
            guard e == EINVAL || e == ENOTTY || e == EOPNOTSUPP else {
                throw DisplayError("\(devicePath): FBIOBLANK: \(errnoDescription(e))")
            }
            if !on { memset(memory, 0, memoryLength) }  // no blanking: black rather than a still picture
        }
        isPoweredOn = on
    }

    /// The console back in text mode (it redraws itself), the memory unmapped.
    public func restore() {
        guard !restored else { return }
        restored = true
        logWriteCost()
        if !isPoweredOn { _ = cfbdev_blank(device.raw, 0) }
        if let terminal {
            // The console redraws itself in text mode.
            _ = cfbdev_set_kd_mode(terminal.fd.raw, terminal.mode)
            terminal.fd.close()
            self.terminal = nil
        } else if let found {
            // It would not: what it showed goes back as it was found.
            memory.copyMemory(from: found, byteCount: lineLength * panelSize.height)
        }
        munmap(memory, memoryLength)
        device.close()
    }

    /// The framebuffers the kernel has (`/sys/class/graphics/fb*`), for
    /// `carouseld probe`: one line each.
    public static func probe(root: String = "/sys/class/graphics") -> [String] {
        guard let dir = opendir(root) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name.hasPrefix("fb"), Int(name.dropFirst(2)) != nil { names.append(name) }
        }
        return names.sorted { Int($0.dropFirst(2))! < Int($1.dropFirst(2))! }.map { name in
            func read(_ file: String) -> String {
                let fd = open("\(root)/\(name)/\(file)", O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { return "?" }
                defer { close(fd) }
                var bytes = [UInt8](repeating: 0, count: 64)
                let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 64) }
                return n > 0 ? String(decoding: bytes[0..<n], as: UTF8.self).trimmingNewlines : "?"
            }
            return "/dev/\(name): \(read("name")), \(read("virtual_size").replacingComma(with: "x")), \(read("bits_per_pixel")) bpp"
        }
    }
}

private extension String {
    var trimmingNewlines: String {
        var s = Substring(self)
        while s.last == "\n" || s.last == " " { s = s.dropLast() }
        return String(s)
    }

    func replacingComma(with replacement: String) -> String {
        split(separator: ",", omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
