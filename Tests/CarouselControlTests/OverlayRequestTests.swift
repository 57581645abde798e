// `overlay text TEXT` and `overlay clear`: the words, the text's quoting, and
// the line a client sends back to the same request.

import Testing
@testable import CarouselControl
import CarouselPushedTextWords

@Suite("ControlRequest: overlay text and clear")
struct OverlayRequestTests {
    func parsed(_ line: String) -> ControlRequest? { try? ControlRequest.parse(line: line).get() }

    func error(_ line: String) -> String? {
        if case let .failure(e) = ControlRequest.parse(line: line) { return e.message }
        return nil
    }

    @Test func theTextIsTheRestOfTheLine() {
        #expect(parsed("overlay text Sunny  21 °C ") == .declared(PushedTextWords.text("Sunny  21 °C")))
        #expect(parsed("overlay\ttext   مرحبا") == .declared(PushedTextWords.text("مرحبا")))
        #expect(parsed(#"overlay text Sunny\nRain"#) == .declared(PushedTextWords.text(#"Sunny\nRain"#)), "\\n is the text's, read as a line end later")
        #expect(parsed("overlay text") == .declared(PushedTextWords.text("")), "empty: the daemon clears")
        #expect(parsed("overlay clear") == .declared(PushedTextWords.clear))
    }

    @Test func aQuotedTextIsAJSONString() {
        #expect(parsed(#"overlay text "Sunny 21 °C\nRain \"later\"""#) == .declared(PushedTextWords.text("Sunny 21 °C\nRain \"later\"")))
        #expect(parsed(#"overlay text """#) == .declared(PushedTextWords.text("")))
        #expect(error(#"overlay text "a"b""#)?.hasPrefix("overlay text: a text in double quotes is read as a JSON string") == true)
    }

    @Test(arguments: ["Sunny 21 °C", "line one\nline two", "\"quoted\"", "", " spaced ", "tab\there", "back\\slash\\n"])
    func theLineIsReadBackAsTheSameRequest(text: String) {
        let request = ControlRequest.declared(PushedTextWords.text(text))
        #expect(parsed(request.line) == request, "\(request.line)")
        #expect(ControlRequest.declared(PushedTextWords.clear).line == "overlay clear")
    }

    @Test func errorsSayTheUsage() {
        #expect(error("overlay") == "overlay needs text or clear (usage: overlay text <text>|clear), got nothing")
        #expect(error("overlay show x") == "overlay needs text or clear (usage: overlay text <text>|clear), got 'show x'")
        #expect(error("overlay clear now") == "overlay clear takes no arguments, got 'now'")
        let long = String(repeating: "x", count: PushedTextWords.maximumText + 1)
        #expect(error("overlay text " + long)?.hasPrefix("overlay text takes at most 4096 bytes") == true)
        #expect(ControlRequest.usage["overlay"] == "overlay text <text>|clear")
        #expect(ControlRequest.commandNames.contains("overlay"))
    }
}
