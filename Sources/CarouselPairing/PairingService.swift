import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselLoop
import CarouselPairingWords
import CarouselPlatform
import CarouselPushedText
import CarouselRender
import Dispatch

/// Pairing codes on the frame's screen (`pair`): six random digits, one per
/// kind, each for ten minutes, drawn in pushed text's place (over it while
/// it lasts), at the top's centre and larger. `pair redeem` uses a code
/// once; five wrong codes void it. The codes never leave the daemon but in
/// the reply to who asked (which needs configure, as redeeming does), and on
/// the screen, which MQTT may not take a screenshot of while one shows
/// (`LoopView.secretOnScreen`); status says only that one shows.
public final class PairingService: LoopService {
    public let name = "pairing"
    public let subscriptions: LoopHappening.Kinds = [.laidOut, .configured]
    private let context: ServiceContext

    struct Code {
        let digits: String
        let expires: Int64
        var wrong = 0
    }
    private(set) var codes: [PairingKind: Code] = [:]
    /// How long a code lasts (µs).
    public static let lifetime: Int64 = 600_000_000
    /// Wrong codes that void a code.
    public static let maxWrong = 5
    private var drawing: UInt64 = 0
    private var shown = false
    private static let worker = DispatchQueue(label: "carouseld.pairing", qos: .userInitiated)

    public init(context: ServiceContext) { self.context = context }

    public var deadline: Int64? { codes.values.map(\.expires).min() }

    public func due(now: Int64) {
        let before = codes.count
        codes = codes.filter { $0.value.expires > now }
        if codes.count != before {
            log(.info, "pairing: a code expired")
            redraw()
        }
    }

    public func observe(_ happening: LoopHappening, now: Int64) { if !codes.isEmpty { redraw(force: true) } }

    public func stop() { codes = [:] }

    public func handle(_ request: ControlRequest, now: Int64) -> RequestOutcome? {
        guard case let .declared(declared) = request else { return nil }
        for kind in PairingKind.allCases where declared == PairingWords.ask(kind) {
            var random = SystemRandomNumberGenerator()
            let digits = String(Int.random(in: 0..<1_000_000, using: &random)).leftPadded(6)
            codes[kind] = Code(digits: digits, expires: now + Self.lifetime)
            log(.info, "pairing: a \(kind.rawValue) code is on the screen for \(Self.lifetime / 60_000_000) minutes")
            redraw()
            // Who asked may read it out (`carouselctl pair`, the owner's page);
            // the web page never shows a setup code, which is for the one at the frame.
            return .answered(["kind": .string(kind.rawValue), "code": .string(digits),
                              "expires_ms": .int(Int(Self.lifetime / 1000))])
        }
        if declared == PairingWords.cancel {
            codes = [:]
            redraw()
            return .done
        }
        guard declared.name == PairingWords.redeemName, let argument = declared.argument else { return nil }
        let parts = argument.split(separator: " ")
        guard parts.count == 2, let kind = PairingKind(rawValue: String(parts[0])) else { return .failed("pair redeem: bad request") }
        guard var code = codes[kind], code.expires > now else {
            return .failed("no \(kind.rawValue) code is on the frame's screen now: ask for a new one")
        }
        if Self.sameDigits(code.digits, String(parts[1])) {
            codes[kind] = nil
            log(.info, "pairing: the \(kind.rawValue) code was used")
            redraw()
            return .answered(["kind": .string(kind.rawValue), "redeemed": .bool(true)])
        }
        code.wrong += 1
        if code.wrong >= Self.maxWrong {
            codes[kind] = nil
            log(.warning, "pairing: \(Self.maxWrong) wrong \(kind.rawValue) codes: the code is void")
            redraw()
            return .failed("wrong code; after \(Self.maxWrong) wrong codes this one is void: ask for a new one")
        }
        codes[kind] = code
        return .failed("wrong code")
    }

    /// Compares every digit whatever the first difference (no timing to learn a prefix from).
    static func sameDigits(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }

    public func status(now: Int64) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        for (kind, code) in codes where code.expires > now {
            fields[kind.rawValue] = .object(["expires_ms": .int(Int(uptimeMilliseconds(code.expires)))])
        }
        return ["pairing": fields.isEmpty ? .null : .object(fields)]
    }

    private func uptimeMilliseconds(_ t: Int64) -> Int64 { context.view.uptimeMilliseconds(t) }

    /// The lines on the screen: one per code.
    var lines: [String] {
        PairingKind.allCases.compactMap { kind in
            guard let code = codes[kind] else { return nil }
            let spaced = code.digits.prefix(3) + " " + code.digits.suffix(3)
            return (kind == .guest ? "Pairing code " : "Setup code ") + spaced
        }
    }

    private func redraw(force: Bool = false) {
        drawing += 1
        let ticket = drawing
        let lines = self.lines
        // At once, on the loop: no screenshot for MQTT from the moment a code
        // is given out, though it is drawn a moment later.
        context.ask(.secret(!lines.isEmpty))
        guard !lines.isEmpty else {
            if shown || force { take(nil, ticket: ticket) }
            return
        }
        let look = TextLook(context.view.config, on: context.view.screen)
            .moved(to: .topCenter, size: max(24, context.view.screen.textSize * 2))
        context.run(on: Self.worker, { PushedTextService.draw(lines, look) }, then: { [weak self] stamp in
            self?.take(stamp, ticket: ticket)
        })
    }

    private func take(_ stamp: SceneStamp?, ticket: UInt64) {
        guard ticket == drawing else { return }
        shown = stamp != nil
        context.ask(.stamp(.pairing, stamp))
        context.ask(.frame)
    }
}
