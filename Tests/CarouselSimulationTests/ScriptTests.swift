// The script format of the `simulate` contract: accepted forms and bad lines
// (`line N: <what is wrong>`, N counting every physical line, comments and
// blank lines included).

import CarouselConfig
import CarouselSimulation
import Testing

struct BadScript: CustomStringConvertible, Sendable {
    var what: String
    var text: String
    var line: Int
    var description: String { what }
}

let badScripts: [BadScript] = [
    BadScript(what: "unknown command", text: "# a comment\n\nfrobnicate 3\n", line: 3),
    BadScript(what: "unknown command after at", text: "images 3\nat 100 jump 1 2\n", line: 2),
    BadScript(what: "unknown control command", text: "at 100 command jump\n", line: 1),
    BadScript(what: "bad time", text: "set wrap true\nat abc probe\n", line: 2),
    BadScript(what: "negative time", text: "at -5 probe\n", line: 1),
    BadScript(what: "bad coordinate", text: "at 100 down 10 x\n", line: 1),
    BadScript(what: "missing coordinate", text: "\n\nat 100 down 10\n", line: 3),
    BadScript(what: "extra argument", text: "at 100 up 5 6\n", line: 1),
    BadScript(what: "finger id out of range", text: "at 100 down 5 5 10\n", line: 1),
    BadScript(what: "finger id not a number", text: "at 100 up x\n", line: 1),
    BadScript(what: "bad images count", text: "images many\n", line: 1),
    BadScript(what: "negative images count", text: "images -1\n", line: 1),
    BadScript(what: "bad size", text: "size 1280\n", line: 1),
    BadScript(what: "bad size numbers", text: "size 12x0x8\n", line: 1),
    BadScript(what: "zero size", text: "size 0x800\n", line: 1),
    BadScript(what: "unknown key", text: "# comment\nset nosuchkey 1\n", line: 2),
    BadScript(what: "unknown section.key", text: "set autoplay.nosuch 1\n", line: 1),
    BadScript(what: "key in the wrong section", text: "set autoplay.wrap true\n", line: 1),
    BadScript(what: "bad bool value", text: "set wrap maybe\n", line: 1),
    BadScript(what: "bad number value", text: "images 4\nset interval soon\n", line: 2),
    BadScript(what: "bad enum value", text: "set alignment left\n", line: 1),
    BadScript(what: "bad direction", text: "set direction sideways\n", line: 1),
    BadScript(what: "set without value", text: "set wrap\n", line: 1),
    BadScript(what: "out-of-order times", text: "at 200 probe\nat 100 probe\n", line: 2),
    BadScript(what: "out-of-order after comment", text: "at 200 probe\n# x\nat 300 up\nat 250 down 1 1\n", line: 4),
    BadScript(what: "goto out of range", text: "images 3\nat 100 command goto 3\n", line: 2),
    BadScript(what: "goto negative", text: "at 100 command goto -1\n", line: 1),
    BadScript(what: "goto not a number", text: "at 100 command goto two\n", line: 1),
    BadScript(what: "goto out of range (default 5 images)", text: "\nat 100 command goto 7\n", line: 2),
    BadScript(what: "bad until", text: "until later\n", line: 1),
]

@Suite("script parsing")
struct ScriptTests {
    @Test("a bad line fails with line N and a message", arguments: badScripts)
    func badLine(_ bad: BadScript) throws {
        let err = try #require(scriptError(bad.text), "\(bad.what)")
        #expect(err.line == bad.line, "\(bad.what): \(err)")
        #expect(!err.message.isEmpty)
        #expect(err.description == "line \(bad.line): \(err.message)")
    }

    @Test("a bad zoom request's line names zoom among the commands a script may give")
    func badZoomNamesZoom() throws {
        let err = try #require(scriptError("at 0 command zoom 0\n"))
        #expect(err.message.hasPrefix("zoom needs a scale"), "\(err.message)")
        #expect(err.message.hasSuffix("expected 'command next|prev|goto INDEX [MS]|pause|resume|zoom SCALE|zoom reset'"),
                "\(err.message)")
    }

    @Test("set takes INI key names without section, or section.key")
    func setForms() throws {
        for s in ["set interval 1.5", "set autoplay.interval 1.5"] {
            let out = try simulate("\(s)\nat 0 probe\n")
            #expect(out.probe(0)?.nextMs == 1500, "\(s)")
        }
        for s in ["set autoplay false", "set autoplay.enabled false"] {
            let out = try simulate("\(s)\nat 0 probe\n")
            #expect(out.probe(0)?.running == false, "\(s)")
            #expect(out.probe(0)?.nextMs == nil, "\(s)")
        }
        let w = try simulate("set carousel.wrap false\nat 100 command goto 4\nat 350 probe\n")
        #expect(w.probe(350)?.offset.isClose(2, 1e-6) == true)
        // double_tap off: the tap selects at the lift (the script ends there).
        let s = try simulate("set input.touch_slop 30\nset autoplay false\nset zoom.double_tap false\nat 100 down 640 400\nat 150 move 615 400\nat 200 up\n")
        #expect(s.events("didSelectItem").count == 1)
    }

    @Test("comments, blank lines and surrounding whitespace are accepted")
    func commentsAndBlanks() throws {
        let out = try simulate("""
        # a script

           size 1280x800
        images 4   
        \tat 0 probe
        # end
        """)
        #expect(out.probe(0)?.offset == 0)
    }

    @Test("steps at the same time are allowed and run in order")
    func sameTime() throws {
        let out = try simulate("""
        set autoplay false
        at 100 down 640 400
        at 100 probe
        at 100 up
        at 100 probe
        """)
        #expect(out.probes.count == 2)
        #expect(out.probes.first?.state == "tracking")
        #expect(out.probes.last?.state == "idle")
    }

    @Test("a config passed as base applies before the script's set lines")
    func baseConfiguration() throws {
        let base = try Configuration.parse("[autoplay]\ninterval = 1.5\n[carousel]\nwrap = false\n", file: "test.ini")
        let out = try simulate("at 0 probe\n", base: base)
        #expect(out.probe(0)?.nextMs == 1500)
        let over = try simulate("set interval 2\nat 0 probe\n", base: base)
        #expect(over.probe(0)?.nextMs == 2000)
        // wrap = false from the base: goto 4 goes straight through 2.
        let g = try simulate("set autoplay false\nat 100 command goto 4\nat 350 probe\n", base: base)
        #expect(g.probe(350)?.offset.isClose(2, 1e-6) == true)
    }
}
