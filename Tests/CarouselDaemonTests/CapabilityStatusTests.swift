// The status fields the capabilities declare (StatusWords) are the ones the
// running daemon answers with: each declared field is in `status`, and the
// services add none that no capability declared.

import CarouselCapabilities
import CarouselPlatform
import Testing
import CarouselDaemon

@Suite("capabilities' status fields") struct CapabilityStatusTests {
    @Test func everyDeclaredFieldIsAnsweredAndNoUndeclaredOneIsAdded() throws {
        let d = try OffscreenDaemon(ini: "[power]\npresence = key:KEY_F13\n")
        d.showFirstPicture()
        let declared = Capabilities.all.flatMap(\.status).map(\.name)
        #expect(declared.sorted() == ["ken_burns", "overlay", "pairing", "presence", "video"])
        let status = d.daemon.status()
        for name in declared { #expect(status[name] != nil, "status lacks \(name)") }
        let fromServices = d.daemon.servicesStatus(now: d.now)
        #expect(!fromServices.isEmpty)
        #expect(Set(fromServices.keys).isSubset(of: Set(declared)), "\(fromServices.keys.sorted())")
    }
}
