import Testing
@testable import CarouselInput

@Suite struct InputEventTests {
    @Test func touchDownLine() {
        let line = InputEvent.touchDown(slot: 0, x: 640.5, y: 400, time: 1_234_567).jsonLine(now: 9)
        #expect(line == #"{"t":1234567,"type":"touchDown","slot":0,"x":640.5,"y":400}"#)
    }

    @Test func deviceLineUsesNowAndEscapesNames() {
        let info = InputDeviceInfo(id: 3, name: "Touch \"Panel\"\\\n\u{1}", sysname: "event5", devnode: "/dev/input/event5",
                                   capabilities: [.touch, .keyboard], physicalSize: .init(width: 217, height: 135.5))
        let line = InputEvent.deviceAdded(info).jsonLine(now: 42)
        #expect(line == #"{"t":42,"type":"deviceAdded","id":3,"name":"Touch \"Panel\"\\\n\u0001","sysname":"event5","devnode":"/dev/input/event5","capabilities":["touch","keyboard"],"width_mm":217,"height_mm":135.5}"#)
    }

    @Test func otherLines() {
        #expect(InputEvent.touchUp(slot: 1, time: 5).jsonLine(now: 0) == #"{"t":5,"type":"touchUp","slot":1}"#)
        #expect(InputEvent.touchCancel(slot: 2, time: 6).jsonLine(now: 0) == #"{"t":6,"type":"touchCancel","slot":2}"#)
        #expect(InputEvent.touchFrame(time: 7).jsonLine(now: 0) == #"{"t":7,"type":"touchFrame"}"#)
        #expect(InputEvent.key(code: 57, pressed: false, time: 8).jsonLine(now: 0) == #"{"t":8,"type":"key","code":57,"pressed":false}"#)
        #expect(InputEvent.pointerButton(button: 272, pressed: true, time: 9).jsonLine(now: 0)
                == #"{"t":9,"type":"pointerButton","button":272,"pressed":true}"#)
        #expect(InputEvent.pointerMotion(dx: -1.25, dy: 0, time: 10).jsonLine(now: 0)
                == #"{"t":10,"type":"pointerMotion","dx":-1.25,"dy":0}"#)
        #expect(InputEvent.pointerMotionAbsolute(x: .nan, y: 3, time: 11).jsonLine(now: 0)
                == #"{"t":11,"type":"pointerMotionAbsolute","x":null,"y":3}"#)
        let bare = InputDeviceInfo(id: 1, name: "kbd", sysname: "event0", capabilities: [.keyboard])
        #expect(InputEvent.deviceRemoved(bare).jsonLine(now: 12)
                == #"{"t":12,"type":"deviceRemoved","id":1,"name":"kbd","sysname":"event0","capabilities":["keyboard"]}"#)
    }

    @Test func timeStamps() {
        #expect(InputEvent.touchMotion(slot: 0, x: 1, y: 2, time: 77).time == 77)
        #expect(InputEvent.deviceAdded(InputDeviceInfo(id: 1, name: "", sysname: "", capabilities: [])).time == nil)
    }

    @Test func panelSizeParsing() {
        #expect(InputPanelSize(parsing: "1280x800") == InputPanelSize(width: 1280, height: 800))
        #expect(InputPanelSize(parsing: "1920X1080") == InputPanelSize(width: 1920, height: 1080))
        for bad in ["", "x", "1280", "1280x", "x800", "0x800", "1280x0", "-1x5", "1280x800x2", "12.5x8", "70000x10", " 1x1", "1x1 "] {
            #expect(InputPanelSize(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func capabilityNames() {
        #expect(InputCapabilities([.keyboard, .touch, .pointer]).names == ["touch", "pointer", "keyboard"])
        #expect(InputCapabilities().names == [])
    }

    @Test func logPriorities() {
        #expect(InputLogPriority(libinputPriority: 10) == .debug)
        #expect(InputLogPriority(libinputPriority: 20) == .info)
        #expect(InputLogPriority(libinputPriority: 30) == .error)
        #expect(InputLogPriority(libinputPriority: 40) == .error)
        #expect(InputLog.trimmed("event5 - failed\n") == "event5 - failed")
    }

    @Test func errorsCarryHints() {
        #expect(InputError.seatAssignmentFailed(seat: "seat0").description.contains("systemd-udevd"))
        #expect(InputError.dispatchFailed(errno: 13).description.contains("Maybe you don't have the right permissions?"))
        #expect(InputError.invalidCalibration(count: 5).description.contains("six numbers"))
    }
}
