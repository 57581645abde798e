@testable import CarouselWeb
import CarouselConfig
import CarouselPlatform
import CarouselWebWords
import CarouselWords
import Foundation
import Testing

@Suite struct UploadNameTests {
    func safe(_ name: String) -> String? {
        switch UploadName.safe(name) {
        case let .success((stem, ext)): "\(stem).\(ext)"
        case .failure: nil
        }
    }

    @Test func keepsTheLastComponentOnly() {
        #expect(safe("../../x.jpg") == "x.jpg")
        #expect(safe("/etc/passwd.jpg") == "passwd.jpg")
        #expect(safe("C:\\Users\\me\\DCIM\\IMG_0001.JPG") == "IMG_0001.jpg")
        #expect(safe("..\\..\\boot.png") == "boot.png")
    }

    @Test func makesNamesSafe() {
        #expect(safe("<script>alert(1)</script>.jpg") == "script.jpg")
        #expect(safe("my holiday (1).HEIC") == "my_holiday_1.heic")
        #expect(safe(".hidden.jpg") == "hidden.jpg")
        #expect(safe("...jpg") == "upload.jpg")
        #expect(safe("été à Paris.webp") == "t_Paris.webp")
        #expect(safe("line\nbreak.png") == "line_break.png")
        #expect(safe("___.png") == "upload.png")
        let long = String(repeating: "a", count: 300) + ".jpg"
        #expect(safe(long)?.utf8.count == 84)
    }

    @Test func takesPicturesAndClipsOnly() {
        for ext in ["jpg", "jpeg", "png", "webp", "gif", "heic", "heif", "hif", "avif", "mp4", "m4v", "mov", "mkv", "webm"] {
            #expect(safe("a." + ext.uppercased()) == "a." + ext)
        }
        for name in ["a.exe", "a.txt", "a.jpg.sh", "a", "jpg", ".jpg", "a.", ""] {
            guard case let .failure(error) = UploadName.safe(name) else {
                Issue.record("\(name) was taken")
                continue
            }
            #expect(error.status == 415)
        }
    }
}

@Suite struct EscapingTests {
    @Test func htmlEscapesEveryMarkupCharacter() {
        #expect(htmlEscaped("<script>alert('x')</script> & \"q\"")
            == "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;")
        #expect(htmlEscaped("a\u{0}b\u{1B}c\u{7F}d\te") == "abcd\te")
        #expect(htmlEscaped("日本 ✓") == "日本 ✓")
    }

    @Test func urlSegmentsEscapeAllButUnreserved() {
        #expect(percentEncoded("a b/c?.jpg") == "a%20b%2Fc%3F.jpg")
        #expect(percentEncoded("é") == "%C3%A9")
    }
}

@Suite struct MultipartTests {
    @Test func boundaryFromContentType() {
        #expect(WebApp.multipartBoundary("multipart/form-data; boundary=----abc") == "----abc")
        #expect(WebApp.multipartBoundary("multipart/form-data; charset=utf-8; boundary=\"q q\"") == "q q")
        #expect(WebApp.multipartBoundary("Multipart/Form-Data;BOUNDARY=x") == "x")
        #expect(WebApp.multipartBoundary("application/json; boundary=x") == nil)
        #expect(WebApp.multipartBoundary("multipart/form-data") == nil)
        #expect(WebApp.multipartBoundary("multipart/form-data; boundary=" + String(repeating: "b", count: 71)) == nil)
    }

    @Test func filenameFromContentDisposition() {
        #expect(UploadReceiver.filename("form-data; name=\"files\"; filename=\"a b.jpg\"") == "a b.jpg")
        #expect(UploadReceiver.filename("form-data; name=\"files\"; filename*=UTF-8''%C3%A9t%C3%A9.jpg; filename=\"x.jpg\"")
            == "été.jpg")
        #expect(UploadReceiver.filename("form-data; name=\"password\"") == nil)
    }
}

@Suite struct LoginLimiterTests {
    final class Clock: @unchecked Sendable {
        var now: Int64 = 1000
    }

    @Test func refusesAfterFiveFailuresUntilTheOldestIsAMinuteOld() async {
        let clock = Clock()
        let limiter = LoginLimiter(failures: 5, window: 60, clock: { clock.now })
        for second in 0..<5 {
            clock.now = 1000 + Int64(second) * 10
            #expect(await limiter.wait() == nil)
            await limiter.failed()
        }
        clock.now = 1041
        #expect(await limiter.wait() == 19)
        clock.now = 1059
        #expect(await limiter.wait() == 1)
        clock.now = 1060  // the first failure is a minute old: one more attempt
        #expect(await limiter.wait() == nil)
        await limiter.failed()
        #expect(await limiter.wait() == 10)
    }
}

@Suite struct WebWordsTests {
    @Test func listenAddresses() throws {
        #expect(try WebListen("0.0.0.0:8080") == .tcp(host: "0.0.0.0", port: 8080))
        #expect(try WebListen("[::]:80") == .tcp(host: "::", port: 80))
        #expect(try WebListen("unix:/run/carouseld-web/http.sock") == .unix(path: "/run/carouseld-web/http.sock"))
        #expect(try WebListen("[::]:80").description == "[::]:80")
        for bad in ["8080", "host:", "host:0", "host:70000", ":80", "unix:relative", "a b:80"] {
            #expect(throws: ValueError.self) { try WebListen(bad) }
        }
    }

    @Test func httpsNeedsTheCertificateAndTheKeyTogether() throws {
        let both = try Configuration.parse("[web]\ncertificate = /etc/c.pem\nkey = /etc/k.pem\nhttps_listen = [::]:443\n",
                                           file: "c.ini")[WebSettings.self]
        #expect(both.certificate == "/etc/c.pem" && both.key == "/etc/k.pem" && both.httpsListen == .tcp(host: "::", port: 443))
        #expect(try Configuration.parse("[web]\ncertificate =\nkey =\n", file: "c.ini")[WebSettings.self].certificate == nil)
        let cases = [
            ("[web]\ncertificate = /etc/c.pem\n",
             "c.ini:2: [web] certificate is set without key: HTTPS needs both (or neither, for HTTP)"),
            ("[web]\nkey = /etc/k.pem\n", "c.ini:2: [web] key is set without certificate: HTTPS needs both (or neither, for HTTP)"),
            ("[web]\ncertificate = c.pem\n", "c.ini:2: certificate = 'c.pem': expected an absolute path, or nothing"),
        ]
        for (text, message) in cases {
            #expect(throws: ConfigError.self) { try Configuration.parse(text, file: "c.ini") }
            do { _ = try Configuration.parse(text, file: "c.ini") } catch { #expect(error.description == message) }
        }
    }

    @Test func theHTTPSPortABrowserAdds() {
        #expect(WebListen.tcp(host: "0.0.0.0", port: 443).httpsPortSuffix == "")
        #expect(WebListen.tcp(host: "0.0.0.0", port: 8443).httpsPortSuffix == ":8443")
        // systemd's socket on 443 passes connections on to the Unix socket.
        #expect(WebListen.unix(path: "/run/carouseld-web/https.sock").httpsPortSuffix == "")
    }
}

@Suite struct HTTPSGuardsTests {
    @Test func plainHTTPIsSentToTheSamePathOverHTTPS() {
        typealias Redirect = RedirectToHTTPS<WebContext>
        #expect(Redirect.location(authority: "frame.local", target: "/photos?page=2", portSuffix: "") == "https://frame.local/photos?page=2")
        #expect(Redirect.location(authority: "192.168.1.20:8080", target: "/", portSuffix: ":8443") == "https://192.168.1.20:8443/")
        #expect(Redirect.location(authority: "[fe80::1]:80", target: "/now", portSuffix: "") == "https://[fe80::1]/now")
        #expect(Redirect.location(authority: "frame.local", target: "*", portSuffix: "") == "https://frame.local/")
        for bad: String? in [nil, "", ":80", "[]:80", "[fe80::1", "evil\"host", "a b", "frame.local/x@y", "a:b:80",
                             "[frame.local]:80"] {
            #expect(Redirect.location(authority: bad, target: "/", portSuffix: "") == nil, "\(bad ?? "nil")")
        }
    }

    @Test func overHTTPSAnHTTPOriginIsAnotherSite() {
        typealias Guard = SameOrigin<WebContext>
        #expect(Guard.isPageOrigin("https://frame.local", authority: "frame.local", secure: true))
        #expect(!Guard.isPageOrigin("http://frame.local", authority: "frame.local", secure: true))
        #expect(Guard.isPageOrigin("http://frame.local", authority: "frame.local", secure: false))
        #expect(Guard.isPageOrigin("https://frame.local", authority: "frame.local", secure: false))
        #expect(!Guard.isPageOrigin("https://evil.example", authority: "frame.local", secure: true))
        #expect(!Guard.isPageOrigin("https://frame.local", authority: nil, secure: true))
    }
}

@Suite struct OwnerPasswordTests {
    @Test func storesAHashThatVerifies() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("web-owner-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let owner = OwnerPassword(folder: folder)
        #expect(!owner.isSet)
        #expect(!owner.verify("anything at all"))
        #expect(throws: WebStateError.self) { try owner.set("short") }
        #expect(!owner.isSet)
        try owner.set("correct horse battery")
        #expect(owner.isSet)
        #expect(owner.verify("correct horse battery"))
        #expect(!owner.verify("correct horse batter"))
        #expect(!owner.verify(String(repeating: "x", count: 100)))
        let stored = try String(contentsOfFile: owner.file, encoding: .utf8)
        #expect(stored.hasPrefix("$2") && !stored.contains("correct horse"))
        let mode = try FileManager.default.attributesOfItem(atPath: owner.file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}

@Suite struct UploadFileTests {
    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("web-upload-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func overTheLimitKeepsNothing() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = try UploadFile(folder: dir, stem: "big", ext: "jpg", limit: 10)
        [UInt8](repeating: 1, count: 8).withUnsafeBytes { file.append($0) }
        #expect(file.failed == nil)
        [UInt8](repeating: 1, count: 3).withUnsafeBytes { file.append($0) }
        #expect(file.failed?.status == 413)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test func aRefusedCheckKeepsNothingAndATakenNameIsNeverReplaced() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let refused = try UploadFile(folder: dir, stem: "a", ext: "jpg", limit: 100)
        [UInt8](repeating: 1, count: 8).withUnsafeBytes { refused.append($0) }
        await #expect(throws: UploadError.self) {
            try await refused.finish { _ in UploadError("not a picture", status: 422) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)

        #expect(FileManager.default.createFile(atPath: dir + "/a.jpg", contents: Data("first".utf8)))
        let second = try UploadFile(folder: dir, stem: "a", ext: "jpg", limit: 100)
        Array("second".utf8).withUnsafeBytes { second.append($0) }
        let name = try await second.finish { _ in nil }
        #expect(name == "a-2.jpg")
        #expect(try String(contentsOfFile: dir + "/a.jpg", encoding: .utf8) == "first")
        #expect(try String(contentsOfFile: dir + "/a-2.jpg", encoding: .utf8) == "second")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["a-2.jpg", "a.jpg"])
    }
}

@Suite struct HelpersTests {
    /// Twelve helpers asked for at once: never more than `Helpers.limit`
    /// run together, and every one runs (none is lost while waiting).
    @Test func atMostLimitRunAtOnceAndEveryOneRuns() async {
        final class Gauge: @unchecked Sendable {
            private let lock = NSLock()
            private var running = 0
            private(set) var most = 0
            private(set) var done = 0
            func enter() { lock.withLock { running += 1; most = max(most, running) } }
            func leave() { lock.withLock { running -= 1; done += 1 } }
        }
        let gauge = Gauge()
        await withTaskGroup(of: Int.self) { group in
            for i in 0..<12 {
                group.addTask {
                    await Helpers.run {
                        gauge.enter()
                        usleep(20_000)
                        gauge.leave()
                        return i
                    }
                }
            }
            var seen = Set<Int>()
            for await i in group { seen.insert(i) }
            #expect(seen == Set(0..<12))
        }
        #expect(gauge.done == 12)
        #expect(gauge.most <= Helpers.limit)
    }
}
