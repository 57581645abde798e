import Testing
@testable import CarouselInput

// The real libinput and udev, on a seat no device belongs to: nothing is
// opened, whatever input devices the machine running the tests has.
@Suite struct InputContextTests {
    static let emptySeat = "carousel-test-no-such-seat"

    @Test func emptySeatDispatchesNothingWithoutBlocking() throws {
        let context = try InputContext(seat: Self.emptySeat, panelSize: InputPanelSize(width: 800, height: 480))
        #expect(context.fileDescriptor >= 0)
        #expect(context.seat == Self.emptySeat)
        #expect(try context.dispatch() == [])
        #expect(try context.dispatch() == [])
        #expect(context.currentDevices.isEmpty)
    }

    @Test func calibrationNeedsSixFiniteNumbers() throws {
        let context = try InputContext(seat: Self.emptySeat)
        #expect(throws: InputError.invalidCalibration(count: 5)) { try context.setCalibration([1, 0, 0, 0, 1]) }
        #expect(throws: InputError.invalidCalibration(count: 5)) { try context.setCalibration([1, 0, .nan, 0, 1, 0]) }
        #expect(context.calibration == nil)
        try context.setCalibration([0, 1, 0, 1, 0, 0])
        #expect(context.calibration == [0, 1, 0, 1, 0, 0])
        try context.setCalibration(nil)
        #expect(context.calibration == nil)
    }

    @Test func suspendAndResume() throws {
        let context = try InputContext(seat: Self.emptySeat)
        context.suspend()
        #expect(try context.dispatch() == [])
        try context.resume()
        #expect(try context.dispatch() == [])
    }

    @Test func libinputMessagesReachTheHandler() throws {
        // libinput refuses seat names over 256 characters with a "client bug"
        // message at error level: formatted by the C shim from libinput's
        // va_list, it must arrive here whole, without its newline.
        final class Lines { var all: [(InputLogPriority, String)] = [] }
        let lines = Lines()
        let seat = String(repeating: "s", count: 300)
        #expect(throws: InputError.seatAssignmentFailed(seat: seat)) {
            _ = try InputContext(seat: seat) { lines.all.append(($0, $1)) }
        }
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.0 == .error)
        #expect(lines.all.first?.1.contains("limited to 256 characters.") == true)
        #expect(lines.all.first?.1.hasSuffix("\n") == false)
    }

    @Test func logPriorityIsKept() throws {
        let context = try InputContext(seat: Self.emptySeat, logPriority: .debug)
        #expect(context.logPriority == .debug)
        context.logPriority = .info
        #expect(context.logPriority == .info)
    }

    @Test func probeOfEmptySeat() throws {
        #expect(try InputProbe.list(seat: Self.emptySeat).isEmpty)
        #expect(InputProbe.emptySeatHint(seat: Self.emptySeat).contains("ID_SEAT=\(Self.emptySeat)"))
    }
}
