import Foundation

/// A guest's phone, paired with a code the frame showed.
public struct GuestDevice: Codable, Equatable, Sendable {
    public var id: String
    public var name: String
    /// Seconds since 1970.
    public var paired: Int
}

/// The web's own records, in its state folder: the paired guests
/// (`guests.json`) and who added which upload (`uploads.json`), each
/// written whole (temporary name, fsync, rename). One actor, so that two
/// requests never write over each other's change.
public actor WebRecords {
    public let folder: String
    private var guests: [GuestDevice]
    private var uploads: [String: String]

    public init(folder: String) {
        self.folder = folder
        guests = Self.read([GuestDevice].self, folder + "/guests.json") ?? []
        uploads = Self.read([String: String].self, folder + "/uploads.json") ?? [:]
    }

    static func read<T: Decodable>(_ type: T.Type, _ path: String) -> T? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }

    private func write<T: Encodable>(_ value: T, _ name: String) throws(WebStateError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(value) else { throw WebStateError("cannot encode \(name)") }
        try WebState.writeAtomically(Array(data), to: folder + "/" + name, mode: 0o600)
    }

    // MARK: Guests

    public var allGuests: [GuestDevice] { guests }

    public func guest(_ id: String) -> GuestDevice? { guests.first { $0.id == id } }

    /// A new guest named `name` (cut to 40 characters, one line).
    public func addGuest(named name: String) throws(WebStateError) -> GuestDevice {
        var random = SystemRandomNumberGenerator()
        let id = (0..<4).map { _ in String(random.next() as UInt32, radix: 36) }.joined()
        var shown = name.filter { !$0.isNewline && !($0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false) }
        shown = String(shown.trimmingCharacters(in: .whitespaces).prefix(40))
        let device = GuestDevice(id: id, name: shown.isEmpty ? "A phone" : shown, paired: Int(Date().timeIntervalSince1970))
        var next = guests
        next.append(device)
        try write(next, "guests.json")
        guests = next
        return device
    }

    /// Takes the guest away: its sessions end at their next request; what it added stays.
    public func revoke(_ id: String) throws(WebStateError) -> Bool {
        guard guests.contains(where: { $0.id == id }) else { return false }
        let next = guests.filter { $0.id != id }
        try write(next, "guests.json")
        guests = next
        return true
    }

    // MARK: Uploads

    /// Who added `name`: a guest's id, `owner`, or nil (it came otherwise).
    public func addedBy(_ name: String) -> String? { uploads[name] }

    public func added(_ name: String, by who: String) throws(WebStateError) {
        var next = uploads
        next[name] = who
        try write(next, "uploads.json")
        uploads = next
    }

    public func removed(_ name: String) throws(WebStateError) {
        guard uploads[name] != nil else { return }
        var next = uploads
        next[name] = nil
        try write(next, "uploads.json")
        uploads = next
    }
}
