import CarouselPlatform
import Testing
@testable import CarouselControl

@Suite("JSON: replies and events as one line")
struct JSONTests {
    @Test("strings escape quotes, backslashes and control characters")
    func escaping() {
        #expect(JSONValue.string(#"say "hi""#).encoded == #""say \"hi\"""#)
        #expect(JSONValue.string(#"C:\dir"#).encoded == #""C:\\dir""#)
        #expect(JSONValue.string("a\nb\rc\td").encoded == #""a\nb\rc\td""#)
        #expect(JSONValue.string("\u{08}\u{0C}").encoded == #""\b\f""#)
        #expect(JSONValue.string("\u{00}\u{01}\u{1F}").encoded == #""\u0000\u0001\u001f""#)
        #expect(JSONValue.string("/a/b").encoded == #""/a/b""#, "slashes need no escape")
    }

    @Test("non-ASCII passes through as UTF-8")
    func unicode() {
        #expect(JSONValue.string("Ålesund 北京 🎠").encoded == "\"Ålesund 北京 🎠\"")
        #expect(JSONValue.string("e\u{301}").encoded == "\"e\u{301}\"")
    }

    @Test("numbers, booleans, null, arrays, objects with sorted keys")
    func values() {
        #expect(JSONValue.int(-42).encoded == "-42")
        #expect(JSONValue.double(0.5).encoded == "0.5")
        #expect(JSONValue.double(3).encoded == "3")
        #expect(JSONValue.double(.nan).encoded == "null")
        #expect(JSONValue.double(.infinity).encoded == "null")
        #expect(JSONValue.bool(false).encoded == "false")
        #expect(JSONValue.null.encoded == "null")
        let value: JSONValue = ["b": [1, "two", .null], "a": ["x": true]]
        #expect(value.encoded == #"{"a":{"x":true},"b":[1,"two",null]}"#)
        #expect(JSONValue.array([]).encoded == "[]")
        #expect(JSONValue.object([:]).encoded == "{}")
    }

    @Test("replies put ok first")
    func replies() {
        #expect(ControlReply.ok.line == #"{"ok":true}"#)
        #expect(ControlReply.ok(["index": 3, "count": 10, "ok": false]).line == #"{"ok":true,"count":10,"index":3}"#)
        #expect(ControlReply.error("goto needs an item index, got 'x'").line
            == #"{"ok":false,"error":"goto needs an item index, got 'x'"}"#)
        #expect(ControlReply.error("bad \"path\"\n").line == #"{"ok":false,"error":"bad \"path\"\n"}"#)
        #expect(controlEventLine("indexChanged", ["index": 2, "event": "x"]) == #"{"event":"indexChanged","index":2}"#)
    }

    @Test("reading back what was written")
    func roundTrip() {
        let value: JSONValue = ["name": "Å \"q\" \\ \n\u{01} 🎠", "list": [1, -2.5, true, .null, [:]], "n": 1e300]
        #expect(JSONValue.parse(value.encoded) == value)
        #expect(ControlReply(line: ControlReply.ok(["index": 4]).line) == .ok(["index": 4]))
        #expect(ControlReply(line: ControlReply.error("nope").line) == .error("nope"))
        #expect(ControlReply(line: #"{"ok":false}"#) == .error("carouseld refused the request without saying why"))
        #expect(ControlReply(line: "not json") == nil)
        #expect(ControlReply(line: #"{"index":1}"#) == nil)
    }

    @Test("the reader handles escapes and refuses broken text")
    func parsing() {
        #expect(JSONValue.parse(#" {"a" : [ 1 , 2 ] } "#) == ["a": [1, 2]])
        #expect(JSONValue.parse(#""\u00e5\ud83c\udfa0\/""#) == "å🎠/")
        #expect(JSONValue.parse("{") == nil)
        #expect(JSONValue.parse("[1,]") == nil)
        #expect(JSONValue.parse(#""unterminated"#) == nil)
        #expect(JSONValue.parse("\"raw\ncontrol\"") == nil)
        #expect(JSONValue.parse("1 2") == nil)
        #expect(JSONValue.parse(String(repeating: "[", count: 1000)) == nil, "deep nesting is refused, not a crash")
        #expect(JSONValue.parse("7")?.intValue == 7)
        #expect(JSONValue.parse(#"{"s":"x"}"#)?["s"]?.stringValue == "x")
    }
}
