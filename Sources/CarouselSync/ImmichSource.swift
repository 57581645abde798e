import CarouselConfig
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Immich (immich.app) through its REST API with an API key: albums by name
/// or id, people, favourites, today's memories and a date range, in that
/// order, each asset once. Written against the API reference of Immich
/// v2.7.5, using nothing Immich 3 removed (Tests/Servers/immich-api-subset.json).
public final class ImmichSource: SyncSourceClient {
    public let server: String
    let keyFile: String
    let settings: SyncSettings
    let http: HTTPClient
    /// Read from `keyFile` at each pass (a new key needs no restart).
    private var key = ""
    /// Today, for memories (YYYY-MM-DD), given by the caller.
    public var today: String

    public init(settings: SyncSettings, today: String) throws(SyncError) {
        guard let server = settings.server, let keyFile = settings.apiKeyFile else {
            throw SyncError(.local, "[sync] source = immich needs server and api_key_file")
        }
        self.server = server
        self.keyFile = keyFile
        self.settings = settings
        self.today = today
        do {
            http = try HTTPClient()
        } catch {
            throw SyncError(.local, error.message)
        }
        http.caFile = settings.caFile
        http.shouldAbort = { terminationRequested() }
    }

    public var summary: String { "Immich at \(server)" }

    // MARK: - Requests

    private var headers: [String] { ["x-api-key: \(key)", "Accept: application/json"] }

    private func url(_ path: String, _ query: [(String, String)] = []) -> String {
        let q = query.map { "\($0.0)=\(percentEncoded($0.1))" }.joined(separator: "&")
        return server + "/api" + path + (q.isEmpty ? "" : "?" + q)
    }

    /// The JSON of an answer, or why there is none worth reading.
    private func json(_ response: HTTPResponse, _ what: String) throws(SyncError) -> JSONValue {
        try Self.check(response.status, body: response.text, what: what, keyFile: keyFile)
        guard let value = JSONValue.parse(response.text) else {
            throw SyncError(.server, "\(what): the server's answer is not JSON (\(Self.excerpt(response.text)))")
        }
        return value
    }

    private func get(_ path: String, _ query: [(String, String)] = [], _ what: String) throws(SyncError) -> JSONValue {
        try json(try request(what) { () throws(FetchError) in try http.get(url(path, query), headers: headers) }, what)
    }

    private func post(_ path: String, _ body: JSONValue, _ what: String) throws(SyncError) -> JSONValue {
        try json(try request(what) { () throws(FetchError) in try http.post(url(path), json: body.encoded, headers: headers) }, what)
    }

    /// A request's answer, or its failure as the sync's kind.
    private func request(_ what: String, _ send: () throws(FetchError) -> HTTPResponse) throws(SyncError) -> HTTPResponse {
        do {
            return try send()
        } catch {
            throw Self.syncError(error, what)
        }
    }

    static func syncError(_ error: FetchError, _ what: String) -> SyncError {
        switch error.kind {
        case .network, .timeout: SyncError(.offline, "\(what): \(error.message)")
        // A deadline is this server's answer, not the network: a download past it fails alone.
        case .truncated, .tooLarge, .deadline: SyncError(.server, "\(what): \(error.message)")
        case .stopped: SyncError(.stopped, "\(what): stopped")
        case .write(errno: ENOSPC): SyncError(.diskFull, "\(what): the disk is full")
        case .write, .library: SyncError(.local, "\(what): \(error.message)")
        }
    }

    /// A status other than 200 as the sync's kind of failure.
    static func check(_ status: Int, body: String, what: String, keyFile: String) throws(SyncError) {
        guard status != 200, status != 201 else { return }
        let message = JSONValue.parse(body)?["message"]
        let said = message?.stringValue ?? message?.arrayValue?.compactMap { $0.stringValue }.joined(separator: "; ")
            ?? excerpt(body)
        switch status {
        case 401, 403:
            throw SyncError(.unauthorized, "\(what): Immich refused the API key in \(keyFile) (\(status): \(said)); make a new one in Immich's account settings")
        case 400, 404:
            throw SyncError(.missing, "\(what): \(status) \(said)")
        case 301, 302, 303, 307, 308:
            throw SyncError(.server, "\(what): the server redirects (\(status)); set [sync] server to the address it redirects to (the API key is not sent on to another address)")
        default:
            throw SyncError(.server, "\(what): the server answered \(status) (\(said))")
        }
    }

    // MARK: - The selection

    public func list() throws(SyncError) -> [RemoteItem] {
        let bytes: [UInt8]
        do {
            bytes = try readFileBytes(keyFile, limit: 4096)
        } catch {
            throw SyncError(.local, "cannot read api_key_file \(keyFile): \(errnoDescription(error.errno))")
        }
        key = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        facesReadable = true
        guard !key.isEmpty else { throw SyncError(.local, "api_key_file \(keyFile) is empty") }
        // One cheap request first: a refused key or an absent server is one clear line.
        _ = try get("/users/me", [], "Immich")

        // Each page is made items at once (a few hundred bytes an asset), not
        // kept as JSON: a whole library in a date range fits a small board.
        var items: [RemoteItem] = []
        var seen = Set<String>()
        func take(_ assets: [JSONValue]) {
            for asset in assets {
                guard let item = item(asset), inRange(asset), seen.insert(item.key).inserted else { continue }
                items.append(item)
            }
        }
        if !settings.albums.isEmpty {
            let all = try get("/albums", [], "the album list").arrayValue ?? []
            for wanted in settings.albums {
                guard let id = Self.find(wanted, in: all, nameField: "albumName") else {
                    let names = all.compactMap { $0["albumName"]?.stringValue }.prefix(10).joined(separator: ", ")
                    throw SyncError(.missing, "Immich has no album '\(wanted)' this key can see (albums: \(names))")
                }
                // Through the search, not GET /albums/{id}: Immich 3 no longer lists an album's assets there.
                try search(["albumIds": .array([.string(id)])], "album '\(wanted)'", into: take)
            }
        }
        if !settings.people.isEmpty {
            var people: [JSONValue] = []
            for page in 1... {
                let answer = try get("/people", [("withHidden", "false"), ("page", String(page)), ("size", "500")], "the people list")
                people += answer["people"]?.arrayValue ?? []
                guard answer["hasNextPage"]?.boolValue == true, page < 1000 else { break }
            }
            for wanted in settings.people {
                guard let id = Self.find(wanted, in: people, nameField: "name") else {
                    let names = people.compactMap { $0["name"]?.stringValue }.filter { !$0.isEmpty }.prefix(10)
                    throw SyncError(.missing, "Immich knows no person '\(wanted)' (named people: \(names.joined(separator: ", ")))")
                }
                try search(["personIds": .array([.string(id)])], "person '\(wanted)'", into: take)
            }
        }
        if settings.favorites { try search(["isFavorite": true], "favorites", into: take) }
        if settings.memories {
            guard let memories = try get("/memories", [("for", today + "T00:00:00.000Z")], "memories").arrayValue else {
                throw SyncError(.server, "memories: the server's answer is not a list")
            }
            for memory in memories { take(memory["assets"]?.arrayValue ?? []) }
        }
        let onlyDates = settings.albums.isEmpty && settings.people.isEmpty && !settings.favorites && !settings.memories
        if onlyDates { try search([:], "pictures taken in the range", into: take) }
        return items
    }

    /// The id of what `wanted` names: an id, else a name (exact, then in any case).
    static func find(_ wanted: String, in list: [JSONValue], nameField: String) -> String? {
        let lower = wanted.lowercased()
        let match = list.first { $0["id"]?.stringValue == wanted }
            ?? list.first { $0[nameField]?.stringValue == wanted }
            ?? list.first { $0[nameField]?.stringValue?.lowercased() == lower }
        return match?["id"]?.stringValue
    }

    /// POST /search/metadata, page after page (Immich's pages are numbered from 1; `nextPage` is null at the end).
    private func search(_ filter: [String: JSONValue], _ what: String, into take: ([JSONValue]) -> Void) throws(SyncError) {
        var page = 1
        while true {
            var body = filter
            body["page"] = .int(page)
            body["size"] = .int(Self.pageSize)
            body["withExif"] = true
            if !settings.videos { body["type"] = "IMAGE" }
            if let after = settings.takenAfter { body["takenAfter"] = .string(after + "T00:00:00.000Z") }
            if let before = settings.takenBefore { body["takenBefore"] = .string(before + "T23:59:59.999Z") }
            let answer = try post("/search/metadata", .object(body), what)
            guard let assets = answer["assets"], let items = assets["items"]?.arrayValue else {
                throw SyncError(.server, "\(what): the search's answer has no assets.items")
            }
            take(items)
            // An empty page ends it too, and no selection has 10,000 pages:
            // a server (or a proxy) that pages for ever is not followed.
            guard !items.isEmpty, let next = assets["nextPage"]?.stringValue, let n = Int(next), n > page, n <= 10_000 else {
                return
            }
            page = n
        }
    }

    static let pageSize = 250

    private func inRange(_ asset: JSONValue) -> Bool {
        guard settings.takenAfter != nil || settings.takenBefore != nil else { return true }
        let taken = String((asset["localDateTime"]?.stringValue ?? asset["fileCreatedAt"]?.stringValue ?? "").prefix(10))
        if let after = settings.takenAfter, taken < after { return false }
        if let before = settings.takenBefore, taken > before { return false }
        return true
    }

    /// An asset as an item of the folder; nil for what is not shown (videos when not wanted, trashed or offline ones).
    func item(_ asset: JSONValue) -> RemoteItem? {
        guard let id = asset["id"]?.stringValue, Self.isID(id) else { return nil }
        let type = asset["type"]?.stringValue ?? "IMAGE"
        guard type == "IMAGE" || (type == "VIDEO" && settings.videos) else { return nil }
        if asset["isTrashed"]?.boolValue == true || asset["isOffline"]?.boolValue == true { return nil }
        let exif = asset["exifInfo"]
        let taken = exif?["dateTimeOriginal"]?.stringValue ?? asset["localDateTime"]?.stringValue
            ?? asset["fileCreatedAt"]?.stringValue
        let original = asset["originalFileName"]?.stringValue ?? id
        // A video's preview is a still; the file is the clip itself.
        let useOriginal = settings.size == .original || type == "VIDEO"
        let ext = useOriginal ? Self.fileExtension(original) ?? "jpg" : "jpg"
        let name = Self.localName(taken: taken, original: original, id: id, ext: ext)
        let version = [asset["checksum"]?.stringValue ?? "", asset["updatedAt"]?.stringValue ?? "",
                       useOriginal ? "original" : "preview"].joined(separator: " ")
        let description = exif?["description"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let caption = CaptionTags(dateTaken: taken.flatMap(CaptionTags.exifDate(iso:)), description: description)
        return RemoteItem(key: id, name: name, version: version,
                          bytes: useOriginal ? exif?["fileSizeInByte"]?.intValue : nil,
                          caption: type == "IMAGE" ? caption : nil)
    }

    /// The faces of asset `id` Immich recognised (`GET /faces`, which needs
    /// the key's `face.read`): nil when they cannot be read, said once a pass.
    func faces(_ id: String) -> [CaptionTags.FaceTag]? {
        guard facesReadable else { return nil }
        do {
            guard let list = try get("/faces", [("id", id)], "the faces of asset \(id)").arrayValue else {
                throw SyncError(.server, "the faces of asset \(id): the server's answer is not a list")
            }
            return list.prefix(CaptionTags.maximumFaces * 4).compactMap { face -> CaptionTags.FaceTag? in
                guard let x1 = face["boundingBoxX1"]?.intValue, let y1 = face["boundingBoxY1"]?.intValue,
                      let x2 = face["boundingBoxX2"]?.intValue, let y2 = face["boundingBoxY2"]?.intValue,
                      let w = face["imageWidth"]?.intValue, let h = face["imageHeight"]?.intValue else { return nil }
                return CaptionTags.FaceTag(x1: x1, y1: y1, x2: x2, y2: y2, imageWidth: w, imageHeight: h,
                                           name: face["person"]?["name"]?.stringValue)
            }
        } catch {
            facesReadable = false
            log(.warning, "sync: \(error); pictures are fetched without face regions this pass "
                + "(an API key needs face.read for them)")
            return nil
        }
    }

    /// Whether faces are asked for (a refusal stops them until the next pass).
    private var facesReadable = true

    public func fetch(_ item: RemoteItem, into fd: Int32, maxBytes: Int) throws(SyncError) -> Int {
        let original = item.version.hasSuffix(" original")
        // A JPEG gets its faces as MWG regions, beside its caption.
        var caption = item.caption
        let lower = item.name.lowercased()
        if caption != nil, lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg"), let faces = faces(item.key) {
            caption?.faces = faces
        }
        let address = original ? url("/assets/\(item.key)/original") : url("/assets/\(item.key)/thumbnail", [("size", "preview")])
        var errorBody: [UInt8] = []
        let (status, bytes): (Int, Int)
        do {
            (status, bytes) = try http.download(address, headers: headers, to: fd, maxBytes: maxBytes, expectedBytes: item.bytes,
                                                afterJPEGStart: caption?.jpegSegments(withDate: !original) ?? [],
                                                errorBody: &errorBody)
        } catch {
            throw Self.syncError(error, "asset \(item.key)")
        }
        try Self.check(status, body: String(decoding: errorBody, as: UTF8.self), what: "asset \(item.key)", keyFile: keyFile)
        guard bytes > 0 else { throw SyncError(.server, "asset \(item.key): an empty file") }
        return bytes
    }

    // MARK: - Names

    /// Immich's ids are UUIDs: anything else is not put into a URL or a name.
    static func isID(_ id: String) -> Bool {
        id.utf8.count == 36 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) || $0 == 0x2D }
    }

    static func fileExtension(_ name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...].lowercased()
        return !ext.isEmpty && ext.count <= 5 && ext.allSatisfy({ $0.isLetter || $0.isNumber }) ? ext : nil
    }

    /// "2024-06-30_143210_IMG_1234_1a2b3c4d.jpg": the date first, so that
    /// `[images] order = name` shows them in the order they were taken; the
    /// id's start keeps two IMG_1234 apart.
    static func localName(taken: String?, original: String, id: String, ext: String) -> String {
        let digits = (taken ?? "").filter(\.isNumber)
        let stamp = digits.count >= 14
            ? "\(digits.prefix(4))-\(digits.dropFirst(4).prefix(2))-\(digits.dropFirst(6).prefix(2))_\(digits.dropFirst(8).prefix(6))_"
            : ""
        var stem = original
        if let dot = stem.lastIndex(of: ".") { stem = String(stem[..<dot]) }
        stem = String(stem.unicodeScalars.map { s -> Character in
            (s.properties.isAlphabetic || ("0"..."9").contains(s) || s == "-" || s == "_") ? Character(s) : "_"
        }.prefix(60))
        return "\(stamp)\(stem)_\(id.prefix(8)).\(ext)"
    }

    static func excerpt(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.count > 120 ? String(line.prefix(120)) + "…" : line
    }
}
