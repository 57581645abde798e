// `[display] backend = fbdev` with a framebuffer that is not there yet (an
// SPI panel whose fbtft driver loads after carouseld at boot): the daemon
// waits for it as it waits for a DRM card, under systemd's eyes. The VM
// test (Tests/VM/e2e_fbdev.py) loads vfb under a waiting daemon and sees the
// picture; here the process's side: the line, the notifications, the exits.

import Foundation
import Testing

@Suite("fbdev: waiting for the framebuffer device", .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
struct FramebufferWaitTests {
    /// A daemon on the display (not offscreen) whose [display] is fbdev at
    /// `device`, its notifications going to `manager`.
    private func daemon(device: String, manager: FakeServiceManager) throws -> RunningDaemon {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[display]\nbackend = fbdev\ndevice = \(device)\n")
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        d.process.arguments = d.process.arguments.map { Array($0.prefix(3)) }  // run --config FILE
        var environment = d.process.environment ?? ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = manager.path
        d.process.environment = environment
        return d
    }

    private func missingDevice() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("fb-\(UUID().uuidString.prefix(8))").path
    }

    @Test func aMissingDeviceIsWaitedForWithTheStartTimeoutExtendedAndSIGTERMEndsTheWait() throws {
        let manager = try FakeServiceManager()
        let device = missingDevice()
        let d = try daemon(device: device, manager: manager)
        try d.start()
        d.waitFor("the waiting line") { $0.contains("<4>display: cannot open \(device): No such file or directory") && $0.contains("; waiting for one\n") }
        // Every round of the wait tells systemd it is still starting.
        manager.waitFor("two extensions") { messages in
            messages.filter { $0.hasPrefix("EXTEND_TIMEOUT_USEC=10000000\nSTATUS=waiting for a display: cannot open \(device)") }.count >= 2
        }
        #expect(d.process.isRunning)
        #expect(d.log.components(separatedBy: "waiting for one").count == 2, "the wait is logged once: \(d.log)")
        #expect(d.stop() == 0)
        #expect(d.log.contains("<6>stopped while waiting for a display"))
    }

    @Test func aDeviceThatComesButIsNoFramebufferEndsTheWaitWithExitOne() throws {
        let manager = try FakeServiceManager()
        let device = missingDevice()
        let d = try daemon(device: device, manager: manager)
        try d.start()
        d.waitFor("the waiting line") { $0.contains("; waiting for one\n") }
        // Something comes at the path, but not a framebuffer: the wait ends, and what is wrong is said.
        _ = FileManager.default.createFile(atPath: device, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: device) }
        d.process.waitUntilExit()
        #expect(d.process.terminationStatus == 1)
        #expect(d.log.contains("<3>display: \(device) is not a framebuffer device: FBIOGET_VSCREENINFO"), "\(d.log)")
        _ = d.stop()
    }
}
