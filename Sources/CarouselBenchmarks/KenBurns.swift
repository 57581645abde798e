import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

/// Issue 47's figures: one Ken Burns frame (the picture at rest framed by a
/// scale and a centre, drawn by pixman's scaled copy through the zoom path)
/// at 1280x800, 1920x1080 and 3840x2160, each as a ratio to a memcpy of the
/// frame in the same run; from a picture decoded at the move's largest
/// scale (1.3), at the cache's half-step (1.5: the reduction at scale 1 is
/// past bilinear's threshold, so pixman convolves), and from the screen's
/// own picture scaled up (before the sharper decode is ready).
struct KenBurnsBenchmarks {
    let panels = [PixelSize(width: 1280, height: 800), PixelSize(width: 1920, height: 1080), PixelSize(width: 3840, height: 2160)]

    func run() -> [String] {
        var lines: [String] = []
        for panel in panels {
            let bench = FramePathBenchmarks(panel: panel)
            let (compositor, images) = bench.carousel(.none)
            let box = compositor.itemPixelSize
            let display = OffscreenBackend(size: panel)
            let source = Frame(width: panel.width, height: panel.height, color: 0xFF33_4455)
            let frames = panel.width > 2000 ? 10 : 30
            let copy = measureMemcpy("memcpy of a \(panel) frame", of: source, into: display, frames: frames)
            lines.append(line(copy))
            func sharper(_ factor: Double) -> DecodedImage {
                let size = PixelSize(width: Int((Double(box.width) * factor).rounded()), height: Int((Double(box.height) * factor).rounded()))
                return FramePathBenchmarks.pictures(size)[0]
            }
            for (label, picture) in [("decoded at 1.3x", Optional(sharper(1.3))), ("decoded at 1.5x", sharper(1.5)),
                                     ("the screen's picture scaled up", nil)] {
                for scale in [1.02, 1.3] {
                    let writer = ScreenWriter(compositor: compositor)
                    let r = measure("Ken Burns frame at scale \(scale), \(label)", operations: frames) {
                        var sum = 0
                        for k in 0..<frames {
                            let framing = Framing(scale: scale + Double(k) * 0.0005, centerX: 0.45, centerY: 0.5).clamped
                            let view = framing.zoomView(item: 0, width: Double(box.width), height: Double(box.height))
                            compositor.layOut(&writer.scene, offset: 0, count: 10, wrap: true, page: 0, pageCount: 10,
                                              framed: [ZoomLayer(view: view, picture: picture)]) { images[$0 % 3] }
                            let b = display.acquire()!
                            try! display.present(b, window: writer.draw(into: b))
                            sum &+= writer.pixelsWritten
                        }
                        return sum
                    }
                    lines.append(line(r) + " = \(format2(r.perOperation[0] / copy.perOperation[0]))x / "
                                 + "\(format2(r.median / copy.median))x memcpy, best / median")
                }
            }
        }
        return lines
    }

    func line(_ r: Result) -> String {
        "  \(r.name): \(format(r.perOperation[0])) / \(format(r.median))"
    }
}
