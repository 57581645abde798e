import Testing
@testable import CarouselDRM

@Suite("What udev's drm events say")
struct HotplugEventTests {
    @Test("a connector change asks to look again; a card's add or remove is told apart by its device node")
    func classification() {
        var e = HotplugMonitor.Events()
        // bochs unbound: the connector's remove (no node), then the card's.
        e.note(action: "remove", hasDeviceNode: false, deviceNumber: 0, hotplug: nil)
        e.note(action: "remove", hasDeviceNode: true, deviceNumber: 0xE200, hotplug: nil)
        #expect(e.removedCards == [0xE200])
        #expect(!e.cardAdded && !e.hotplug)

        var back = HotplugMonitor.Events()
        back.note(action: "add", hasDeviceNode: true, deviceNumber: 0xE200, hotplug: nil)
        back.note(action: "add", hasDeviceNode: false, deviceNumber: 0, hotplug: nil)
        #expect(back.cardAdded && back.removedCards.isEmpty)
        #expect(back.count == 2)

        var plug = HotplugMonitor.Events()
        plug.note(action: "change", hasDeviceNode: true, deviceNumber: 0xE200, hotplug: "1")
        #expect(plug.hotplug && !plug.cardAdded && plug.removedCards.isEmpty)
        #expect(plug != back)
    }
}
