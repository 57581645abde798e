import Testing
@testable import CarouselInput

@Suite struct TouchTrackerTests {
    @Test func liftedTouchesAreNotCancelled() {
        var t = TouchTracker()
        t.down(slot: 0, device: 1)
        t.ended(slot: 0, device: 1)
        #expect(t.removeDevice(1) == [])
        #expect(t.isEmpty)
    }

    @Test func removalReturnsTouchesStillDown() {
        var t = TouchTracker()
        t.down(slot: 2, device: 1)
        t.down(slot: 0, device: 1)
        t.down(slot: 1, device: 2)
        t.ended(slot: 0, device: 1)
        t.down(slot: 3, device: 1)
        #expect(t.activeSlots(of: 1) == [2, 3])
        #expect(t.removeDevice(1) == [2, 3])
        #expect(t.removeDevice(1) == [])
        #expect(t.activeSlots(of: 2) == [1])
        #expect(!t.isEmpty)
    }

    @Test func libinputCancelBeforeRemovalLeavesNothing() {
        // libinput 1.22 cancels a removed device's touches itself, then removes it.
        var t = TouchTracker()
        t.down(slot: 0, device: 7)
        t.ended(slot: 0, device: 7)  // TOUCH_CANCEL
        #expect(t.removeDevice(7) == [])
    }

    @Test func endOfUnknownTouchIsHarmless() {
        var t = TouchTracker()
        t.ended(slot: 5, device: 3)
        #expect(t.isEmpty)
    }
}
