// The daemon room's pieces as units: frame pacing, album state, input
// routing on their own, and the daemon itself on the offscreen display with
// a manual clock (no process, no socket, no signals).

import CarouselAlbum
import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselDaemon
import CarouselDisplay
import CarouselImaging
import CarouselInput
import CarouselInputService
import CarouselPlatform
import CarouselRender
import Foundation
import Testing

@Suite("Frame pacing") struct FramePacerTests {
    @Test func theFirstFrameMayBeDrawnAtOnceThenOnePerPeriod() {
        var pacer = FramePacer(period: 16_667)
        #expect(pacer.mayDraw(at: 5))
        pacer.presented(at: 1_000_000, onScreenLater: false)
        #expect(!pacer.mayDraw(at: 1_000_000))
        #expect(!pacer.mayDraw(at: 1_010_000))
        // Within the 1 ms of slack for timer jitter, the next frame is due.
        #expect(pacer.mayDraw(at: 1_015_667))
        #expect(pacer.nextFrame(after: 1_001_000) == 1_015_667)
        #expect(pacer.nextFrame(after: 1_020_000) == 1_020_000)
    }

    @Test func aFingersMoveIsTimedToTheFrameThatShowsIt() {
        var pacer = FramePacer(period: 16_667)
        pacer.presented(at: 0, onScreenLater: false)
        // Two moves before a frame: the earlier one's wait counts.
        pacer.fingerMoved(at: 10_000)
        pacer.fingerMoved(at: 14_000)
        pacer.presented(at: 20_000, onScreenLater: false)
        pacer.fingerMoved(at: 30_000)
        pacer.presented(at: 38_000, onScreenLater: false)
        // A move no frame showed for half a second is not what the next frame is for.
        pacer.fingerMoved(at: 100_000)
        pacer.presented(at: 700_000, onScreenLater: false)
        #expect(pacer.summary.hasSuffix("a finger's move to the frame showing it 9.0 ms on average, the longest 10.0 ms (2 frames)"),
                "\(pacer.summary)")
    }

    @Test func aFlipInFlightHoldsTheNextFrameUntilItCompletes() {
        var pacer = FramePacer(period: 16_667)
        pacer.presented(at: 0, onScreenLater: true)
        #expect(pacer.framePending)
        #expect(!pacer.mayDraw(at: 1_000_000))
        #expect(pacer.nextFrame(after: 1_000_000) == nil)
        pacer.flipCompleted()
        #expect(pacer.mayDraw(at: 1_000_000))
        pacer.presented(at: 1_000_000, onScreenLater: true)
        // A re-modeset drops the flip in flight: no event will come for it.
        pacer.displayReset()
        #expect(!pacer.framePending)
    }

    @Test func aFailedPresentIsTriedAgainLaterNotOnEveryPass() {
        var pacer = FramePacer(period: 16_667)
        pacer.presentFailed(at: 0)
        #expect(!pacer.mayDraw(at: 500_000))
        #expect(pacer.nextFrame(after: 10) == FramePacer.retryDelay)
        #expect(pacer.mayDraw(at: FramePacer.retryDelay))
        pacer.presented(at: FramePacer.retryDelay, onScreenLater: false)
        #expect(pacer.mayDraw(at: FramePacer.retryDelay + 16_000))
    }

    @Test func theSummaryCountsIntervalsWhileMovingOnly() {
        var pacer = FramePacer(period: 16_667)
        #expect(pacer.summary == "presented 0 frames")
        for t in [0, 16_000, 34_000] { pacer.presented(at: Int64(t), onScreenLater: false) }
        // 500 ms later: a new motion, not a 466 ms frame interval.
        pacer.presented(at: 534_000, onScreenLater: false)
        #expect(pacer.framesPresented == 4)
        #expect(pacer.summary == "presented 4 frames; while moving, one every 17.0 ms on average, the longest gap 18.0 ms")
    }
}

private func entry(_ name: String, inode: UInt64, size: Int64 = 10) -> AlbumEntry {
    AlbumEntry(path: "/p/\(name)", name: name, size: size, mtime: FileTime(seconds: 1, nanoseconds: 0), device: 1, inode: inode)
}

@Suite("Album state") struct AlbumStateTests {
    let five = AlbumState((0..<5).map { entry("\($0).jpg", inode: UInt64($0 + 1)) })

    @Test func prefetchWantsTheScreenThenOneAheadInTheDirectionOfTravelAndOneBehind() {
        #expect(five.wanted(onScreen: [1], current: 1, direction: 1, wrap: false)
            == [PageKey("/p/1.jpg"), PageKey("/p/2.jpg"), PageKey("/p/0.jpg")])
        #expect(five.wanted(onScreen: [1], current: 1, direction: -1, wrap: false)
            == [PageKey("/p/1.jpg"), PageKey("/p/0.jpg"), PageKey("/p/2.jpg")])
        // Across the seam with wrap.
        #expect(five.wanted(onScreen: [0, 4], current: 0, direction: -1, wrap: true)
            == [PageKey("/p/0.jpg"), PageKey("/p/4.jpg"), PageKey("/p/1.jpg")])
        #expect(AlbumState().wanted(onScreen: [0], current: 0, direction: 1, wrap: true).isEmpty)
    }

    @Test func aBrokenFileStaysOutOfLaterListingsUntilItChanges() {
        var album = five
        _ = album.remove(["/p/2.jpg"], current: 0)
        // A rescan lists it again, unchanged: it stays out (no second decode, no second log line).
        _ = album.replace(with: five.entries, current: 0)
        #expect(album.count == 4)
        #expect(album.path(2) == "/p/3.jpg")
        // Rewritten (another size): tried again.
        var changed = five.entries
        changed[2] = entry("2.jpg", inode: 3, size: 99)
        _ = album.replace(with: changed, current: 0)
        #expect(album.count == 5)
        #expect(album.broken.isEmpty)
        // A broken file that is deleted is forgotten.
        _ = album.remove(["/p/4.jpg"], current: 0)
        _ = album.replace(with: Array(five.entries.prefix(4)), current: 0)
        #expect(album.broken.isEmpty)
    }

    @Test func aListingsSkipLineIsLoggedOnceUntilItGoesAway() {
        var album = AlbumState()
        #expect(album.unreportedSkips(["/p/fifo: not a regular file"]) == ["/p/fifo: not a regular file"])
        #expect(album.unreportedSkips(["/p/fifo: not a regular file"]).isEmpty)
        #expect(album.unreportedSkips(["/p/fifo: not a regular file", "/p/x: unreadable"]) == ["/p/x: unreadable"])
        #expect(album.unreportedSkips([]).isEmpty)
        #expect(album.unreportedSkips(["/p/fifo: not a regular file"]) == ["/p/fifo: not a regular file"])
    }

    @Test func whereAMotionComesToRestIsWantedRightAfterTheScreen() {
        // A fling from item 0 heading for item 3 (the model's prefetch effect).
        #expect(five.wanted(onScreen: [0, 1], heading: [3], current: 0, direction: 1, wrap: false)
            == [PageKey("/p/0.jpg"), PageKey("/p/1.jpg"), PageKey("/p/3.jpg")])
        #expect(five.wanted(onScreen: [0], heading: [0, 9], current: 0, direction: 1, wrap: false)
            == [PageKey("/p/0.jpg"), PageKey("/p/1.jpg")])
    }

    @Test func aNewListingKeepsThePictureOnScreenAndNamesStalePixels() {
        var album = five
        var fresh = five.entries
        fresh.insert(entry("00.jpg", inode: 50), at: 0)
        fresh[3] = entry("2.jpg", inode: 99)  // replaced by another file under the same name
        let change = album.replace(with: fresh, current: 2)
        #expect(change.index == 3)
        #expect(album.path(change.index) == "/p/2.jpg")
        #expect(Set(change.stale) == ["/p/2.jpg", "/p/00.jpg"])
        #expect(album.count == 6)
        #expect(album.paths == album.entries.map(\.path))
    }

    @Test func aBrokenFileLeavesAndTheNextPictureTakesItsPlace() {
        var album = five
        let change = album.remove(["/p/2.jpg"], current: 2)
        #expect(album.count == 4)
        #expect(album.path(change.index) == "/p/3.jpg")
        #expect(album.path(9) == nil)
    }
}

@Suite("Input routing") struct InputRouterTests {
    @Test func touchIsMappedFromPanelToLayoutThroughTheRotation() {
        var router = InputRouter(rotation: .clockwise90, panelWidth: 800, panelHeight: 1280, input: InputConfig())
        let expected = Rotation.clockwise90.logical(Point(x: 100, y: 200), panelWidth: 800, panelHeight: 1280)
        #expect(router.route(.touchDown(slot: 3, x: 100, y: 200, time: 42)) == .touch(.down(id: 3, at: expected), time: 42))
        #expect(router.route(.touchUp(slot: 3, time: 50)) == .touch(.up(id: 3), time: 50))
        #expect(router.route(.touchCancel(slot: 3, time: 51)) == .touch(.cancel(id: 3), time: 51))
        #expect(router.route(.touchFrame(time: 52)) == nil)
    }

    @Test func thePointerDragsOnlyWithItsLeftButtonHeld() {
        var router = InputRouter(rotation: .none, panelWidth: 1000, panelHeight: 500, input: InputConfig())
        let id = InputRouter.pointerID
        #expect(router.route(.pointerMotion(dx: 10, dy: 0, time: 1)) == nil)
        #expect(router.route(.pointerButton(button: 0x111, pressed: true, time: 2)) == nil)  // right button
        #expect(router.route(.pointerButton(button: 0x110, pressed: true, time: 3))
            == .touch(.down(id: id, at: Point(x: 510, y: 250)), time: 3))
        #expect(router.route(.pointerMotion(dx: -2000, dy: 0, time: 4)) == .touch(.move(id: id, to: Point(x: 0, y: 250)), time: 4))
        #expect(router.route(.pointerButton(button: 0x110, pressed: false, time: 5)) == .touch(.up(id: id), time: 5))
        var off = InputConfig()
        off.pointer = false
        var ignoring = InputRouter(rotation: .none, panelWidth: 1000, panelHeight: 500, input: off)
        #expect(ignoring.route(.pointerButton(button: 0x110, pressed: true, time: 3)) == nil)
    }

    @Test func keysBecomeTheCarouselsCommandsOnPressOnly() {
        var router = InputRouter(rotation: .none, panelWidth: 10, panelHeight: 10, input: InputConfig())
        #expect(router.route(.key(code: 106, pressed: true, time: 1)) == .command(.next))        // KEY_RIGHT
        #expect(router.route(.key(code: 106, pressed: false, time: 2)) == nil)
        #expect(router.route(.key(code: 57, pressed: true, time: 3)) == .command(.togglePause))  // KEY_SPACE
        #expect(router.route(.key(code: 30, pressed: true, time: 4)) == nil)                     // KEY_A
        var off = InputConfig()
        off.keyboard = false
        router.reconfigure(rotation: .none, panelWidth: 10, panelHeight: 10, input: off)
        #expect(router.route(.key(code: 106, pressed: true, time: 5)) == nil)
    }

    @Test func thePresenceKeyIsPresenceNeverACommandAlsoWithTheKeyboardOff() {
        var off = InputConfig()
        off.keyboard = false
        var router = InputRouter(rotation: .none, panelWidth: 10, panelHeight: 10, input: off)
        router.presenceKey = 106  // KEY_RIGHT, which would page
        #expect(router.route(.key(code: 106, pressed: true, time: 7)) == .presence(true, time: 7))
        #expect(router.route(.key(code: 106, pressed: false, time: 9)) == .presence(false, time: 9))
        #expect(router.route(.key(code: 57, pressed: true, time: 10)) == nil)
    }

    @Test func aTouchscreenThatReportsItsSizeIsNamedForTheSlop() {
        var router = InputRouter(rotation: .none, panelWidth: 10, panelHeight: 10, input: InputConfig())
        let size = InputPhysicalSize(width: 155, height: 87)
        let touch = InputDeviceInfo(id: 1, name: "FT5406", sysname: "event3", capabilities: .touch, physicalSize: size)
        #expect(router.route(.deviceAdded(touch)) == .touchscreenAdded(touch, size: size))
        #expect(router.route(.deviceRemoved(touch)) == .touchscreenRemoved(touch))
        let keyboard = InputDeviceInfo(id: 2, name: "kbd", sysname: "event4", capabilities: .keyboard)
        guard case .note(let line) = router.route(.deviceAdded(keyboard)) else {
            Issue.record("a keyboard is only worth a log line")
            return
        }
        #expect(line.contains("kbd"))
    }
}


@Suite("The daemon on the offscreen display, manual clock") struct DaemonRoomTests {
    @Test func thePanelsPhysicalSizeReachesTheSlopThroughTheProtocol() throws {
        // 1920 px across 344 mm: 142 dpi, so the 160-dpi slop shrinks. Read
        // through `any DisplayBackend`: a size declared only in a protocol
        // extension would read nil here and leave the slop as configured.
        let d = try OffscreenDaemon(panel: PixelSize(width: 1920, height: 1080),
                                    physicalSize: PhysicalSize(widthMillimetres: 344, heightMillimetres: 194))
        let configured = d.daemon.config.carousel.touchSlop
        let backend: any DisplayBackend = d.backend
        #expect(backend.physicalSize == PhysicalSize(widthMillimetres: 344, heightMillimetres: 194))
        let expected = configured * TouchDensity.slopScale(pixels: 1920, millimetres: 344)!
        #expect(abs(d.daemon.layout.settings.touchSlop - expected) < 1e-9)
        #expect(d.daemon.layout.settings.touchSlop < configured)
    }

    @Test func aTouchscreensOwnMillimetresWinOverTheDisplays() throws {
        let d = try OffscreenDaemon(panel: PixelSize(width: 1920, height: 1080),
                                    physicalSize: PhysicalSize(widthMillimetres: 344, heightMillimetres: 194))
        let configured = d.daemon.config.carousel.touchSlop
        // A 7" touchscreen over the same pixels: a much denser surface.
        let touch = InputDeviceInfo(id: 7, name: "FT5406", sysname: "event3", capabilities: .touch,
                                    physicalSize: InputPhysicalSize(width: 155, height: 87))
        d.daemon.carryOut(.touchscreenAdded(touch, size: touch.physicalSize!))
        let expected = configured * TouchDensity.slopScale(pixels: 1920, millimetres: 155)!
        #expect(abs(d.daemon.layout.settings.touchSlop - expected) < 1e-9)
        // Unplugged: back to the display's density.
        d.daemon.carryOut(.touchscreenRemoved(touch))
        let display = configured * TouchDensity.slopScale(pixels: 1920, millimetres: 344)!
        #expect(abs(d.daemon.layout.settings.touchSlop - display) < 1e-9)
    }

    @Test func framesAreDrawnWhenSomethingChangedAndNeverFasterThanThePanel() throws {
        // Decodes are held until the first pass has run.
        let gate = DispatchSemaphore(value: 0)
        let d = try OffscreenDaemon(prepare: ItemCache.held(by: gate))
        d.advance(ms: 0)
        // The first frame waits for the start picture (the modeset's black
        // buffer is on screen meanwhile), then shows it.
        #expect(d.daemon.frames.pacer.framesPresented == 0)
        #expect(!d.daemon.frames.firstFrameShown)
        gate.signal()
        d.daemon.settleDecodes()
        d.advance(ms: 1)
        #expect(d.daemon.frames.pacer.framesPresented == 1)
        #expect(d.daemon.frames.firstFrameShown)
        d.advance(ms: 20)
        let settled = d.daemon.frames.pacer.framesPresented
        #expect(settled <= 2)
        // At rest nothing is drawn.
        for _ in 0..<10 { d.advance(ms: 20) }
        #expect(d.daemon.frames.pacer.framesPresented == settled)
        // A swipe draws frames while it moves, then stops again.
        var t = d.now
        d.daemon.feed(.down(id: 0, at: Point(x: 300, y: 100)), at: t)
        for k in 1...8 {
            t += 16_000
            d.daemon.feed(.move(id: 0, to: Point(x: 300 - Double(k) * 30, y: 100)), at: t)
        }
        d.daemon.feed(.up(id: 0), at: t)
        d.now = t
        var presented: [Int] = []
        for _ in 0..<120 {
            d.advance(ms: 5)
            presented.append(d.daemon.frames.pacer.framesPresented)
        }
        #expect(presented.last! > settled + 5)
        // Never two frames within one refresh (5 ms steps: at most one frame in three steps).
        for i in 3..<presented.count { #expect(presented[i] - presented[i - 3] <= 1) }
        #expect(d.daemon.model.currentItemIndex(at: Timestamp(microseconds: d.now)) == 1)
        #expect(!d.daemon.model.isMoving)
    }

    @Test func theFirstFrameWaitsForTheStartPictureAtMostTheStartHold() throws {
        // A start picture that is not decoded within the hold (a slow board,
        // a huge file) gets the placeholder frame then: the screen and
        // systemd's READY=1 do not wait for it any longer.
        let gate = DispatchSemaphore(value: 0)
        let d = try OffscreenDaemon(prepare: ItemCache.held(by: gate))
        d.advance(ms: 0)
        #expect(!d.daemon.frames.firstFrameShown)
        d.advance(ms: Daemon.startHoldMicroseconds / 1000 - 1)
        #expect(!d.daemon.frames.firstFrameShown)
        d.advance(ms: 2)
        #expect(d.daemon.frames.firstFrameShown)
        gate.signal()
        // An empty folder has nothing to wait for: its frame comes at once.
        let empty = try OffscreenDaemon(images: [])
        empty.advance(ms: 0)
        #expect(empty.daemon.frames.firstFrameShown)
    }

    @Test func prefetchKeepsLookingForwardAfterCrossingTheWrapSeam() throws {
        // Offsets run on past the last item while moving and fold back to 0
        // at rest: that fold is no motion backwards.
        let d = try OffscreenDaemon(images: ["01-mountains.jpg", "02-sunset.jpg", "04-panels.png", "05-glow.webp"])
        d.advance(ms: 0)
        _ = d.daemon.answer(.goto(index: 3, milliseconds: 0), grant: .controlSocket)
        d.advance(ms: 20)
        _ = d.daemon.answer(.next, grant: .controlSocket)
        for _ in 0..<100 { d.advance(ms: 10) }
        #expect(d.daemon.status()["index"] == .int(0))
        #expect(!d.daemon.model.isMoving)
        #expect(d.daemon.frames.travel == 1)
        _ = d.daemon.answer(.prev, grant: .controlSocket)
        for _ in 0..<100 { d.advance(ms: 10) }
        #expect(d.daemon.status()["index"] == .int(3))
        #expect(d.daemon.frames.travel == -1)
    }

    @Test func requestsAreAnsweredFromTheRunningModel() throws {
        let d = try OffscreenDaemon()
        d.advance(ms: 0)
        guard case .ok = d.daemon.answer(.goto(index: 2, milliseconds: 0), grant: .controlSocket) else {
            Issue.record("goto 2 was refused")
            return
        }
        #expect(d.daemon.status()["index"] == .int(2))
        #expect(d.daemon.status()["image"]?.stringValue?.hasSuffix("04-panels.png") == true)
        guard case .error(let message) = d.daemon.answer(.goto(index: 7, milliseconds: nil), grant: .controlSocket) else {
            Issue.record("goto 7 of 3 was accepted")
            return
        }
        #expect(message.contains("out of range"))
    }

    @Test func aNewPictureInTheFolderKeepsThePictureOnScreen() throws {
        let d = try OffscreenDaemon()
        d.advance(ms: 0)
        _ = d.daemon.answer(.goto(index: 1, milliseconds: 0), grant: .controlSocket)
        try FileManager.default.copyItem(at: demoImages.appendingPathComponent("05-glow.webp"),
                                         to: d.folder.appendingPathComponent("images/00-first.webp"))
        d.daemon.rescanAlbum()
        #expect(d.daemon.album.count == 4)
        #expect(d.daemon.status()["index"] == .int(2))
        #expect(d.daemon.status()["image"]?.stringValue?.hasSuffix("02-sunset.jpg") == true)
    }

    @Test func theLargestItemSizeSetAtRunTimeDrawsAndALargerOneIsRefused() throws {
        // `set item_size 100000` used to pass validation and then trap in the
        // scaler, killing the running carousel from any socket client.
        let d = try OffscreenDaemon()
        d.advance(ms: 0)
        guard case .error(let message) = d.daemon.set("item_size", "100000") else {
            Issue.record("item_size 100000 was accepted")
            return
        }
        #expect(message.contains("out of range"))
        guard case .ok = d.daemon.set("item_size", "16384") else {
            Issue.record("item_size 16384 was refused")
            return
        }
        d.daemon.settleDecodes()
        let before = d.daemon.frames.pacer.framesPresented
        d.advance(ms: 20)
        #expect(d.daemon.frames.pacer.framesPresented == before + 1)
        #expect(d.daemon.album.count == 3, "no picture may be skipped as broken for its size")
    }

    @Test func aModeChangeBySetLaysTheCarouselOutForTheNewPanel() throws {
        let d = try OffscreenDaemon()
        d.daemon.settleDecodes()
        d.advance(ms: 0)
        try #require(d.daemon.frames.firstFrameShown)
        guard case .ok = d.daemon.set("display.mode", "200x300") else {
            Issue.record("set display.mode was refused")
            return
        }
        #expect(d.backend.panelSize == PixelSize(width: 200, height: 300))
        #expect(d.daemon.layout.size == PixelSize(width: 200, height: 300))
        let before = d.daemon.frames.pacer.framesPresented
        d.advance(ms: 20)
        #expect(d.daemon.frames.pacer.framesPresented == before + 1)
    }
}

@Suite("The daemon follows its pictures folder") struct FolderFollowingTests {
    @Test func aFolderSwappedInWithMvIsWatchedAgain() throws {
        let d = try OffscreenDaemon()
        d.advance(ms: 0)
        let fm = FileManager.default
        let images = d.folder.appendingPathComponent("images")
        let fresh = d.folder.appendingPathComponent("images.new")
        try fm.createDirectory(at: fresh, withIntermediateDirectories: true)
        for name in ["02-sunset.jpg", "05-glow.webp"] {
            try fm.copyItem(at: demoImages.appendingPathComponent(name), to: fresh.appendingPathComponent(name))
        }
        // How sync tools publish: the old folder goes, the new one is renamed in.
        try fm.moveItem(at: images, to: d.folder.appendingPathComponent("images.old"))
        #expect(rename(fresh.path, images.path) == 0)
        d.daemon.folderChanged()
        #expect(d.daemon.album.count == 2)
        // Changes inside the new folder are seen.
        try fm.copyItem(at: demoImages.appendingPathComponent("04-panels.png"), to: images.appendingPathComponent("04-panels.png"))
        d.daemon.folderChanged()
        #expect(d.daemon.album.count == 3)
    }

    @Test func aBrokenFileIsNotTriedAgainOnEveryRescan() throws {
        let d = try OffscreenDaemon()
        // Ahead of the first picture, where it is decoded at start (the one
        // behind is decoded once the carousel first moves).
        try Data("not a picture".utf8).write(to: d.folder.appendingPathComponent("images/01b-broken.jpg"))
        d.daemon.rescanAlbum()
        #expect(d.daemon.album.count == 4)
        for _ in 0..<5 {
            d.advance(ms: 20)
            d.daemon.settleDecodes()
        }
        #expect(d.daemon.album.count == 3)
        // Folder churn: a rescan does not bring the broken file back (to be
        // decoded and logged again), until it changes.
        d.daemon.rescanAlbum()
        #expect(d.daemon.album.count == 3)
        try FileManager.default.removeItem(at: d.folder.appendingPathComponent("images/01b-broken.jpg"))
        try FileManager.default.copyItem(at: demoImages.appendingPathComponent("05-glow.webp"),
                                         to: d.folder.appendingPathComponent("images/01b-broken.jpg"))
        d.daemon.rescanAlbum()
        #expect(d.daemon.album.count == 4)
    }

    @Test func aFolderDeletedAndCreatedAgainIsWatchedAgain() throws {
        let d = try OffscreenDaemon()
        d.advance(ms: 0)
        let fm = FileManager.default
        let images = d.folder.appendingPathComponent("images")
        try fm.removeItem(at: images)
        d.daemon.folderChanged()
        #expect(d.daemon.album.count == 0)
        try fm.createDirectory(at: images, withIntermediateDirectories: true)
        d.daemon.folderChanged()
        try fm.copyItem(at: demoImages.appendingPathComponent("05-glow.webp"), to: images.appendingPathComponent("05-glow.webp"))
        d.daemon.folderChanged()
        #expect(d.daemon.album.count == 1)
    }
}

