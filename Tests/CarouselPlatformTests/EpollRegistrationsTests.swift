// EpollRegistrations, the one way a source's descriptors are kept in step
// with the loop's epoll set: on real eventfds and a real epoll set.

import CarouselPlatform
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Epoll registrations kept in step with what a source wants") struct EpollRegistrationsTests {
    /// The tokens epoll reports as ready now.
    private func ready(_ epoll: Epoll) throws -> [UInt64] {
        try epoll.wait(timeoutMilliseconds: 0).map(\.token).sorted()
    }

    @Test func newInterestsAreAddedChangedOnesModifiedAndDroppedOnesForgotten() throws {
        let epoll = try Epoll()
        let a = try Wakeup(), b = try Wakeup()
        var r = EpollRegistrations()
        try r.synchronize([EpollInterest(fd: a.fd.raw), EpollInterest(fd: b.fd.raw)], with: epoll, token: { UInt64($0) })
        #expect(r.descriptors == [a.fd.raw, b.fd.raw].sorted())
        a.signal()
        #expect(try ready(epoll) == [UInt64(a.fd.raw)])
        // Interested in writing only: a readable eventfd no longer reports.
        try r.synchronize([EpollInterest(fd: a.fd.raw, events: EpollInterest.writable), EpollInterest(fd: b.fd.raw)],
                          with: epoll, token: { UInt64($0) })
        a.acknowledge()
        #expect(try ready(epoll) == [UInt64(a.fd.raw)], "an eventfd is always writable")
        try r.synchronize([EpollInterest(fd: b.fd.raw)], with: epoll, token: { UInt64($0) }, stillOpen: { $0 == a.fd.raw })
        #expect(r.descriptors == [b.fd.raw])
        #expect(try ready(epoll) == [], "a descriptor still open but no longer wanted was taken out")
    }

    @Test func aDescriptorClosedAndItsNumberReusedIsRegisteredAnew() throws {
        let epoll = try Epoll()
        var r = EpollRegistrations()
        let first = try Wakeup(), second = try Wakeup()
        let number = first.fd.raw
        try r.synchronize([EpollInterest(fd: number, serial: 1)], with: epoll, token: { UInt64($0) + 100 })
        // The number now names another file (as after a close and an open
        // that got the lowest free number): the first eventfd is closed, and
        // the kernel dropped it from the set.
        #expect(dup2(second.fd.raw, number) == number)
        try r.synchronize([EpollInterest(fd: number, serial: 2)], with: epoll, token: { UInt64($0) + 200 })
        second.signal()
        #expect(try ready(epoll) == [UInt64(number) + 200])
    }

    @Test func aDescriptorForgottenWhileStillOpenIsTakenOverWhenWantedAgain() throws {
        let epoll = try Epoll()
        var r = EpollRegistrations()
        let w = try Wakeup()
        try r.synchronize([EpollInterest(fd: w.fd.raw)], with: epoll, token: { _ in 1 })
        // The source stopped listing it without saying it stays open: forgotten, still in the kernel's set.
        try r.synchronize([], with: epoll, token: { _ in 1 })
        try r.synchronize([EpollInterest(fd: w.fd.raw)], with: epoll, token: { _ in 2 })
        w.signal()
        #expect(try ready(epoll) == [2], "registered again under the new token, not refused with EEXIST")
    }
}
