import Testing
import CarouselCore

/// When a clip plays (issue 29), on a manual clock: the model and the
/// playback policy together, as the daemon's video service drives them,
/// with a stand-in player that reaches a clip's end after its duration of
/// playing.
@Suite struct ClipPlaybackTests {
    /// A carousel whose items `clips` are clips of the given durations.
    struct ClipRig {
        var rig: Rig
        var playback: ClipPlayback
        var clips: [Int: Double]
        var displayOn = true
        /// Every action the policy asked for, in order.
        var actions: [ClipPlayback.Action] = []

        init(clips: [Int: Double], count: Int = 4, interval: Double = 3, autoplayOn: Bool = true,
             loop: Bool = false, maxSeconds: Double = 120) {
            var a = AutoplaySettings()
            a.enabled = autoplayOn
            a.interval = interval
            a.transition = 0.5
            a.resumeDelay = 2
            rig = Rig(autoplay: a, count: count)
            playback = ClipPlayback(settings: .init(loop: loop, maxSeconds: maxSeconds))
            self.clips = clips
            sync()
        }

        var view: ClipPlayback.View {
            ClipPlayback.View(of: rig.model, at: rig.now, displayOn: displayOn) { clips[$0] != nil }
        }

        var index: Int { rig.model.currentItemIndex(at: rig.now) }

        /// What the daemon does after anything happened: the policy looks,
        /// the model hears whether a clip plays, a finished clip lets
        /// autoplay move on.
        mutating func sync() {
            carryOut(playback.update(view, at: rig.now))
        }

        mutating func carryOut(_ new: [ClipPlayback.Action]) {
            actions += new
            let clipOnPage = view.clip != nil
            rig.events += rig.model.setVideo(playback.presence(clipOnPage: clipOnPage), at: rig.now)
            if new.contains(.finish) { rig.events += rig.model.videoEnded(at: rig.now) }
        }

        /// Runs frame by frame for `ms`: the player reaches the end of a
        /// clip after its duration of playing, the cap fires at its deadline.
        mutating func run(for ms: Double) {
            let end = rig.now.adding(seconds: ms / 1000)
            while rig.now < end {
                rig.run(for: min(16.667, end.seconds(since: rig.now) * 1000))
                if case .playing(let item) = playback.state, let duration = clips[item],
                   playback.playedSeconds(at: rig.now) >= duration {
                    carryOut(playback.clipEnded(view, at: rig.now))
                }
                if let deadline = playback.deadline, deadline <= rig.now { carryOut(playback.fire(at: rig.now)) }
                sync()
            }
        }
    }

    @Test func restingOnAClipPlaysItAndAutoplayWaitsForItsEnd() {
        var r = ClipRig(clips: [1: 5])
        r.run(for: 3600)  // the first advance at 3 s, at rest on item 1 at 3.5 s
        #expect(r.index == 1)
        #expect(r.actions == [.start(item: 1)])
        #expect(r.rig.snapshot.autoplay.pausedBy == [.video])
        #expect(r.rig.snapshot.autoplay.next == nil)
        // 3 s of autoplay's interval pass: it does not move while the clip plays.
        r.run(for: 4800)  // 8.4 s
        #expect(r.index == 1)
        #expect(r.playback.state == .playing(item: 1))
        // The clip's end (5 s after 3.5 s): autoplay moves on at once.
        r.run(for: 700)  // 9.1 s
        #expect(r.actions.suffix(2) == [.finish, .stop])
        #expect(r.index == 2)
        #expect(r.rig.snapshot.autoplay.pausedBy == [])
        // The picture after it gets autoplay's whole interval.
        #expect(r.rig.snapshot.autoplay.next.map { $0.seconds > 11.9 && $0.seconds < 12.2 } == true)
    }

    @Test func aDragPausesTheClipAndComingBackPlaysOnFromThere() {
        var r = ClipRig(clips: [0: 30], autoplayOn: false)
        #expect(r.actions == [.start(item: 0)])
        r.run(for: 2000)
        #expect(abs(r.playback.playedSeconds(at: r.rig.now) - 2) < 0.02)
        // A finger drags the clip a little way and holds: it pauses.
        r.rig.down(500, 300)
        r.rig.move(450, 300)
        r.rig.move(400, 300)
        r.sync()
        #expect(r.actions.last == .pause)
        #expect(r.playback.state == .paused(item: 0))
        r.run(for: 1500)
        #expect(abs(r.playback.playedSeconds(at: r.rig.now) - 2) < 0.02)
        // Let go: it settles back on the clip, which plays on from 2 s.
        r.rig.up()
        r.run(for: 1500)
        #expect(r.index == 0)
        #expect(r.actions.last == .resume)
        #expect(r.playback.state == .playing(item: 0))
        let played = r.playback.playedSeconds(at: r.rig.now)
        #expect(played > 2 && played < 3.5)
    }

    @Test func swipingToAnotherPageStopsTheClip() {
        var r = ClipRig(clips: [0: 30], autoplayOn: false)
        r.run(for: 1000)
        r.rig.swipe(from: 800, to: 200, ms: 150)
        r.run(for: 1500)
        #expect(r.index == 1)
        #expect(r.actions == [.start(item: 0), .pause, .stop])
        #expect(r.playback.state == .idle)
        // Coming back starts it from its start.
        r.rig.command(.previous)
        r.run(for: 1000)
        #expect(r.actions.last == .start(item: 0))
        #expect(r.playback.playedSeconds(at: r.rig.now) < 0.6)
    }

    @Test func theDisplayOffStopsTheClipAndItStartsAgainWhenItIsBack() {
        var r = ClipRig(clips: [0: 30], autoplayOn: false)
        r.run(for: 1000)
        r.displayOn = false
        r.rig.events += r.rig.model.setDisplayOff(true, at: r.rig.now)
        r.sync()
        #expect(r.actions == [.start(item: 0), .stop])
        r.run(for: 5000)
        #expect(r.playback.state == .idle)
        r.displayOn = true
        r.rig.events += r.rig.model.setDisplayOff(false, at: r.rig.now)
        r.sync()
        #expect(r.actions.last == .start(item: 0))
        #expect(r.playback.playedSeconds(at: r.rig.now) == 0)
    }

    @Test func maxSecondsCapsHowLongAutoplayWaits() {
        var r = ClipRig(clips: [1: 600], maxSeconds: 10)
        r.run(for: 3600)
        #expect(r.actions == [.start(item: 1)])
        r.run(for: 9800)  // 13.4 s: 9.9 s played
        #expect(r.index == 1)
        r.run(for: 700)  // the cap at 13.5 s, then the transition
        #expect(r.actions.suffix(2) == [.finish, .stop])
        #expect(r.index == 2)
    }

    @Test func pausesDoNotCountTowardsTheCap() {
        var r = ClipRig(clips: [1: 600], maxSeconds: 10)
        r.run(for: 3600)
        r.run(for: 5000)  // 5 s played
        r.rig.command(.pause)
        r.sync()
        #expect(r.actions.last == .pause)
        #expect(r.rig.snapshot.autoplay.pausedBy == [.command])
        r.run(for: 20_000)
        #expect(r.index == 1)
        r.rig.command(.play)
        r.sync()
        #expect(r.actions.last == .resume)
        #expect(r.rig.snapshot.autoplay.pausedBy == [.video])
        r.run(for: 4800)  // 9.9 s played
        #expect(r.index == 1)
        r.run(for: 800)
        #expect(r.index == 2)
    }

    @Test func withAutoplayOffTheLastFrameStaysUnlessItLoops() {
        var once = ClipRig(clips: [0: 2], autoplayOn: false)
        once.run(for: 5000)
        #expect(once.actions == [.start(item: 0), .finish])
        #expect(once.playback.state == .ended(item: 0))
        #expect(once.index == 0)
        once.run(for: 5000)
        #expect(once.actions.count == 2)

        var looping = ClipRig(clips: [0: 2], autoplayOn: false, loop: true)
        looping.run(for: 5000)
        #expect(looping.actions == [.start(item: 0), .restart, .restart])
        #expect(looping.playback.state == .playing(item: 0))
        #expect(looping.index == 0)
    }

    @Test func loopDoesNotHoldAutoplay() {
        var r = ClipRig(clips: [1: 2], loop: true)
        r.run(for: 3600 + 2700)  // the end at 5.5 s, the transition until 6 s
        #expect(r.actions.contains(.restart) == false)
        #expect(r.index == 2)
    }

    @Test func playAndPauseAreTheClipsWhileOneIsOnThePage() {
        // Autoplay off in the configuration: `play` plays the clip on and
        // turns nothing on; Space pauses the clip, and plays it on.
        var r = ClipRig(clips: [0: 30], autoplayOn: false)
        r.run(for: 1000)
        r.rig.command(.togglePause)
        r.sync()
        #expect(r.playback.state == .paused(item: 0))
        #expect(r.rig.snapshot.autoplay.enabled == false)
        r.rig.command(.togglePause)
        r.sync()
        #expect(r.playback.state == .playing(item: 0))
        #expect(r.rig.snapshot.autoplay.enabled == false)
        r.rig.command(.pause)
        r.sync()
        r.rig.command(.play)
        r.sync()
        #expect(r.playback.state == .playing(item: 0))
        #expect(r.rig.snapshot.autoplay.enabled == false)
        #expect(r.actions == [.start(item: 0), .pause, .resume, .pause, .resume])
    }

    @Test func spaceOnAPictureStillTogglesAutoplay() {
        var r = ClipRig(clips: [1: 30], autoplayOn: false)
        r.rig.command(.togglePause)
        r.sync()
        #expect(r.rig.snapshot.autoplay.enabled == true)
        #expect(r.actions.isEmpty)
    }

    @Test func autoplayTurnedOnAfterTheEndMovesOnOnce() {
        var r = ClipRig(clips: [0: 1], autoplayOn: false)
        r.run(for: 2000)
        #expect(r.playback.state == .ended(item: 0))
        r.rig.command(.resume)
        r.sync()
        #expect(r.actions == [.start(item: 0), .finish, .finish])
        r.run(for: 1000)
        #expect(r.index == 1)
        #expect(r.actions.last == .stop)
    }
}
