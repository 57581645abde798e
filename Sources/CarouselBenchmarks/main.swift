import CarouselCore
import CarouselImaging
import CarouselSimulation
#if canImport(Glibc)
import Glibc
#endif

// A plain benchmark executable: each case runs a warm-up, then several
// rounds, and reports the best and median time per operation. Benchmarks
// report figures; no test asserts on wall-clock time.

struct Result {
    var name: String
    var perOperation: [Double]  // ns, one per round
    /// The median round (`perOperation` is sorted; its first is the best).
    var median: Double { perOperation[perOperation.count / 2] }
}

func measure(_ name: String, operations: Int, rounds: Int = 7, _ body: () -> Int) -> Result {
    var sink = 0
    sink &+= body()  // warm-up
    var samples: [Double] = []
    let clock = ContinuousClock()
    for _ in 0..<rounds {
        var s = 0
        let elapsed = clock.measure { s = body() }
        sink &+= s
        let ns = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        samples.append(ns / Double(operations))
    }
    if sink == 42 { print("") }  // keep the work observable
    return Result(name: name, perOperation: samples.sorted())
}

func format(_ ns: Double) -> String {
    if ns >= 1e6 { return String(Int((ns / 1e6 * 100).rounded())) .insertingDecimal(2) + " ms" }
    if ns >= 1e3 { return String(Int((ns / 1e3 * 100).rounded())).insertingDecimal(2) + " µs" }
    return String(Int(ns.rounded())) + " ns"
}

extension String {
    func insertingDecimal(_ places: Int) -> String {
        var s = self
        while s.count <= places { s = "0" + s }
        s.insert(".", at: s.index(s.endIndex, offsetBy: -places))
        return s
    }
}

let viewport = Viewport(width: 1920, height: 1080)
let frame: Int64 = 16_667

/// One 60 Hz tick while a settle spring is in flight: advance + offset read.
func tickWhileSettling() -> Int {
    let ticks = 10_000
    var total = 0
    var model = Carousel(viewport: viewport, count: 10)
    var t = Timestamp.zero
    var i = 0
    while i < ticks {
        // Start a drag/release to put a settle in flight, then tick through it.
        _ = model.handle(.down(id: 0, at: Point(x: 1000, y: 500)), at: t)
        for k in 1...6 {
            t.microseconds += 8_000
            _ = model.handle(.move(id: 0, to: Point(x: 1000 - Double(k) * 60, y: 500)), at: t)
        }
        _ = model.handle(.up(id: 0), at: t)
        while model.isMoving, i < ticks {
            t.microseconds += frame
            total &+= model.advance(to: t).count
            total &+= Int(model.offset(at: t) * 1000)
            i += 1
        }
    }
    return total
}

/// One whole gesture: down, 12 moves at 120 Hz, a fling release, and every
/// frame of the settle until rest.
func wholeGesture() -> Int {
    var total = 0
    var model = Carousel(viewport: viewport, count: 10)
    var t = Timestamp.zero
    for _ in 0..<1_000 {
        _ = model.handle(.down(id: 0, at: Point(x: 1500, y: 500)), at: t)
        for k in 1...12 {
            t.microseconds += 8_333
            total &+= model.handle(.move(id: 0, to: Point(x: 1500 - Double(k) * 40, y: 500)), at: t).count
        }
        total &+= model.handle(.up(id: 0), at: t).count
        while model.isMoving {
            t.microseconds += frame
            total &+= model.advance(to: t).count
        }
        t.microseconds += 100_000
    }
    return total
}

/// `carouseld simulate` on a 60 s autoplay script (parse + run + JSON).
func simulateMinute() -> Int {
    let text = """
    size 1920x1080
    images 12
    set interval 2
    at 5000 down 1500 500
    at 5100 move 1300 500
    at 5150 move 1100 500
    at 5160 up
    until 60000
    """
    var bytes = 0
    if let script = try? SimulationScript.parse(text) {
        SimulationRunner.run(script, emit: { bytes &+= $0.utf8.count })
    }
    return bytes
}

/// The panel a case draws for: `WIDTHxHEIGHT` after its flag, or 1920x1080.
func panelArgument() -> PixelSize {
    let size = CommandLine.arguments.dropFirst(2).first?.split(separator: "x").compactMap { Int($0) } ?? []
    guard size.count == 2, size[0] > 0, size[1] > 0 else {
        if CommandLine.arguments.count > 2 { print("usage: carousel-bench \(CommandLine.arguments[1]) [WIDTHxHEIGHT]"); exit(2) }
        return PixelSize(width: 1920, height: 1080)
    }
    return PixelSize(width: size[0], height: size[1])
}

// `--socket-latency [--clients N] [--requests N] [--rate N]`: the control socket under many clients.
if CommandLine.arguments.dropFirst().first == "--socket-latency" {
    exit(socketLatencyBenchmark(SocketLatencyOptions(arguments: Array(CommandLine.arguments.dropFirst(2)))))
}

// `--memory N FOLDER`: one memory figure, in a process of its own.
// `--frame-path [WxH]`: a frame's way to the screen, slides and pinches, at 1920x1080 or WxH.
if CommandLine.arguments.dropFirst().first == "--frame-path" {
    let panel = panelArgument()
    print("frame path at \(panel) (ratios to a memcpy of the frame in this run):")
    for l in FramePathBenchmarks(panel: panel).run() { print(l) }
    exit(0)
}

// `--ken-burns`: a Ken Burns frame at 1280x800, 1920x1080 and 3840x2160 against a memcpy of the frame.
if CommandLine.arguments.dropFirst().first == "--ken-burns" {
    print("Ken Burns frames (best / median of rounds; ratios to a memcpy of the frame in this run):")
    for l in KenBurnsBenchmarks().run() { print(l) }
    exit(0)
}

// `--transitions [WxH]`: a crossfade frame against a memcpy, the blur fill against decoding, at 1920x1080 or WxH.
if CommandLine.arguments.dropFirst().first == "--transitions" {
    let panel = panelArgument()
    let scratch = PixelBenchmarks()
    print("transitions and fill at \(panel) (best / median of rounds):")
    for l in TransitionBenchmarks(panel: panel).run(folder: scratch.folder) { print(l) }
    scratch.cleanUp()
    exit(0)
}

// `--video`: decoding a clip, and drawing its frames with each of libswscale's algorithms against a memcpy.
if CommandLine.arguments.dropFirst().first == "--video" {
    let scratch = PixelBenchmarks()
    print("video (best / median of rounds; ratios to a memcpy of the 1920x1080 destination in this run):")
    for l in VideoBenchmarks(folder: scratch.folder).run() { print(l) }
    scratch.cleanUp()
    exit(0)
}

// `--prepare FOLDER [WxH]`: a picture through the decode cache, step by step.
if CommandLine.arguments.dropFirst().first == "--prepare" {
    guard let bench = PrepareBenchmarks(arguments: Array(CommandLine.arguments.dropFirst(2))) else {
        print("usage: carousel-bench --prepare FOLDER [WIDTHxHEIGHT]: a folder with pictures in it")
        exit(2)
    }
    print("a picture through the decode cache (best / median of rounds):")
    for l in bench.run() { print(l) }
    exit(0)
}

// `--shapes`: the album's header probe of 500 pictures against decoding them.
if CommandLine.arguments.dropFirst().first == "--shapes" {
    let scratch = PixelBenchmarks()
    print("picture shapes (best / median of rounds):")
    for l in scratch.shapesVersusDecode() { print(l) }
    scratch.cleanUp()
    exit(0)
}

if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--memory", let n = Int(CommandLine.arguments[2]) {
    print(PixelBenchmarks(folder: CommandLine.arguments[3]).memory(count: n))
    exit(0)
}

let modelResults = [
    measure("model tick (settle in flight, advance + offset)", operations: 10_000, tickWhileSettling),
    measure("one gesture (down, 12 moves, fling, settle to rest)", operations: 1_000, wholeGesture),
    measure("simulate 60 s of autoplay (parse, run, JSON)", operations: 1, rounds: 5, simulateMinute),
]

print("carousel-bench (best / median of rounds, per operation)")
print("model:")
for r in modelResults {
    let median = r.perOperation[r.perOperation.count / 2]
    print("  \(r.name): \(format(r.perOperation[0])) / \(format(median))")
}
let pixels = PixelBenchmarks()
print("pixels:")
for l in pixels.composeVersusMemcpy() { print(l) }
for l in pixels.dctVersusFullDecode() { print(l) }
for l in pixels.shapesVersusDecode() { print(l) }
print("frame path (ratios to a memcpy of the frame in this run):")
for l in FramePathBenchmarks().run() { print(l) }
print("transitions and fill:")
for l in TransitionBenchmarks().run(folder: pixels.folder) { print(l) }
print("memory (cache_mb = 64, 1920x1080 items, each count in a fresh process):")
for count in [10, 10_000] {
    _ = shell("'\(CommandLine.arguments[0])' --memory \(count) '\(pixels.folder)'")
}
pixels.cleanUp()
