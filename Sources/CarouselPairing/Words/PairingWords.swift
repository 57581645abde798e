import CarouselCore
import CarouselPlatform
import CarouselWords

/// What a pairing code is for.
public enum PairingKind: String, CaseIterable, Sendable {
    /// A guest's phone joins the web page (`carouselctl pair`, the owner's button).
    case guest
    /// The owner's password is chosen on the page at first run.
    case setup
}

/// What pairing says to the world: the `pair` request and the `pairing`
/// status field. The code is on the frame's screen and in the reply to the
/// one who asked; never in status.
public enum PairingWords {
    public static let words = CapabilityWords(
        name: "pairing",
        requests: [
            RequestWords(name: "pair", usage: "pair [guest|setup] | pair redeem guest|setup <code> | pair cancel", help: """
                `pair` (or `pair guest`) shows a six-digit code on the screen for ten minutes, with which a phone \
                joins the frame's web page as a guest; the reply carries it too. `pair setup` shows the one-time code \
                with which the owner's password is chosen on the page at first run. `pair redeem \
                KIND CODE` uses a code once (the web page asks it); five wrong codes void it. `pair cancel` takes \
                the codes away. Needs configure.
                """, parse: parse),
        ],
        status: [StatusWords("pairing", help: """
            The codes on the screen now, by kind (`guest`, `setup`), each with `expires_ms`; null when none. The codes themselves are never in status.
            """)])

    public static func ask(_ kind: PairingKind) -> DeclaredRequest {
        DeclaredRequest(name: "pair " + kind.rawValue, needs: .configure, line: "pair " + kind.rawValue)
    }

    public static func redeem(_ kind: PairingKind, code: String) -> DeclaredRequest {
        DeclaredRequest(name: redeemName, argument: kind.rawValue + " " + code, needs: .configure,
                        line: "pair redeem \(kind.rawValue) \(code)")
    }

    public static let redeemName = "pair redeem"
    public static let cancel = DeclaredRequest(name: "pair cancel", needs: .configure, line: "pair cancel")

    static func parse(_ rest: String) -> Result<DeclaredRequest, ValueError> {
        let words = rest.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
        let usage = "usage: pair [guest|setup] | pair redeem guest|setup <code> | pair cancel"
        switch words.first {
        case nil: return .success(ask(.guest))
        case "cancel" where words.count == 1: return .success(cancel)
        case "redeem":
            guard words.count == 3, let kind = PairingKind(rawValue: words[1]) else {
                return .failure(ValueError("pair redeem needs a kind and a code (\(usage))"))
            }
            guard words[2].count == 6, words[2].allSatisfy({ $0.isASCII && $0.isNumber }) else {
                return .failure(ValueError("pair redeem: a code is six digits"))
            }
            return .success(redeem(kind, code: words[2]))
        case let word? where words.count == 1:
            guard let kind = PairingKind(rawValue: word) else { return .failure(ValueError("pair: unknown '\(word)' (\(usage))")) }
            return .success(ask(kind))
        default:
            return .failure(ValueError("pair: \(usage)"))
        }
    }
}
