/// What a picture's caption says (`[overlay] caption`).
public enum CaptionKind: String, Sendable, CaseIterable {
    /// No caption.
    case none
    /// The day the photo was taken (EXIF DateTimeOriginal), "12 March 2024".
    case date
    /// The file name without its extension.
    case name
    /// The picture's own description: XMP dc:description, else EXIF ImageDescription.
    case exif
    /// The text of NAME.txt beside NAME.jpg.
    case sidecar
}

/// Where text sits on the screen (`[overlay] position`, `clock_position`).
public enum OverlayPosition: String, Sendable, CaseIterable {
    case bottomLeft = "bottom-left", bottomCenter = "bottom-center", bottomRight = "bottom-right"
    case topLeft = "top-left", topCenter = "top-center", topRight = "top-right"

    public var isTop: Bool { self == .topLeft || self == .topCenter || self == .topRight }

    /// -1 left, 0 centre, +1 right.
    public var horizontal: Int {
        switch self {
        case .bottomLeft, .topLeft: -1
        case .bottomCenter, .topCenter: 0
        case .bottomRight, .topRight: 1
        }
    }
}

/// What lies under text so that it reads on any picture (`[overlay] backdrop`).
public enum TextBackdrop: String, Sendable, CaseIterable {
    /// A soft dark shadow around the letters.
    case shadow
    /// A translucent dark box behind the text.
    case scrim
    /// Nothing: the letters alone.
    case none
}

/// A clock format (`[overlay] clock`): `HH` (00-23), `H` (0-23), `hh`
/// (01-12), `h` (1-12), `MM` (minutes), `AM` or `am` (the half of the day),
/// anything else as written. `HH:MM` shows 07:05, `h:MM am` 7:05 am.
/// Minutes at most: the clock repaints once a minute.
public struct ClockFormat: Equatable, Sendable, CustomStringConvertible {
    enum Token: Equatable, Sendable {
        case hour24(padded: Bool), hour12(padded: Bool), minute, meridiem(upper: Bool)
        case literal(String)
    }
    let tokens: [Token]
    public let description: String

    /// Nil unless the text has one hour field and `MM`, and no `SS`.
    public init?(_ text: String) {
        var tokens: [Token] = []
        var rest = Substring(text)
        var literal = ""
        func flush() { if !literal.isEmpty { tokens.append(.literal(literal)); literal = "" } }
        while let c = rest.first {
            let table: [(String, Token)] = [("HH", .hour24(padded: true)), ("hh", .hour12(padded: true)), ("MM", .minute),
                                            ("AM", .meridiem(upper: true)), ("am", .meridiem(upper: false)),
                                            ("H", .hour24(padded: false)), ("h", .hour12(padded: false))]
            if let (word, token) = table.first(where: { rest.hasPrefix($0.0) }) {
                flush()
                tokens.append(token)
                rest = rest.dropFirst(word.count)
            } else {
                literal.append(c)
                rest = rest.dropFirst()
            }
        }
        flush()
        let hours = tokens.filter { if case .hour24 = $0 { true } else if case .hour12 = $0 { true } else { false } }.count
        // Seconds (SS) are refused rather than shown as letters: the clock repaints once a minute.
        guard hours == 1, tokens.filter({ $0 == .minute }).count == 1, text.count <= 32, !text.contains("SS"),
              !text.unicodeScalars.contains(where: { $0.value < 0x20 }) else { return nil }
        self.tokens = tokens
        description = text
    }

    /// The clock's text at `hour`:`minute` (local time).
    public func text(hour: Int, minute: Int) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let h12 = hour % 12 == 0 ? 12 : hour % 12
        return tokens.map { token -> String in
            switch token {
            case let .hour24(padded): padded ? two(hour) : "\(hour)"
            case let .hour12(padded): padded ? two(h12) : "\(h12)"
            case .minute: two(minute)
            case let .meridiem(upper): hour < 12 ? (upper ? "AM" : "am") : (upper ? "PM" : "pm")
            case let .literal(s): s
            }
        }.joined()
    }
}

/// How text is drawn (`[overlay] font`, `size`, `color`, `backdrop`).
public struct TextStyle: Equatable, Sendable {
    /// A fontconfig pattern: "DejaVu Sans", "Noto Sans:bold".
    public var font = "DejaVu Sans"
    /// Pixels on the screen (the em size); nil: a 25th of the screen's shorter side.
    public var size: Int?
    public var color = PixelColor(red: 255, green: 255, blue: 255)
    public var backdrop = TextBackdrop.shadow
    public init() {}

    /// The em size in pixels on a screen whose shorter side is `shorterSide`.
    public func pixelSize(shorterSide: Int) -> Int { size ?? max(12, shorterSide / 25) }
}

/// The `[overlay]` section: a caption on each picture, a clock on the screen, the text's look (pushed text's
/// keys are its own: `PushedTextSettings`).
public struct OverlaySettings: Equatable, Sendable {
    public var caption = CaptionKind.none
    /// Where the caption sits on its picture (it slides with it).
    public var position = OverlayPosition.bottomLeft
    /// nil: no clock.
    public var clock: ClockFormat?
    /// Where the clock sits on the screen (it stays put).
    public var clockPosition = OverlayPosition.topRight
    public var text = TextStyle()
    public init() {}
}
