import CarouselCore
import Testing
@testable import CarouselControl

@Suite("ControlRequest: the request line grammar")
struct RequestTests {
    func parsed(_ line: String) -> ControlRequest? { try? ControlRequest.parse(line: line).get() }

    func error(_ line: String) -> String? {
        if case let .failure(e) = ControlRequest.parse(line: line) { return e.message }
        return nil
    }

    @Test("every command without arguments", arguments: [
        ("next", ControlRequest.next), ("prev", .prev), ("pause", .pause), ("resume", .resume),
        ("status", .status), ("reload", .reload), ("list", .list),
        ("version", .version), ("help", .help),
    ])
    func bare(line: String, request: ControlRequest) {
        #expect(parsed(line) == request)
        #expect(parsed("  \(line)\t ") == request)
        #expect(parsed("\(line)\r") == request, "a telnet client's CR is ignored")
        #expect(request.line == line)
        #expect(error("\(line) extra") == "\(line) takes no arguments, got 'extra'")
    }

    @Test("subscribe, or subscribe changes (no per-frame events); nothing else after it")
    func subscribe() {
        #expect(parsed("subscribe") == .subscribe)
        #expect(parsed("  subscribe\t ") == .subscribe)
        #expect(parsed("subscribe\r") == .subscribe, "a telnet client's CR is ignored")
        #expect(ControlRequest.subscribe.line == "subscribe")
        #expect(parsed("subscribe changes") == .subscribeChanges)
        #expect(ControlRequest.subscribeChanges.line == "subscribe changes")
        #expect(error("subscribe extra") == "subscribe takes nothing, or changes (no per-frame events), got 'extra'")
        #expect(error("subscribe changes now") != nil)
    }

    @Test("keep KEY VALUE and forget KEY, with the grant their key needs")
    func keepAndForget() {
        #expect(parsed("keep autoplay.interval 9") == .keep(key: "autoplay.interval", value: "9"))
        #expect(parsed("keep overlay.clock h:MM am") == .keep(key: "overlay.clock", value: "h:MM am"))
        #expect(ControlRequest.keep(key: "interval", value: "9").line == "keep interval 9")
        #expect(parsed("forget interval") == .forget(key: "interval"))
        #expect(ControlRequest.forget(key: "interval").line == "forget interval")
        #expect(error("keep interval") == "keep needs a key and a value (usage: keep <key> <value>)")
        #expect(error("forget") == "forget needs one key (usage: forget <key>)")
        #expect(error("forget a b") == "forget needs one key (usage: forget <key>)")
        let needs: (String) -> Capability? = { $0 == "images.path" ? .administer : nil }
        #expect(ControlRequest.keep(key: "images.path", value: "/x").capability(keyCapability: needs) == .administer)
        #expect(ControlRequest.forget(key: "images.path").capability(keyCapability: needs) == .administer)
        #expect(ControlRequest.keep(key: "interval", value: "9").capability(keyCapability: needs) == .tune)
    }

    @Test("goto with and without a duration")
    func goto() {
        #expect(parsed("goto 3") == .goto(index: 3, milliseconds: nil))
        #expect(parsed("goto 0 250") == .goto(index: 0, milliseconds: 250))
        #expect(parsed("goto\t12   0") == .goto(index: 12, milliseconds: 0))
        #expect(parsed("goto 7 60000") == .goto(index: 7, milliseconds: 60000))
        #expect(ControlRequest.goto(index: 3, milliseconds: 250).line == "goto 3 250")
        #expect(ControlRequest.goto(index: 3, milliseconds: nil).line == "goto 3")
    }

    @Test("goto's errors name what is wrong")
    func gotoErrors() {
        #expect(error("goto") == "goto needs an item index (usage: goto <index> [<ms>])")
        #expect(error("goto x") == "goto needs an item index, got 'x'")
        #expect(error("goto 1.5") == "goto needs an item index, got '1.5'")
        #expect(error("goto -1") == "goto needs an item index of 0 or more (the first item is 0), got '-1'")
        #expect(error("goto 2 fast") == "goto's duration must be a whole number of milliseconds, got 'fast'")
        #expect(error("goto 2 -5") == "goto's duration must be a whole number of milliseconds, got '-5'")
        #expect(error("goto 2 60001") == "goto's duration is in milliseconds, at most 60000, got '60001'")
        #expect(error("goto 2 100 now") == "goto takes an index and an optional duration, got extra 'now'")
        #expect(error("goto 99999999999999999999") == "goto needs an item index, got '99999999999999999999'")
    }

    @Test("display takes on or off")
    func display() {
        #expect(parsed("display on") == .display(.on))
        #expect(parsed("display\toff ") == .display(.off))
        #expect(ControlRequest.display(.off).line == "display off")
        #expect(parsed("display auto") == .display(.auto))
        #expect(error("display") == "display needs on, off or auto (usage: display on|off|auto), got nothing")
        #expect(error("display dim") == "display needs on, off or auto (usage: display on|off|auto), got 'dim'")
        #expect(error("display on now") == "display needs on, off or auto (usage: display on|off|auto), got 'on now'")
        #expect(ControlRequest.display(.on).command == nil)
    }

    @Test("set keeps the rest of the line as the value")
    func set() {
        #expect(parsed("set autoplay.interval 5s") == .set(key: "autoplay.interval", value: "5s"))
        #expect(parsed("set caption  Summer  2024 ") == .set(key: "caption", value: "Summer  2024"))
        #expect(ControlRequest.set(key: "a", value: "b c").line == "set a b c")
        #expect(error("set") == "set needs a key and a value (usage: set <key> <value>)")
        #expect(error("set autoplay.interval") == "set needs a key and a value (usage: set <key> <value>)")
    }

    @Test("screenshot needs an absolute .png path")
    func screenshot() {
        #expect(parsed("screenshot /tmp/shot.png") == .screenshot(path: "/tmp/shot.png"))
        #expect(parsed("screenshot /tmp/my shot.PNG") == .screenshot(path: "/tmp/my shot.PNG"))
        #expect(ControlRequest.screenshot(path: "/a.png").line == "screenshot /a.png")
        // Without a path: into the file sent with the line (SCM_RIGHTS), which
        // only the daemon can check; carouselctl always sends one.
        #expect(parsed("screenshot") == .screenshot(path: nil))
        #expect(ControlRequest.screenshot(path: nil).line == "screenshot")
        #expect(error("screenshot shot.png")
            == "screenshot needs an absolute path, got 'shot.png' (the daemon does not share your working directory)")
        #expect(error("screenshot /tmp/shot.jpg") == "screenshot writes PNG: the path must end in .png, got '/tmp/shot.jpg'")
        // `raw`: the pixels into the file sent (a path is absolute, so the word is never one).
        #expect(parsed("screenshot raw") == .screenshotPixels)
        #expect(ControlRequest.screenshotPixels.line == "screenshot raw")
        #expect(error("screenshot raw extra") == "screenshot needs an absolute path, got 'raw extra' (the daemon does not share your working directory)")
    }

    @Test("brightness takes a percent from 1 to 100")
    func brightness() {
        #expect(parsed("brightness 40") == .brightness(40))
        #expect(parsed("brightness\t100 ") == .brightness(100))
        #expect(ControlRequest.brightness(7).line == "brightness 7")
        #expect(ControlRequest.brightness(7).command == nil)
        for bad in ["brightness", "brightness 0", "brightness 101", "brightness 50%", "brightness 5 6", "brightness -3"] {
            #expect(error(bad)?.hasPrefix("brightness needs a level from 1 to 100") == true, "\(bad)")
        }
    }

    @Test("zoom SCALE and zoom reset")
    func zoom() {
        #expect(parsed("zoom 2.5") == .zoom(scale: 2.5))
        #expect(parsed("zoom\t1 ") == .zoom(scale: 1))
        #expect(parsed("zoom reset") == .zoom(scale: nil))
        #expect(ControlRequest.zoom(scale: 2.5).line == "zoom 2.5")
        #expect(ControlRequest.zoom(scale: nil).line == "zoom reset")
        #expect(ControlRequest.zoom(scale: 3).command == .zoom(scale: 3))
        #expect(ControlRequest.zoom(scale: nil).command == .zoom(scale: 1))
        for bad in ["zoom", "zoom 0.5", "zoom 17", "zoom 2x", "zoom 2 3", "zoom nan", "zoom reset now", "zoom inf"] {
            #expect(error(bad)?.hasPrefix("zoom needs a scale from 1 to 16 or reset") == true, "\(bad)")
        }
    }

    @Test("unknown and empty requests list the commands")
    func unknown() {
        let list = "next, prev, goto, pause, play, resume, status, reload, list, set, keep, forget, hide, unhide, screenshot, display, brightness, zoom, overlay, pair, subscribe, version, help"
        #expect(error("nxt") == "unknown command 'nxt' (try: \(list))")
        #expect(error("NEXT") == "unknown command 'NEXT' (try: \(list))")
        #expect(error("") == "empty request (try: \(list))")
        #expect(error("   \t") == "empty request (try: \(list))")
    }

    @Test("every command has a usage line")
    func usage() {
        for name in ControlRequest.commandNames { #expect(ControlRequest.usage[name] != nil) }
    }
}
