import CarouselAlbum
import CarouselConfig
import CarouselCore
import CarouselImaging
import CarouselPlatform
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

/// The frame `carouseld render` is asked for, read from its command line's
/// text: the panel, the offset, the clock's time, a zoom or a crossfade.
/// `Layout.still(_:_:)` paints it.
public struct StillFrameRequest {
    public var panel: PixelSize
    /// Items from the first picture that shows.
    public var offset: Double
    public var clock: (hour: Int, minute: Int)
    /// The picture at the offset zoomed (its item is set when painted).
    public var zoom: ZoomView?
    /// This far into the crossfade to the next picture.
    public var crossfade: Double?
    /// Seconds into the rest of the picture at the offset, moved by `[ken_burns]`.
    public var kenBurns: Double?

    /// Offsets are in items; a billion is past any album and far inside
    /// what the page arithmetic can count.
    public static let maximumOffset = 1e9

    /// A value that cannot be used; `message` names its option and says
    /// what it takes.
    public struct Invalid: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Reads `size` (`WIDTHxHEIGHT`), `clockTime` (`HH:MM`; nil: the local
    /// time at `now`, seconds since the epoch) and `zoom` (`SCALE,TX,TY`),
    /// and checks the offset and the crossfade fraction. Throws for the
    /// first that cannot be used, in that order (size, offset, clock, zoom,
    /// crossfade); a crossfade with a zoom is refused too (a zoomed picture
    /// never fades).
    public init(size: String, offset: Double, clockTime: String?, zoom: String?, crossfade: Double?,
                kenBurns: Double? = nil, now: Int = Int(time(nil))) throws(Invalid) {
        guard let mode = ModeRequest(size), mode.refresh == nil else {
            throw Invalid(message: "--size must be WIDTHxHEIGHT, each side 1 to \(Viewport.maximumSide), e.g. 1280x800")
        }
        panel = PixelSize(width: mode.width, height: mode.height)
        guard offset.isFinite, abs(offset) <= Self.maximumOffset else {
            throw Invalid(message: "--offset must be a number from -\(Int(Self.maximumOffset)) to \(Int(Self.maximumOffset))")
        }
        self.offset = offset
        if let clockTime {
            let parts = clockTime.split(separator: ":").map { Int($0) }
            guard parts.count == 2, let h = parts[0], let m = parts[1], (0..<24).contains(h), (0..<60).contains(m) else {
                throw Invalid(message: "--clock-time must be HH:MM, e.g. 09:41")
            }
            clock = (hour: h, minute: m)
        } else {
            let minuteNow = LocalTime.weekMinute(at: now).minute % 1440
            clock = (hour: minuteNow / 60, minute: minuteNow % 60)
        }
        if let zoom {
            let parts = zoom.split(separator: ",").map { Double($0) }
            guard parts.count == 3, let s = parts[0], let tx = parts[1], let ty = parts[2], s.isFinite, s > 0, s <= 16,
                  tx.isFinite, ty.isFinite else {
                throw Invalid(message: "--zoom must be SCALE,TX,TY with SCALE above 0 and at most 16, e.g. 2.5,-480,-300")
            }
            self.zoom = ZoomView(item: 0, scale: s, translation: Point(x: tx, y: ty))
        }
        if let crossfade {
            guard crossfade.isFinite, (0...1).contains(crossfade) else {
                throw Invalid(message: "--crossfade must be a fraction from 0 to 1, e.g. 0.5")
            }
            guard zoom == nil else { throw Invalid(message: "--crossfade and --zoom cannot be combined (a zoomed picture never fades)") }
        }
        self.crossfade = crossfade
        if let kenBurns {
            guard kenBurns.isFinite, (0...86_400).contains(kenBurns) else {
                throw Invalid(message: "--ken-burns must be seconds from 0 to 86400, e.g. 2.5")
            }
            guard zoom == nil, crossfade == nil else {
                throw Invalid(message: "--ken-burns cannot be combined with --zoom or --crossfade")
            }
        }
        self.kenBurns = kenBurns
    }
}

extension Layout {
    /// `request`'s frame of `config`'s pictures. A folder that cannot be
    /// listed is a warning (the frame shows no pictures), as is each file
    /// left out of the listing.
    public static func still(_ config: Configuration, _ request: StillFrameRequest) -> Frame {
        var paths: [String] = []
        do {
            paths = try config.listedImagePaths()
        } catch {
            log(.warning, "\(error)")
        }
        return still(config, panel: request.panel, paths: paths, offset: request.offset, clock: request.clock,
                     zoom: request.zoom, crossfade: request.crossfade, kenBurns: request.kenBurns)
    }
}

extension Configuration {
    /// The image files to show (`imageListing`), with one warning line for
    /// each file left out. Throws when the folder cannot be listed at all.
    func listedImagePaths() throws(AlbumError) -> [String] {
        let listing = try imageListing()
        for line in listing.skipped { log(.warning, "skipping \(line)") }
        return listing.paths
    }
}
