import Testing
import CarouselDisplay
@testable import CarouselDRM

@Suite("Connector names as the kernel gives them")
struct ConnectorNameTests {
    @Test("type name, a dash, the type id")
    func kernelNames() {
        // DRM_MODE_CONNECTOR_HDMIA 11, _DSI 16, _VIRTUAL 15, _eDP 14, _DisplayPort 10, _VGA 1.
        #expect(DRMConnectorName.name(type: 11, typeID: 1) == "HDMI-A-1")
        #expect(DRMConnectorName.name(type: 11, typeID: 2) == "HDMI-A-2")
        #expect(DRMConnectorName.name(type: 16, typeID: 1) == "DSI-1")
        #expect(DRMConnectorName.name(type: 15, typeID: 1) == "Virtual-1")
        #expect(DRMConnectorName.name(type: 14, typeID: 1) == "eDP-1")
        #expect(DRMConnectorName.name(type: 10, typeID: 3) == "DP-3")
        #expect(DRMConnectorName.name(type: 1, typeID: 1) == "VGA-1")
        #expect(DRMConnectorName.name(type: 0, typeID: 1) == "Unknown-1")
        #expect(DRMConnectorName.name(type: 20, typeID: 1) == "USB-1")
    }

    @Test("a connector type newer than the table keeps a name")
    func unknownType() {
        #expect(DRMConnectorName.name(type: 99, typeID: 2) == "Unknown99-2")
    }

    @Test("names from the configuration match regardless of case")
    func matching() {
        #expect(DRMConnectorName.matches("hdmi-a-1", "HDMI-A-1"))
        #expect(!DRMConnectorName.matches("HDMI-A-2", "HDMI-A-1"))
        #expect(!DRMConnectorName.matches("HDMI-A", "HDMI-A-1"))
    }
}

@Suite("Mode requests")
struct ModeRequestTests {
    @Test("a request prints as WxH[@Hz]")
    func description() {
        #expect(DRMModeRequest(width: 800, height: 480, refresh: 75).description == "800x480@75")
        #expect(DRMModeRequest(width: 1920, height: 1080).description == "1920x1080")
    }
}

@Suite("Choosing a mode")
struct ModeChoiceTests {
    let modes = [
        DRMMode(width: 1920, height: 1080, refreshMillihertz: 60000, preferred: true),
        DRMMode(width: 1920, height: 1080, refreshMillihertz: 59940),
        DRMMode(width: 1920, height: 1080, refreshMillihertz: 50000),
        DRMMode(width: 1920, height: 1080, refreshMillihertz: 60000, interlaced: true),
        DRMMode(width: 1280, height: 720, refreshMillihertz: 50000),
        DRMMode(width: 1280, height: 720, refreshMillihertz: 60000),
        DRMMode(width: 1024, height: 768, refreshMillihertz: 75029),
    ]

    @Test("made-up timings give the refresh asked for")
    func timings() {
        #expect(modes[0].refreshMillihertz == 60000)
        #expect(modes[1].refreshMillihertz == 59940)
        #expect(modes[1].refresh == 60)
        #expect(modes[6].refresh == 75)
        #expect(modes[3].refreshMillihertz == 60000)
    }

    @Test("no request: the preferred mode, else the first")
    func preferred() {
        #expect(DRMMode.choose(nil, from: modes) == modes[0])
        let unmarked = [modes[4], modes[5]]
        #expect(DRMMode.choose(nil, from: unmarked) == modes[4])
        #expect(DRMMode.choose(nil, from: []) == nil)
    }

    @Test("a size alone: preferred, then progressive, then fastest")
    func bySize() {
        #expect(DRMMode.choose(DRMModeRequest(width: 1920, height: 1080), from: modes) == modes[0])
        #expect(DRMMode.choose(DRMModeRequest(width: 1280, height: 720), from: modes) == modes[5])
        // Interlaced loses to progressive even when preferred.
        let i = [DRMMode(width: 1920, height: 1080, preferred: true, interlaced: true),
                 DRMMode(width: 1920, height: 1080, refreshMillihertz: 30000)]
        #expect(DRMMode.choose(DRMModeRequest(width: 1920, height: 1080), from: i) == i[1])
    }

    @Test("a size and a refresh")
    func byRefresh() {
        #expect(DRMMode.choose(DRMModeRequest(width: 1920, height: 1080, refresh: 50), from: modes) == modes[2])
        #expect(DRMMode.choose(DRMModeRequest(width: 1280, height: 720, refresh: 50), from: modes) == modes[4])
        #expect(DRMMode.choose(DRMModeRequest(width: 1024, height: 768, refresh: 75), from: modes) == modes[6])
        // 60 Hz and 59.94 Hz both round to 60: the preferred one wins.
        #expect(DRMMode.choose(DRMModeRequest(width: 1920, height: 1080, refresh: 60), from: modes) == modes[0])
    }

    @Test("a mode there is not")
    func missing() {
        #expect(DRMMode.choose(DRMModeRequest(width: 800, height: 600), from: modes) == nil)
        #expect(DRMMode.choose(DRMModeRequest(width: 1024, height: 768, refresh: 60), from: modes) == nil)
    }

    @Test("names and the listing for hints")
    func names() {
        #expect(modes[0].name == "1920x1080@60")
        #expect(modes[3].name == "1920x1080i@60")
        #expect(DRMMode.listing(modes) == ["1920x1080@60*", "1920x1080@50", "1920x1080i@60", "1280x720@50",
                                           "1280x720@60", "1024x768@75"])
    }

    @Test("equality is about timings, not the preferred mark")
    func equality() {
        #expect(DRMMode(width: 800, height: 600, preferred: true) == DRMMode(width: 800, height: 600))
        #expect(DRMMode(width: 800, height: 600) != DRMMode(width: 800, height: 480))
    }
}

@Suite("Panel orientation names")
struct PanelOrientationTests {
    @Test("the kernel's enum names")
    func names() {
        #expect(PanelOrientation(drmName: "Normal") == .normal)
        #expect(PanelOrientation(drmName: "Upside Down") == .upsideDown)
        #expect(PanelOrientation(drmName: "Left Side Up") == .leftSideUp)
        #expect(PanelOrientation(drmName: "Right Side Up") == .rightSideUp)
        #expect(PanelOrientation(drmName: "Sideways") == nil)
    }
}
