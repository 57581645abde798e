#if canImport(Glibc)
import Glibc
#endif

/// A panel's backlight as the kernel's backlight class shows it: a folder
/// under /sys/class/backlight with `brightness` (0 to `max_brightness`),
/// `bl_power` (0 lit, 4 powered down: the fbdev blanking levels) and `type`
/// (`firmware`, `platform` or `raw`).
public struct Backlight: Sendable, Equatable {
    public let name: String
    /// The device's folder (`/sys/class/backlight/NAME`).
    public let directory: String
    public let type: String
    public let maxBrightness: Int

    public init(name: String, directory: String, type: String, maxBrightness: Int) {
        self.name = name
        self.directory = directory
        self.type = type
        self.maxBrightness = maxBrightness
    }

    /// `bl_power`'s value for a powered-down backlight (FB_BLANK_POWERDOWN).
    static let poweredDown = 4

    /// The device `name` under `root`, if it is one: a readable, positive
    /// `max_brightness`.
    public static func open(_ name: String, root: String) -> Result<Backlight, BacklightError> {
        let directory = root + "/" + name
        let max: Int
        do throws(BacklightError) {
            max = try readNumber(directory + "/max_brightness")
        } catch {
            return .failure(error)
        }
        guard max > 0 else { return .failure(BacklightError("\(directory)/max_brightness is \(max): not a usable backlight")) }
        let type = (try? readText(directory + "/type")) ?? "raw"
        return .success(Backlight(name: name, directory: directory, type: type, maxBrightness: max))
    }

    /// Every usable backlight under `root`, and a line for each folder that is
    /// not one (for the log). No `root` folder: none, and nothing to say.
    public static func all(root: String) -> (found: [Backlight], problems: [String]) {
        guard let dir = opendir(root) else { return ([], []) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        var found: [Backlight] = []
        var problems: [String] = []
        for name in names.sorted() {
            switch open(name, root: root) {
            case .success(let device): found.append(device)
            case .failure(let error): problems.append(error.message)
            }
        }
        return (found, problems)
    }

    /// The backlight a desktop would drive: firmware interfaces (ACPI) first,
    /// then platform drivers (the panel's own), then raw ones (a PWM or a
    /// GPU register), by name within a kind. systemd-backlight, GNOME and
    /// KDE rank them the same way.
    public static func preferred(_ devices: [Backlight]) -> Backlight? {
        func rank(_ type: String) -> Int {
            switch type {
            case "firmware": 0
            case "platform": 1
            default: 2
            }
        }
        return devices.min { (rank($0.type), $0.name) < (rank($1.type), $1.name) }
    }

    /// The raw level for `percent` of the range; at least 1 (a lit panel
    /// at 0 is dark on many boards: off is `bl_power`'s business).
    public func level(percent: Int) -> Int {
        let p = min(max(percent, 1), 100)
        return max(1, (p * maxBrightness + 50) / 100)
    }

    /// `level` in percent of the range, rounded.
    public func percent(level: Int) -> Int {
        min(100, max(0, (level * 100 + maxBrightness / 2) / maxBrightness))
    }

    /// The level the kernel holds (`brightness`: what was asked for, not
    /// `actual_brightness`, which some drivers report in other units).
    public func brightness() throws(BacklightError) -> Int {
        try Self.readNumber(directory + "/brightness")
    }

    public func setBrightness(_ level: Int) throws(BacklightError) {
        try Self.write("\(min(max(level, 0), maxBrightness))\n", to: directory + "/brightness")
    }

    /// `bl_power`: lit or powered down.
    public func setPower(on: Bool) throws(BacklightError) {
        try Self.write("\(on ? 0 : Self.poweredDown)\n", to: directory + "/bl_power")
    }

    /// Whether `bl_power` says powered down (a daemon that stopped while the
    /// display was off leaves it so).
    public func isPoweredDown() throws(BacklightError) -> Bool {
        try Self.readNumber(directory + "/bl_power") != 0
    }

    // MARK: - sysfs

    private static func readText(_ path: String) throws(BacklightError) -> String {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BacklightError("cannot read \(path): \(errnoDescription(errno))") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n >= 0 else { throw BacklightError("cannot read \(path): \(errnoDescription(errno))") }
        return String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: " \n\t")
    }

    private static func readNumber(_ path: String) throws(BacklightError) -> Int {
        let text = try readText(path)
        guard let value = Int(text) else { throw BacklightError("\(path) holds '\(text)', not a number") }
        return value
    }

    private static func write(_ text: String, to path: String) throws(BacklightError) {
        // O_TRUNC as a shell's `echo N > brightness`: sysfs takes each write whole.
        let fd = Glibc.open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard fd >= 0 else { throw BacklightError("cannot write \(path): \(errnoDescription(errno))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else {
            throw BacklightError("cannot write \(text.dropLast()) to \(path): \(n < 0 ? errnoDescription(errno) : "short write")")
        }
    }
}

/// A backlight that cannot be read or written; the message names the file.
public struct BacklightError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

private extension String {
    func trimmingCharacters(in set: String) -> String {
        let drop = Set(set.unicodeScalars)
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop.contains($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !drop.contains($0) })!
        return String(scalars[first...last])
    }
}
