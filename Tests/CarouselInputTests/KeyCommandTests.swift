import Testing
@testable import CarouselInput

// Key codes written out from linux/input-event-codes.h, not taken from the
// code under test, so that a wrong import would show.
@Suite struct KeyCommandTests {
    @Test func arrowsAndPagesMove() {
        #expect(KeyCommand(keyCode: 105) == .previous)  // KEY_LEFT
        #expect(KeyCommand(keyCode: 106) == .next)      // KEY_RIGHT
        #expect(KeyCommand(keyCode: 103) == .previous)  // KEY_UP
        #expect(KeyCommand(keyCode: 108) == .next)      // KEY_DOWN
        #expect(KeyCommand(keyCode: 104) == .previous)  // KEY_PAGEUP
        #expect(KeyCommand(keyCode: 109) == .next)      // KEY_PAGEDOWN
    }

    @Test func homeEndJump() {
        #expect(KeyCommand(keyCode: 102) == .first)  // KEY_HOME
        #expect(KeyCommand(keyCode: 107) == .last)   // KEY_END
    }

    @Test func spaceAndRemotePlayPauseToggle() {
        #expect(KeyCommand(keyCode: 57) == .togglePause)   // KEY_SPACE
        #expect(KeyCommand(keyCode: 164) == .togglePause)  // KEY_PLAYPAUSE
    }

    @Test func remoteTrackKeysMove() {
        #expect(KeyCommand(keyCode: 163) == .next)      // KEY_NEXTSONG
        #expect(KeyCommand(keyCode: 165) == .previous)  // KEY_PREVIOUSSONG
    }

    @Test func otherKeysMeanNothing() {
        for code: UInt32 in [0, 1, 28, 30, 113, 0x110, 0x14a, 0x2ff, UInt32.max] {  // RESERVED, ESC, ENTER, A, MUTE, BTN_LEFT, BTN_TOUCH
            #expect(KeyCommand(keyCode: code) == nil)
        }
        #expect(KeyCommand.table.count == 15)
    }

    @Test func remotePlayAndPauseKeys() {
        #expect(KeyCommand(keyCode: 207) == .play)   // KEY_PLAY
        #expect(KeyCommand(keyCode: 119) == .pause)  // KEY_PAUSE
        #expect(KeyCommand(keyCode: 166) == .pause)  // KEY_STOPCD
        #expect(KeyCommand.play.command == .play)
        #expect(KeyCommand.pause.command == .pause)
    }

    @Test func onlyPressesCommand() {
        #expect(KeyCommand(InputEvent.key(code: 106, pressed: true, time: 1)) == .next)
        #expect(KeyCommand(InputEvent.key(code: 106, pressed: false, time: 2)) == nil)
        #expect(KeyCommand(InputEvent.pointerButton(button: 106, pressed: true, time: 3)) == nil)
        #expect(KeyCommand(InputEvent.touchFrame(time: 4)) == nil)
    }

    @Test func everyCommandHasAKey() {
        #expect(Set(KeyCommand.table.values) == Set(KeyCommand.allCases))
    }
}
