import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselImaging
import CarouselPairingWords
import CarouselPlatform
import CarouselWebWords
import Foundation
import Hummingbird
import HummingbirdAuth
import MultipartKit
import NIOCore

// Uploads as they arrive: a streamed multipart body into files.
extension WebApp {
    // MARK: Uploads

    /// Reads a multipart body as it arrives, each file into its own
    /// `UploadFile`, checked and named when it is whole. Returns what became
    /// of each file; throws (and keeps nothing of the file in progress)
    /// when the request itself is refused.
    static func receiveUploads(_ request: Request, folder: String, env: WebEnvironment) async throws
        -> [Result<String, UploadError>]
    {
        guard let type = request.headers[.contentType], let boundary = multipartBoundary(type) else {
            throw HTTPError(.unsupportedMediaType, message: "expected multipart/form-data")
        }
        if let length = request.headers[.contentLength].flatMap(Int.init),
           length > env.maxUploadBytes * maxFilesPerRequest + maxOverheadBytes {
            throw HTTPError(.contentTooLarge, message: "more than \(maxFilesPerRequest) files of [web] max_upload_mb at once")
        }
        let receiver = UploadReceiver(folder: folder, limit: env.maxUploadBytes)
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { name, value in receiver.header(name, value) }
        parser.onBody = { buffer in receiver.body(&buffer) }
        parser.onPartComplete = { receiver.partComplete() }
        var results: [Result<String, UploadError>] = []
        do {
            for try await chunk in request.body {
                receiver.fed += chunk.readableBytes
                do {
                    try parser.execute(chunk)
                } catch {
                    throw HTTPError(.badRequest, message: "the upload is not a well-formed multipart body")
                }
                receiver.checkOverhead()
                if let refusal = receiver.refusal { throw HTTPError(refusal.httpStatus, message: refusal.message) }
                for file in receiver.takeFinished() {
                    results.append(await finish(file, env: env))
                }
            }
        } catch {
            receiver.discardAll()
            throw error
        }
        receiver.discardAll()
        if results.isEmpty { throw HTTPError(.badRequest, message: "the upload held no file") }
        return results
    }

    static func finish(_ file: Result<UploadFile, UploadError>, env: WebEnvironment) async -> Result<String, UploadError> {
        switch file {
        case let .failure(error): return .failure(error)
        case let .success(file):
            let check = env.check
            let sent = file.stem + "." + file.ext
            do {
                return .success(try await file.finish { path in
                    await Helpers.run { check.problem(path: path, name: sent) }
                })
            } catch {
                return .failure(error)
            }
        }
    }

    static func multipartBoundary(_ contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for part in parts.dropFirst() where part.lowercased().hasPrefix("boundary=") {
            var value = String(part.dropFirst("boundary=".count))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            guard (1...70).contains(value.utf8.count) else { return nil }
            return value
        }
        return nil
    }
}

extension UploadError {
    var httpStatus: HTTPResponse.Status { .init(code: status) }
}

/// The state of one multipart body being read: the part in progress, the
/// files done and waiting to be checked, the bytes that are not file contents.
final class UploadReceiver {
    let folder: String
    let limit: Int
    private var headers: [String: String] = [:]
    private var current: Result<UploadFile, UploadError>?
    /// A part without a file name (a form field): its bytes only count.
    private var inField = false
    private var finished: [Result<UploadFile, UploadError>] = []
    private var files = 0
    private var contents = 0
    var fed = 0
    var refusal: UploadError?

    init(folder: String, limit: Int) {
        self.folder = folder
        self.limit = limit
    }

    func header(_ name: String, _ value: String) {
        headers[name.lowercased()] = value
    }

    private func startPart() {
        guard current == nil, !inField else { return }
        guard let filename = Self.filename(headers["content-disposition"] ?? "") else {
            inField = true
            return
        }
        files += 1
        if files > WebApp.maxFilesPerRequest {
            refusal = UploadError("at most \(WebApp.maxFilesPerRequest) files at once", status: 413)
            current = .failure(refusal!)
            return
        }
        switch UploadName.safe(filename) {
        case let .failure(error): current = .failure(error)
        case let .success((stem, ext)):
            do {
                current = .success(try UploadFile(folder: folder, stem: stem, ext: ext, limit: limit))
            } catch {
                current = .failure(error)
                if error.status >= 500 { refusal = error }
            }
        }
    }

    func body(_ buffer: inout ByteBuffer) {
        startPart()
        if case let .success(file)? = current {
            contents += buffer.readableBytes
            buffer.withUnsafeReadableBytes { file.append($0) }
            // One file over the limit ends the request: the sender is told at once.
            if let failure = file.failed, failure.status == 413 || failure.status == 507 { refusal = failure }
        }
    }

    /// Refuses a body with more than `maxOverheadBytes` that are no file's
    /// contents (an endless preamble, endless part headers, fields), past
    /// what the parser may hold back while it looks for a boundary.
    func checkOverhead() {
        if refusal == nil, fed - contents > WebApp.maxOverheadBytes + 4096 {
            refusal = UploadError("the upload holds more than \(WebApp.maxOverheadBytes >> 10) KiB besides its files")
        }
    }

    func partComplete() {
        startPart()
        if let current { finished.append(current) }
        current = nil
        inField = false
        headers = [:]
    }

    func takeFinished() -> [Result<UploadFile, UploadError>] {
        defer { finished = [] }
        return finished
    }

    func discardAll() {
        if case let .success(file)? = current { file.discard() }
        for case let .success(file) in finished { file.discard() }
        current = nil
        finished = []
    }

    /// `filename="..."` of a Content-Disposition (`filename*=` first).
    static func filename(_ disposition: String) -> String? {
        for raw in disposition.split(separator: ";") {
            let part = raw.trimmingCharacters(in: .whitespaces)
            if part.lowercased().hasPrefix("filename*=") {
                let value = part.dropFirst("filename*=".count)
                if let quote = value.range(of: "''") { return String(value[quote.upperBound...]).removingPercentEncoding }
            }
        }
        for raw in disposition.split(separator: ";") {
            let part = raw.trimmingCharacters(in: .whitespaces)
            if part.lowercased().hasPrefix("filename=") {
                var value = String(part.dropFirst("filename=".count))
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
                return value.replacingOccurrences(of: "\\\"", with: "\"")
            }
        }
        return nil
    }
}
