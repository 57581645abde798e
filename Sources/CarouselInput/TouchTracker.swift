/// Which touches are down on which device, so that a device that goes away
/// in the middle of a touch never leaves a finger down for ever.
///
/// libinput cancels a device's touches itself when it removes or suspends
/// the device (`fallback_return_to_neutral_state`): checked with libinput
/// 1.22 (Debian 12) on a uinput touchscreen destroyed with a finger down in
/// QEMU, which gives TOUCH_CANCEL, TOUCH_FRAME, then DEVICE_REMOVED, so
/// normally nothing is left here when the removal arrives. Older releases
/// lifted the touches (TOUCH_UP) instead, and libinput sends nothing at all
/// when it cannot read the clock (`libinput_now` failing): whatever is still
/// down then is cancelled by `InputContext` before it reports the removal.
struct TouchTracker {
    /// Device (our id) to the seat slots it holds down.
    private var slots: [Int: Set<Int>] = [:]

    /// The seat slots of `device` still down, in ascending order.
    func activeSlots(of device: Int) -> [Int] { (slots[device] ?? []).sorted() }

    var isEmpty: Bool { slots.values.allSatisfy(\.isEmpty) }

    mutating func down(slot: Int, device: Int) {
        slots[device, default: []].insert(slot)
    }

    /// A lift or a cancel.
    mutating func ended(slot: Int, device: Int) {
        slots[device]?.remove(slot)
        if slots[device]?.isEmpty == true { slots[device] = nil }
    }

    /// Forgets `device` and returns the slots it still held down, ascending:
    /// the touches to cancel.
    mutating func removeDevice(_ device: Int) -> [Int] {
        defer { slots[device] = nil }
        return activeSlots(of: device)
    }
}
