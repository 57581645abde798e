import CCurlLoader
import CarouselConfig
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Why a request got no answer worth reading: what the log line says, and
/// the kind the sync's backoff and status decide on.
public struct FetchError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// libcurl could not be loaded (not installed).
        case library
        /// No connection: DNS, refused, TLS, a reset.
        case network
        /// The server stopped sending (no byte for the stall limit).
        case timeout
        /// The transfer took longer than its size allows (a server that drips, a body that never ends).
        case deadline
        /// The body ended before its Content-Length: a cut download.
        case truncated
        /// The body is larger than the caller allows.
        case tooLarge
        /// `shouldAbort` said to stop.
        case stopped
        /// The local file could not be written (a full disk: `ENOSPC`).
        case write(errno: Int32)
    }
    public let kind: Kind
    public let message: String
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}

/// A response: its status and, for `get`/`post`, its body.
public struct HTTPResponse: Sendable {
    public let status: Int
    public let body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// HTTP through libcurl (Debian's: TLS, proxies from the environment,
/// redirects, compression), one easy handle reused for every request of a
/// pass so that its connection is kept. Blocking: it runs in the sync
/// process, never on the daemon's loop.
public final class HTTPClient {
    /// Seconds to wait for a connection.
    public var connectTimeout = 15
    /// A transfer that moves no byte for this many seconds is given up (a stalled server).
    public var stallTimeout = 30
    /// The JSON cap and every transfer's overall deadline (its size at a
    /// minimum rate): on top of the stall rule, which a server dripping a
    /// byte a second passes.
    public var limits = TransferLimits.fromEnvironment()
    /// CA certificates (PEM) to trust instead of the system's store.
    public var caFile: String?
    /// Asked while a transfer runs (about once a second, and as data comes):
    /// true aborts it (a stop requested), as a `.stopped` failure.
    public var shouldAbort: @Sendable () -> Bool = { false }
    private let curl: UnsafeMutableRawPointer
    private let library: ccurl_library

    /// libcurl, loaded once per process (a table of function pointers, never changed after).
    nonisolated(unsafe) private static let loaded: Result<ccurl_library, LibraryLoadError> = loadLibrary(ccurl_load)

    public init() throws(FetchError) {
        let library: ccurl_library
        switch Self.loaded {
        case let .success(table): library = table
        case let .failure(error): throw FetchError(.library, "cannot load libcurl (\(error.message)): apt install libcurl4")
        }
        guard let handle = library.curl_easy_init() else { throw FetchError(.library, "curl_easy_init failed") }
        self.library = library
        curl = handle
    }

    deinit { library.curl_easy_cleanup(curl) }

    /// The body of `url` (at most `maxBytes` decoded, else the JSON cap).
    public func get(_ url: String, headers: [String] = [], maxBytes: Int? = nil) throws(FetchError) -> HTTPResponse {
        let limit = maxBytes ?? limits.jsonBytes
        let sink = Sink(limit: limit, host: Self.hostOf(url))
        let status = try perform(url, headers: headers, body: nil, sink: sink, expectedBytes: limit)
        return HTTPResponse(status: status, body: sink.bytes)
    }

    /// POSTs `json` and returns the answer (at most `maxBytes` decoded, else the JSON cap).
    public func post(_ url: String, json: String, headers: [String] = [], maxBytes: Int? = nil) throws(FetchError) -> HTTPResponse {
        let limit = maxBytes ?? limits.jsonBytes
        let sink = Sink(limit: limit, host: Self.hostOf(url))
        let status = try perform(url, headers: headers + ["Content-Type: application/json"], body: json, sink: sink,
                                 expectedBytes: limit)
        return HTTPResponse(status: status, body: sink.bytes)
    }

    /// Writes the body of `url` into `fd` (at most `maxBytes`) when the
    /// status is 200; returns the status and the bytes written. Another
    /// status leaves `fd` untouched, its body read into `errorBody`. A body
    /// that starts as a JPEG (its SOI marker) gets `afterJPEGStart` right
    /// after that marker (caption segments). `expectedBytes`, the size the
    /// server listed (nil: not said), sets the transfer's deadline.
    public func download(_ url: String, headers: [String] = [], to fd: Int32, maxBytes: Int, expectedBytes: Int?,
                         afterJPEGStart: [UInt8] = [], errorBody: inout [UInt8]) throws(FetchError) -> (status: Int, bytes: Int) {
        let sink = Sink(limit: maxBytes, host: Self.hostOf(url), file: fd)
        sink.insert = afterJPEGStart
        let status = try perform(url, headers: headers, body: nil, sink: sink, expectedBytes: expectedBytes)
        if status == 200, !sink.head.isEmpty, !sink.writeOut(sink.head) { throw sink.failure! }
        errorBody = sink.bytes
        return (status, sink.written)
    }

    /// Where a body goes: memory, or (once the status is 200) a file.
    private final class Sink {
        let limit: Int
        /// The server, for the line that refuses its answer.
        let host: String
        let file: Int32?
        var bytes: [UInt8] = []
        var written = 0
        var status: () -> Int = { 0 }
        var failure: FetchError?
        /// Bytes to put after a JPEG's first two, and those two while they are awaited.
        var insert: [UInt8] = []
        var head: [UInt8] = []
        init(limit: Int, host: String, file: Int32? = nil) {
            self.limit = limit
            self.host = host
            self.file = file
        }

        func take(_ data: UnsafeRawBufferPointer) -> Bool {
            if file != nil, status() == 200 {
                var data = data[...]
                if !insert.isEmpty {
                    // The first two bytes decide: a JPEG's SOI gets the segments after it.
                    while head.count < 2, let first = data.first {
                        head.append(first)
                        data = data.dropFirst()
                    }
                    guard head.count == 2 else { return true }
                    let start = head == [0xFF, 0xD8] ? head + insert : head
                    insert = []
                    head = []
                    guard writeOut(start) else { return false }
                }
                return writeOut(UnsafeRawBufferPointer(rebasing: data))
            }
            // JSON: kept in memory, up to the caller's limit. libcurl hands
            // over the body decoded (gzip, deflate), piece by piece: the cap
            // counts what would be parsed, before more than the cap is held.
            guard file == nil else {
                // An error's body (a proxy's HTML page for a 401): its start is enough to say why.
                bytes.append(contentsOf: data.prefix(max(0, (64 << 10) - bytes.count)))
                return true
            }
            guard bytes.count + data.count <= limit else {
                failure = FetchError(.tooLarge, "\(host): an answer over \(TransferLimits.size(limit)) once decoded (the cap for JSON); refused")
                return false
            }
            bytes.append(contentsOf: data)
            return true
        }

        func writeOut(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { writeOut($0) } }

        func writeOut(_ data: UnsafeRawBufferPointer) -> Bool {
            guard let file else { return false }
            guard written + data.count <= limit else {
                failure = FetchError(.tooLarge, "\(host): larger than \(TransferLimits.size(limit)); refused")
                return false
            }
            var offset = 0
            while offset < data.count {
                let n = Glibc.write(file, data.baseAddress! + offset, data.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    let e = errno
                    failure = FetchError(.write(errno: e), "cannot write: \(String(cString: strerror(e)))")
                    return false
                }
                offset += n
            }
            written += data.count
            return true
        }
    }

    private func perform(_ url: String, headers: [String], body: String?, sink: Sink, expectedBytes: Int?) throws(FetchError) -> Int {
        library.curl_easy_reset(curl)
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for header in headers { list = library.curl_slist_append(list, header) }
        defer { library.curl_slist_free_all(list) }
        var table = library
        let handle = curl
        func long(_ option: CURLoption, _ value: Int) { _ = ccurl_setopt_long(&table, handle, option, value) }
        func string(_ option: CURLoption, _ value: String) { _ = ccurl_setopt_string(&table, handle, option, value) }
        string(CURLOPT_URL, url)
        // Only HTTP and HTTPS. Redirects are not followed: libcurl would send
        // the x-api-key header on to whatever host a redirect names (it strips
        // only Authorization and cookies), so a redirect is an answer the
        // caller reports (set the server's final address instead).
        string(CURLOPT_PROTOCOLS_STR, "http,https")
        long(CURLOPT_FOLLOWLOCATION, 0)
        // No signals from libcurl (its DNS timeouts would use SIGALRM).
        long(CURLOPT_NOSIGNAL, 1)
        long(CURLOPT_CONNECTTIMEOUT, connectTimeout)
        long(CURLOPT_LOW_SPEED_LIMIT, 1)
        long(CURLOPT_LOW_SPEED_TIME, stallTimeout)
        // The overall deadline: the stall rule above lets through a server
        // that sends a byte every few seconds, or a body that never ends.
        let deadline = limits.deadline(forBytes: expectedBytes)
        long(CURLOPT_TIMEOUT, deadline)
        string(CURLOPT_USERAGENT, "carouseld-sync/\(CarouselVersion.string)")
        // gzip and friends for JSON; libcurl decodes (pictures are sent as they are).
        string(CURLOPT_ACCEPT_ENCODING, "")
        if let caFile { string(CURLOPT_CAINFO, caFile) }
        if let list { _ = ccurl_setopt_pointer(&table, handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)) }
        if let body {
            long(CURLOPT_POST, 1)
            string(CURLOPT_COPYPOSTFIELDS, body)
        }
        sink.status = { [table] in
            var code = 0
            var t = table
            _ = ccurl_getinfo_long(&t, handle, CURLINFO_RESPONSE_CODE, &code)
            return code
        }
        let context = Unmanaged.passUnretained(sink).toOpaque()
        _ = ccurl_setopt_write(&table, handle, { data, size, count, context in
            let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
            let n = size * count
            // Returning less than was given makes libcurl stop with CURLE_WRITE_ERROR.
            return sink.take(UnsafeRawBufferPointer(start: data, count: n)) ? n : 0
        }, context)
        let abort = AbortCheck(shouldAbort)
        _ = ccurl_setopt_progress(&table, handle, { context, _, downloaded, _, _ in
            let abort = Unmanaged<AbortCheck>.fromOpaque(context!).takeUnretainedValue()
            abort.saw(Int(downloaded))
            return abort.check() ? 1 : 0
        }, Unmanaged.passUnretained(abort).toOpaque())
        let rc = library.curl_easy_perform(handle)
        withExtendedLifetime(abort) {}
        withExtendedLifetime(sink) {}
        if let failure = sink.failure { throw failure }
        guard rc == CURLE_OK else {
            let why = library.curl_easy_strerror(rc).map { String(cString: $0) } ?? "libcurl error \(rc.rawValue)"
            switch rc {
            case CURLE_ABORTED_BY_CALLBACK: throw FetchError(.stopped, "\(Self.hostOf(url)): stopped")
            // Which rule fired: the stall rule only when no byte came for its time (within
            // the progress callback's second), else the deadline.
            case CURLE_OPERATION_TIMEDOUT where MonotonicClock.now() - abort.lastByte < Int64(stallTimeout - 2) * 1_000_000:
                throw FetchError(.deadline, "\(Self.hostOf(url)): not done within \(limits.explainDeadline(forBytes: expectedBytes)); given up")
            case CURLE_OPERATION_TIMEDOUT: throw FetchError(.timeout, "\(Self.hostOf(url)): \(why)")
            case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR: throw FetchError(.truncated, "\(Self.hostOf(url)): \(why)")
            default: throw FetchError(.network, "\(Self.hostOf(url)): \(why)")
            }
        }
        var code = 0
        _ = ccurl_getinfo_long(&table, handle, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// `shouldAbort` held by a class, so that libcurl's callback gets a pointer to it.
    private final class AbortCheck {
        let check: () -> Bool
        /// When the body last grew (or the transfer started), on `MonotonicClock`'s scale.
        var lastByte = MonotonicClock.now()
        var downloaded = 0
        init(_ check: @escaping () -> Bool) { self.check = check }
        func saw(_ now: Int) {
            if now != downloaded {
                downloaded = now
                lastByte = MonotonicClock.now()
            }
        }
    }

    /// The scheme and host of `url`, for messages (never its query: it may hold a key).
    static func hostOf(_ url: String) -> String {
        let parts = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].hasSuffix(":"), parts[1].isEmpty else { return url }
        return parts[0] + "//" + parts[2].prefix { $0 != "?" }
    }
}
