// Each key's range is stated once (its ValueDomain): validation must agree
// with it at both edges and just past them, and the accepts text must say
// the same bounds people read in check-config's errors.

import CarouselConfig
import Testing

@Suite("Every key's validation agrees with its stated range")
struct DomainTests {
    func accepted(_ spec: KeySpec, _ value: String) -> Bool {
        var c = Configuration()
        do {
            try c.set("\(spec.section).\(spec.name)", value)
            return true
        } catch {
            return false
        }
    }

    @Test("edges accepted, past the edges refused", arguments: Schema.keys.map { "\($0.section).\($0.name)" })
    func edges(key: String) throws {
        let spec = try #require(Schema.lookup(key))
        switch spec.domain {
        case let .number(range, _):
            for inside in [range.lowerBound, range.upperBound, (range.lowerBound + range.upperBound) / 2] {
                #expect(accepted(spec, "\(inside)"), "\(key) refused \(inside), inside its range \(range)")
            }
            for outside in [range.lowerBound.nextDown, range.upperBound.nextUp, -.infinity, .infinity, .nan] {
                #expect(!accepted(spec, "\(outside)"), "\(key) took \(outside), outside its range \(range)")
            }
            #expect(spec.accepts.contains(Schema.format(range.upperBound)), "\(key): '\(spec.accepts)' hides the upper bound")
        case let .integer(range):
            for inside in [range.lowerBound, range.upperBound] {
                #expect(accepted(spec, "\(inside)"), "\(key) refused \(inside), inside \(range)")
            }
            for outside in [range.lowerBound - 1, range.upperBound + 1] {
                #expect(!accepted(spec, "\(outside)"), "\(key) took \(outside), outside \(range)")
            }
            #expect(!accepted(spec, "1.5"), "\(key) took a fraction")
            #expect(spec.accepts == "\(range.lowerBound) to \(range.upperBound)")
        case let .autoOrInteger(range):
            for inside in [range.lowerBound, range.upperBound] {
                #expect(accepted(spec, "\(inside)"), "\(key) refused \(inside), inside \(range)")
            }
            for outside in [range.lowerBound - 1, range.upperBound + 1] {
                #expect(!accepted(spec, "\(outside)"), "\(key) took \(outside), outside \(range)")
            }
            for auto in ["auto", "AUTO", ""] { #expect(accepted(spec, auto), "\(key) refused '\(auto)'") }
            #expect(!accepted(spec, "1.5") && !accepted(spec, "automatic"))
            #expect(spec.accepts.hasPrefix("auto or \(range.lowerBound) to \(range.upperBound)"))
        case let .choice(words):
            for word in words {
                #expect(accepted(spec, word), "\(key) refused its own choice \(word)")
                #expect(spec.accepts.contains(word), "\(key): '\(spec.accepts)' does not list \(word)")
            }
            #expect(!accepted(spec, "nonsense"))
        case .boolean:
            for word in ["true", "false", "yes", "no", "on", "off", "1", "0"] { #expect(accepted(spec, word), "\(key): \(word)") }
            #expect(!accepted(spec, "maybe"))
        case .color:
            #expect(accepted(spec, "#102030") && accepted(spec, "#10203040"))
            #expect(!accepted(spec, "#12345") && !accepted(spec, "red"))
        case .text:
            break
        }
    }

    @Test("the keys with a range of their own say so")
    func rangedKeysHaveDomains() {
        // Every key whose accepts text names a numeric range has a numeric
        // domain: a range stated in words only could drift from the check.
        for spec in Schema.keys where spec.accepts.contains(" to ") {
            switch spec.domain {
            case .number, .integer, .autoOrInteger: break
            default: Issue.record("\(spec.section).\(spec.name) says '\(spec.accepts)' but has no numeric domain")
            }
        }
    }
}
