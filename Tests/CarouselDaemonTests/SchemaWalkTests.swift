// Every key of the schema, with values at and past the edges of what it
// takes: whatever `set` accepts must run (frames drawn, pictures decoded)
// without a trap. A trap ends this test process, which fails the suite.

import CarouselConfig
import CarouselControl
import CarouselDaemon
import Testing

@Suite("Every accepted value runs") struct SchemaWalkTests {
    /// Numbers around every bound the schema has, words, and odd text.
    static let candidates = [
        "-1e308", "-100000", "-100", "-1", "-0.5", "0", "0.0001", "0.05", "0.1", "0.5", "0.9", "0.9999", "1", "1.5", "2",
        "10", "90", "100", "180", "200", "270", "1000", "4096", "10000", "16384", "16385", "86400", "100000",
        "10000000", "1000000000", "1e308", "nan", "inf", "-inf", "", " ", "true", "false", "yes", "0660", "0777",
        "#FFFFFF", "#00000000", "#FFFFFF80", "1 0 0 0 1 0", "0 1 0 -1 0 1", "1,2,3", "center", "edge", "forward",
        "backward", "rewind", "stop", "contain", "cover", "stretch", "none", "name", "mtime", "random", "bottom",
        "left", "debug", "error", "auto", "atomic", "legacy", "320x200", "64x64", "200x300@60",
        "127.0.0.1:8080", "/nonexistent/carouseld-walk",
        String(repeating: "x", count: 5000),
    ]

    @Test("set, then frames and decodes, for every key and candidate value", arguments: Schema.keys.map { "\($0.section).\($0.name)" })
    func walk(key: String) throws {
        let d = try OffscreenDaemon()
        d.advance(ms: 0)
        var accepted = 0
        // The fixed list, and the edges the key's own range states.
        for value in Self.candidates + (Schema.lookup(key)?.domain.edgeValues ?? []) {
            guard case .ok = d.daemon.set(key, value) else { continue }
            accepted += 1
            for _ in 0..<3 {
                d.advance(ms: 20)
                d.daemon.settleDecodes()
            }
            // Motion too: a swipe and a command under the new value.
            var t = d.now
            d.daemon.feed(.down(id: 0, at: .init(x: 150, y: 100)), at: t)
            for k in 1...4 {
                t += 16_000
                d.daemon.feed(.move(id: 0, to: .init(x: 150 - Double(k) * 40, y: 100)), at: t)
            }
            d.daemon.feed(.up(id: 0), at: t)
            d.now = t
            _ = d.daemon.answer(.next, grant: .controlSocket)
            for _ in 0..<10 { d.advance(ms: 50) }
            _ = d.daemon.status()
        }
        // Restart-only keys take only their running value; every other key takes something.
        if !Daemon.restartKeys.contains(where: { $0.name == key }) {
            #expect(accepted > 0, "no candidate value was accepted for \(key)")
        }
    }
}
