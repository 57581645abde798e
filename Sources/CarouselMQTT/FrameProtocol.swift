import CarouselControl
import CarouselPlatform
import CarouselWords

/// One message to publish: where, what, and whether the broker keeps it
/// for later subscribers (`retain`).
public struct MQTTMessage: Equatable, Sendable {
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool
    /// 0: at most once (events, replies, the screenshot); 1: at least once
    /// (availability, state, discovery: what must not be lost).
    public var qos: Int32

    public init(_ topic: String, _ payload: [UInt8], retain: Bool, qos: Int32 = 0) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.qos = qos
    }

    public init(_ topic: String, text: String, retain: Bool, qos: Int32 = 0) {
        self.init(topic, Array(text.utf8), retain: retain, qos: qos)
    }

    public var text: String { String(decoding: payload, as: UTF8.self) }
}

/// Who this frame is at the broker.
public struct FrameIdentity: Equatable, Sendable {
    /// The MQTT client id, also the Home Assistant device's identifier.
    public var clientID: String
    /// The topic everything of this frame goes under (`carouseld/kitchen`).
    public var topic: String
    /// Home Assistant's discovery prefix; empty: no discovery.
    public var discoveryPrefix: String
    /// carouseld's version, for the device card.
    public var version: String
    /// Whether the display has a backlight the daemon can dim: then a
    /// brightness number is announced too (`set display.brightness N`).
    public var hasBacklight: Bool
    /// The capabilities' entities these settings have announced, as their
    /// words declare them (`Capabilities.entities(shownWith:)`): pushed
    /// text's, the presence sensor's occupancy sensor when one is configured.
    public var capabilityEntities: [EntityWords]

    public init(clientID: String, topic: String, discoveryPrefix: String, version: String, hasBacklight: Bool = false,
                capabilityEntities: [EntityWords] = []) {
        self.clientID = clientID
        self.topic = topic
        self.discoveryPrefix = discoveryPrefix
        self.version = version
        self.hasBacklight = hasBacklight
        self.capabilityEntities = capabilityEntities
    }
}

/// The MQTT side of one frame, without any I/O: the topic layout, what a
/// command message asks for, the messages to publish, Home Assistant's
/// discovery. The daemon's libmosquitto glue carries these out.
///
/// Topics under `topic` (T):
/// * `T/availability`: `online` / `offline`, retained; the broker publishes
///   `offline` for us (our will) when the connection dies without a goodbye;
/// * `T/state`: the `status` reply's JSON, retained, on change;
/// * `T/event`: the control socket's event lines (not `didScroll` or `didZoom`, which are per frame);
/// * `T/command`: a request line as on the socket; its reply on `T/reply`;
/// * `T/screenshot`: the PNG `screenshot` makes;
/// * `P/all/command`, P being T without its last level (`carouseld/all/command`
///   for `carouseld/kitchen`): a command every frame under P takes; each
///   answers on its own `T/reply`. A one-level topic has no shared topic.
public struct FrameProtocol: Equatable, Sendable {
    public let identity: FrameIdentity

    public init(identity: FrameIdentity) { self.identity = identity }

    public var availabilityTopic: String { identity.topic + "/availability" }
    public var stateTopic: String { identity.topic + "/state" }
    public var eventTopic: String { identity.topic + "/event" }
    public var commandTopic: String { identity.topic + "/command" }
    public var replyTopic: String { identity.topic + "/reply" }
    public var screenshotTopic: String { identity.topic + "/screenshot" }

    /// The command topic every frame under the same parent shares, if the
    /// topic has a parent.
    public var sharedCommandTopic: String? {
        guard let slash = identity.topic.lastIndex(of: "/") else { return nil }
        return identity.topic[..<slash] + "/all/command"
    }

    /// What to subscribe to once connected.
    public var subscriptions: [String] {
        var topics = [commandTopic]
        if let shared = sharedCommandTopic, shared != commandTopic { topics.append(shared) }
        return topics
    }

    /// The will the broker publishes when we vanish (set before connecting).
    public var will: MQTTMessage { MQTTMessage(availabilityTopic, text: "offline", retain: true, qos: 1) }
    public var online: MQTTMessage { MQTTMessage(availabilityTopic, text: "online", retain: true, qos: 1) }
    /// Said on a clean stop (the will only covers an unclean one).
    public var offline: MQTTMessage { will }

    /// The longest command message taken, in bytes: the control socket's
    /// longest request line. A longer one is dropped before it is copied.
    public static let maximumPayload = ControlServer.maximumRequestBytes

    public func isCommandTopic(_ topic: String) -> Bool { topic == commandTopic || topic == sharedCommandTopic }

    /// What a message on a command topic asks for: a request of the
    /// control socket's language, or the error reply it gets instead.
    /// Refused here: `subscribe` (the events are on `T/event` already) and
    /// `screenshot PATH` (it would write a file on the board for whoever can
    /// publish to the broker); `screenshot` alone publishes the PNG.
    public static func request(payload: [UInt8]) -> Result<ControlRequest, ControlError> {
        guard let text = String(validating: payload, as: UTF8.self) else {
            return .failure(ControlError("a command must be UTF-8 text, as a line on the control socket"))
        }
        // One request per message; a trailing line end (mosquitto_pub -l, echo) is not a second one.
        var line = Substring(text)
        while let last = line.last, last == "\n" || last == "\r" { line = line.dropLast() }
        // A request whose words say so (text for the screen) may come in
        // several lines (a JSON payload templated by Home Assistant): they
        // are its lines, as `\n` says.
        let name = line.prefix { $0 != " " && $0 != "\t" }
        if ControlRequest.declaredRequests.contains(where: { $0.joinsLines && $0.name == name }) {
            line = Substring(line.replacing("\r\n", with: "\\n").replacing("\n", with: "\\n"))
        }
        guard !line.contains("\n") else {
            return .failure(ControlError("one request per message, got several lines"))
        }
        switch ControlRequest.parse(line: String(line)) {
        case let .failure(error):
            return .failure(error)
        case .success(.subscribe), .success(.subscribeChanges):
            return .failure(ControlError("subscribe is not taken over MQTT: the events are published on the event topic"))
        case .success(.screenshotPixels):
            return .failure(ControlError(
                "screenshot raw is for the control socket (a file sent with the line); plain screenshot publishes the PNG on the screenshot topic"))
        case .success(.screenshot(path: .some)):
            return .failure(ControlError(
                "screenshot PATH is not taken over MQTT (it writes a file on the board); plain screenshot publishes the PNG on the screenshot topic"))
        case let .success(request):
            return .success(request)
        }
    }

    public func reply(_ reply: ControlReply) -> MQTTMessage { MQTTMessage(replyTopic, text: reply.line, retain: false) }

    public func event(line: String) -> MQTTMessage { MQTTMessage(eventTopic, text: line, retain: false) }

    public func screenshot(png: [UInt8]) -> MQTTMessage { MQTTMessage(screenshotTopic, png, retain: false) }

    public func state(_ status: [String: JSONValue]) -> MQTTMessage {
        MQTTMessage(stateTopic, text: JSONValue.object(status).encoded, retain: true, qos: 1)
    }
}

/// The state topic's publisher: a `status` is published when it differs
/// from the last one published (leaving out what changes on its own every
/// frame or every millisecond: the frame count, the uptime, the offset in
/// flight and the deadlines), at most once per `minimumInterval`; changes
/// within it are coalesced into one message at its end. Time comes in as
/// an argument (µs), as in the model.
public struct StatePublisher: Equatable, Sendable {
    /// 250 ms: at most four a second, never one per frame.
    public static let defaultMinimumInterval: Int64 = 250_000
    public let minimumInterval: Int64
    /// Something may have changed since the last look.
    public private(set) var pending = true
    private var lastSentAt: Int64?
    private var lastKey: String?

    public init(minimumInterval: Int64 = StatePublisher.defaultMinimumInterval) {
        self.minimumInterval = minimumInterval
    }

    /// Fields that change by themselves; a status differing only in them is no change.
    static let volatile: Set<String> = ["frames", "uptime_ms", "offset", "next_ms", "idle_off_ms", "schedule_change_ms",
                                                 "dim_ms"]

    static func key(_ status: [String: JSONValue]) -> String {
        func strip(_ value: JSONValue) -> JSONValue {
            guard case let .object(fields) = value else { return value }
            return .object(fields.filter { !volatile.contains($0.key) }.mapValues(strip))
        }
        return strip(.object(status)).encoded
    }

    /// Something happened that may change the status (an event, a request, the display's power).
    public mutating func noteChange() { pending = true }

    /// A new connection: the next look publishes whatever the status is.
    public mutating func connected() {
        pending = true
        lastKey = nil
        lastSentAt = nil
    }

    /// When the loop must look (µs), if something is pending.
    public var deadline: Int64? {
        guard pending else { return nil }
        return lastSentAt.map { $0 + minimumInterval } ?? 0
    }

    /// At `now`: the status to publish, if one is due and it changed.
    public mutating func take(now: Int64, status: () -> [String: JSONValue]) -> [String: JSONValue]? {
        guard let due = deadline, now >= due else { return nil }
        pending = false
        let current = status()
        let key = Self.key(current)
        guard key != lastKey else { return nil }
        lastKey = key
        lastSentAt = now
        return current
    }
}
