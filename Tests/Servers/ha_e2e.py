#!/usr/bin/env python3
"""Home Assistant itself as the client of carouseld's MQTT side: a real Home
Assistant 2024.3.3 (the last release for Debian 12's Python 3.11) from PyPI,
in a virtual environment made here and kept in .build-ha/ (made again when
ha-requirements.txt or the Python changes), with Debian's Mosquitto
on loopback and carouseld on the offscreen display, as a new user would set
them up: the MQTT integration's config entry pointed at the broker, nothing
else configured for the frame.

Home Assistant is driven by its own automations (written into its
configuration before it starts): one calls the service a message on
`ha_e2e/drive` names (button.press, switch.turn_on, number.set_value, ...)
on the entity it names, one logs every state change of the frame's
entities to Home Assistant's log, one logs all their states on request.
The test reads that log, and carouseld's own status over its socket.

Checks: every entity carouseld announces is discovered (its state in Home
Assistant, its unique id in the entity registry); each is driven through
Home Assistant and its effect seen on the frame; after every drive, every
entity's state in Home Assistant agrees with carouseld's status by a rule
of this script, written as a user reads the entity (an entity with no rule
fails: a new one must say how it reads); Home Assistant logs no warning or
error (a template that reads a missing field is a warning there); a frame
reloaded with `discovery_prefix` empty leaves Home Assistant (entities and
registry entries), one that stops reads unavailable. The frames: frame1
with `[autoplay] enabled = false`, frame2 with a presence sensor (its
Presence entity off, as the status says).

Usage: Tests/Servers/ha_e2e.py [BINARY]   (default .build/debug/carouseld)
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from checks import DEBIAN_PYTHON, REPO, CheckSuite, Failure, free_port, pinned_venv, until
from mqttlib import Broker, Daemon, Watcher, pub

REQUIREMENTS = os.path.join(REPO, "Tests/Servers/ha-requirements.txt")
CACHE = os.path.join(REPO, ".build-ha")
# Debian's own Python (scripts/setup.sh installs python3-venv), not whatever
# python3 comes first on the PATH: Home Assistant 2024.3 takes 3.11 or 3.12.
PYTHON = "/usr/bin/python3"
LOGGER = "carouseld_ha_e2e"
# What Home Assistant 2024.3.3 says on every start here, and nothing to act on.
EXPECTED_WARNINGS = (
    "Skipping pip installation of required modules",  # --skip-pip: the venv has everything
    "Support for the running Python version 3.11",  # the reason 2024.3 is the release tested
)


def venv():
    """The virtual environment's `hass`, made unless .build-ha/ has the one
    the requirements and this Python make; and whether it was made now.
    --no-compile: most of Home Assistant's 6,700 modules (every integration)
    are never imported here."""
    if PYTHON != DEBIAN_PYTHON:
        raise Failure(f"Home Assistant runs on Debian's Python, not {PYTHON}")
    return pinned_venv(REQUIREMENTS, CACHE, "hass", pip_options=("--no-compile",))


class Entity:
    """One entity as carouseld announces it (its discovery config) and as
    Home Assistant names it."""

    def __init__(self, topic, config):
        _, self.component, self.node, self.object, _ = topic.split("/")
        self.config = config
        self.entity_id = f"{self.component}.{config['object_id']}"
        self.kind = f"{self.component}/{self.object}"

    def __repr__(self):
        return self.entity_id


def basename(path):
    return (path or "").split("/")[-1]


# How each entity reads, as a user reads it, from carouseld's status: the
# state Home Assistant must show, or None for an entity whose state is no
# part of the status (a button's last press, the screenshot's time).
# Written here, not from the entity's own template: a template that reads
# the wrong field must disagree with this.
RULES = {
    "button/next": None,
    "button/previous": None,
    "button/play": None,
    "button/pause": None,
    "image/screenshot": None,
    # On: autoplay is on (it pages by itself unless something holds it for a
    # while); off with `[autoplay] enabled = false` until turned on.
    "switch/autoplay": lambda st: "on" if st["autoplay"]["enabled"] else "off",
    "switch/display": lambda st: "on" if st["display"]["power"] == "on" else "off",
    "sensor/picture": lambda st: basename(st["image"]),
    "number/interval": lambda st: float(st["autoplay"]["interval"]),
    "number/brightness": lambda st: float(st["display"]["brightness"]),
    "text/text": lambda st: (st["overlay"]["text"] or "")[:255],
    "binary_sensor/presence": lambda st: "on" if st["presence"] and st["presence"]["present"] else "off",
}


def same(want, state):
    if isinstance(want, float):
        try:
            return float(state) == want
        except (TypeError, ValueError):
            return False
    return want == state


class HomeAssistant:
    """`hass -c FOLDER --skip-pip` with a configuration written here: the
    MQTT config entry for `broker`, and the automations that drive and
    report `entities` (those of every frame, from their discovery)."""

    def __init__(self, hass, folder, broker, entities):
        self.folder = folder
        self.log_path = os.path.join(folder, "home-assistant.log")
        self.entities = entities
        self.http_port = free_port()
        os.makedirs(os.path.join(folder, ".storage"))
        self.write_configuration(broker)
        self.out = open(os.path.join(folder, "hass.out"), "wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen([hass, "-c", folder, "--skip-pip"], stdout=self.out, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def write_configuration(self, broker):
        ids = [e.entity_id for e in self.entities]
        with open(os.path.join(self.folder, "configuration.yaml"), "w") as f:
            f.write(f"""homeassistant:
  name: carouseld test
  latitude: 52.52
  longitude: 13.40
  elevation: 34
  unit_system: metric
  time_zone: UTC
  country: DE
  currency: EUR
http:
  server_host: 127.0.0.1
  server_port: {self.http_port}
logger:
  default: warning
  logs:
    {LOGGER}: info
    homeassistant.bootstrap: info
    homeassistant.components.mqtt.client: info
system_log:
automation: !include automations.yaml
""")
        log = {"service": "system_log.write", "data": {"logger": LOGGER, "level": "info"}}
        automations = [
            # The driver: the service a message names, on the entity it names.
            {"id": "carouseld_drive", "alias": "carouseld: drive an entity", "mode": "queued", "max": 100,
             "trigger": [{"platform": "mqtt", "topic": "ha_e2e/drive"}],
             "action": [
                 {**log, "data": {**log["data"], "message":
                                  "drive {{ trigger.payload_json.id }}: {{ trigger.payload_json.service }}"
                                  " {{ trigger.payload_json.entity_id }}"}},
                 {"service": "{{ trigger.payload_json.service }}",
                  "target": {"entity_id": "{{ trigger.payload_json.entity_id }}"},
                  "data": "{{ trigger.payload_json.data }}"},
             ]},
            # What a user does to refresh the Screen image (README): send `screenshot`.
            {"id": "carouseld_screenshot", "alias": "carouseld: ask for a screenshot", "mode": "queued",
             "trigger": [{"platform": "mqtt", "topic": "ha_e2e/screenshot"}],
             "action": [{"service": "mqtt.publish",
                         "data": {"topic": "{{ trigger.payload }}", "payload": "screenshot"}}]},
            # Every state the frame's entities take, in order.
            {"id": "carouseld_states", "alias": "carouseld: log the states", "mode": "queued", "max": 1000,
             "trigger": [{"platform": "state", "entity_id": ids}],
             "action": [{**log, "data": {**log["data"], "message":
                                         "state {{ trigger.entity_id }} "
                                         "{{ (trigger.to_state.state if trigger.to_state else none) | to_json }}"}}]},
            # All of them at once, on request (null: no such entity).
            {"id": "carouseld_snapshot", "alias": "carouseld: log all states", "mode": "queued",
             "trigger": [{"platform": "mqtt", "topic": "ha_e2e/snapshot"}],
             "action": [
                 {"repeat": {"for_each": ids, "sequence": [
                     {**log, "data": {**log["data"], "message":
                                      "state {{ repeat.item }} {% set s = expand(repeat.item) %}"
                                      "{{ (s[0].state if s else none) | to_json }}"}},
                     # Where Home Assistant serves an image entity's picture.
                     {**log, "data": {**log["data"], "message":
                                      "picture {{ repeat.item }} {{ state_attr(repeat.item, 'entity_picture') | to_json }}"}},
                 ]}},
                 {**log, "data": {**log["data"], "message": "snapshot {{ trigger.payload }} done"}},
             ]},
            {"id": "carouseld_started", "alias": "carouseld: started", "mode": "single",
             "trigger": [{"platform": "homeassistant", "event": "start"}],
             "action": [{**log, "data": {**log["data"], "message": "started"}}]},
        ]
        # JSON is YAML: no quoting of templates to get wrong.
        with open(os.path.join(self.folder, "automations.yaml"), "w") as f:
            json.dump(automations, f, indent=1)
        # The MQTT integration as its config flow stores it (Settings, Devices
        # & services, MQTT, the broker's address), discovery on by default.
        entry = {"entry_id": "0123456789abcdef0123456789abcdef", "version": 1, "minor_version": 1, "domain": "mqtt",
                 "title": "127.0.0.1", "data": {"broker": "127.0.0.1", "port": broker.port, "discovery": True},
                 "options": {}, "pref_disable_new_entities": False, "pref_disable_polling": False,
                 "source": "user", "unique_id": None, "disabled_by": None}
        with open(os.path.join(self.folder, ".storage", "core.config_entries"), "w") as f:
            json.dump({"version": 1, "minor_version": 1, "key": "core.config_entries",
                       "data": {"entries": [entry]}}, f, indent=1)

    @property
    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def ours(self):
        """This test's lines in Home Assistant's log, in order."""
        return re.findall(rf"^\S+ \S+ INFO \([^)]*\) \[{LOGGER}\] (.*)$", self.log, re.M)

    def states(self):
        """Every entity's latest state as Home Assistant logged it."""
        latest = {}
        for line in self.ours():
            m = re.match(r"state (\S+) (.*)$", line)
            if m:
                latest[m.group(1)] = json.loads(m.group(2))
        return latest

    def pictures(self):
        """Every entity's latest `entity_picture` as Home Assistant logged it."""
        return {m.group(1): json.loads(m.group(2))
                for m in (re.match(r"picture (\S+) (.*)$", line) for line in self.ours()) if m}

    def alive(self):
        if self.proc.poll() is not None:
            raise Failure(f"Home Assistant exited ({self.proc.returncode}): {self.log[-1500:]}")
        return True

    def snapshot(self, broker, tag):
        """All the entities' states, logged by Home Assistant now. Asked
        again every few seconds: a request sent before the automation's MQTT
        trigger has subscribed is lost (Home Assistant subscribes after it
        says it started)."""
        deadline = time.monotonic() + 60
        while True:
            pub(broker, "ha_e2e/snapshot", tag)
            try:
                until(f"Home Assistant's snapshot {tag}",
                      lambda: self.alive() and f"snapshot {tag} done" in self.ours(), timeout=3)
                return self.states()
            except Failure:
                if time.monotonic() > deadline:
                    raise

    def snapshot_until(self, broker, what, predicate, timeout):
        """Snapshots, a second apart (Home Assistant's own pace: discovery
        and removal happen after the broker's messages), until `predicate`
        holds for the states."""
        tries = [0]

        def holds():
            tries[0] += 1
            if predicate(self.snapshot(broker, f"{what.split()[0]}-{tries[0]}")):
                return True
            time.sleep(1)
            return False
        until(what, holds, timeout=timeout)

    def problems(self):
        """Warning and error lines but the expected ones (each record's first line)."""
        lines = re.findall(r"^\S+ \S+ (?:WARNING|ERROR|CRITICAL) .*$", self.log, re.M)
        return [l for l in lines if not any(w in l for w in EXPECTED_WARNINGS)]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.out.close()


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, ".build/debug/carouseld"))
    for tool in ("mosquitto", "mosquitto_sub", "mosquitto_pub", "stdbuf"):
        if not shutil.which(tool):
            print(f"ha: {tool} is missing (scripts/setup.sh installs it)", file=sys.stderr)
            return 1
    s = CheckSuite(binary, "carouseld-ha-")
    # Started as root, mosquitto drops to its own user: it must reach its files.
    os.chmod(s.folder, 0o755)
    stops = []  # what lives across the checks, stopped at the end
    world = {}

    def frame_entities(watcher, client_id):
        """Every entity the frame announces: its discovery is published
        before its first state on the same connection, so once the state is
        here, so is all of it."""
        watcher.wait(f"{client_id}'s first state", f"carouseld/{client_id}/state")
        topics = sorted({t for _, t, p in list(watcher.messages)
                         if p and t.startswith("homeassistant/") and t.split("/")[2:3] == [client_id]})
        return [Entity(t, json.loads(watcher.on(t)[-1][1])) for t in topics]

    def setup():
        t0 = time.monotonic()
        hass, made = venv()
        s.figures["venv s (" + ("made now" if made else "reused") + ")"] = round(time.monotonic() - t0, 1)
        b = Broker(s.folder).start()
        stops.append(b.kill)
        w = Watcher(b, "#")
        stops.append(w.close)
        mqtt = {"broker": f"mqtt://127.0.0.1:{b.port}", "keepalive": "5"}
        # frame1: autoplay off in the INI, as the issue found it; an advance
        # a second after it is turned on, so that turning it on is seen.
        f1 = Daemon(binary, tempfile.mkdtemp(dir=s.folder), {**mqtt, "client_id": "frame1"},
                    "[autoplay]\nenabled = false\ninterval = 1\ntransition = 0.2\nresume_delay = 0.5")
        stops.append(f1.stop)
        # frame2: a presence sensor (a key no device here has: nobody there).
        f2 = Daemon(binary, tempfile.mkdtemp(dir=s.folder), {**mqtt, "client_id": "frame2"},
                    "[power]\npresence = key:KEY_F13")
        stops.append(f2.stop)
        # Announced before Home Assistant starts: its automations name them.
        e1 = frame_entities(w, "frame1")
        e2 = frame_entities(w, "frame2")
        ha = HomeAssistant(hass, os.path.join(s.folder, "ha"), b, e1 + e2)
        stops.append(ha.stop)
        world.update(broker=b, frames={"frame1": (f1, e1), "frame2": (f2, e2)}, ha=ha)
        until("Home Assistant started (its start automation's line)",
              lambda: ha.alive() and "started" in ha.ours(), timeout=300)
        s.figures["Home Assistant start s"] = round(time.monotonic() - ha.started, 1)
        # Connected to the broker: its MQTT trigger answers a message sent through it. (Home
        # Assistant's own log line for the connection is its wording, not this test's to pin.)
        ha.snapshot(b, "connected")
        return f"{hass} ({'made' if made else 'reused'}), {len(e1) + len(e2)} entities announced"

    def discovered():
        ha, b = world["ha"], world["broker"]
        everything = [e for _, es in world["frames"].values() for e in es]
        try:
            ha.snapshot_until(b, "discovery of every announced entity in Home Assistant",
                              lambda states: all(states.get(e.entity_id) is not None for e in everything), 90)
        except Failure as e:
            states = ha.states()
            raise Failure(f"{e}; not discovered: {[e.entity_id for e in everything if states.get(e.entity_id) is None]}")
        unruled = sorted({e.kind for e in everything if e.kind not in RULES})
        if unruled:
            raise Failure(f"no rule says how these read (add one to RULES): {unruled}")
        agree("discovery")
        if ha.states()[entity("frame1", "switch/autoplay").entity_id] != "off":
            raise Failure("the Autoplay switch reads on with [autoplay] enabled = false")
        return ", ".join(sorted(e.entity_id for e in everything))

    def entity(frame, kind):
        found = [e for e in world["frames"][frame][1] if e.kind == kind]
        if not found:
            raise Failure(f"{frame} announced no {kind}")
        return found[0]

    def status(frame):
        return world["frames"][frame][0].ask("status")

    def disagreements():
        ha_states = world["ha"].states()
        wrong = []
        for name, (daemon, entities) in world["frames"].items():
            st = daemon.ask("status")
            for e in entities:
                rule = RULES[e.kind]
                if rule is None:
                    continue
                want, got = rule(st), ha_states.get(e.entity_id)
                if not same(want, got):
                    wrong.append(f"{e.entity_id}: Home Assistant {got!r}, the status says {want!r}")
        return wrong

    def agree(after):
        """Every entity of every frame as the frames' status says, in Home Assistant."""
        last = [[]]

        def none_wrong():
            world["ha"].alive()
            last[0] = disagreements()
            return not last[0]
        try:
            until(f"Home Assistant agreeing with the frames after {after}", none_wrong, timeout=30)
        except Failure as e:
            raise Failure(f"{e}: {'; '.join(last[0])}")

    drives = [0]

    def drive(frame, kind, service, **data):
        """Home Assistant's automation calls `service` on the entity."""
        e = entity(frame, kind)
        drives[0] += 1
        n = drives[0]
        pub(world["broker"], "ha_e2e/drive", json.dumps({"id": n, "service": service, "entity_id": e.entity_id,
                                                          "data": data}))
        until(f"Home Assistant's drive {n} ({service} {e.entity_id})",
              lambda: world["ha"].alive() and any(l.startswith(f"drive {n}:") for l in world["ha"].ours()))
        return e

    def at_rest(frame, what, check):
        return until(what, lambda: (lambda st: st if st["state"] == "idle" and check(st) else None)(status(frame)))

    def buttons():
        before = world["ha"].states()
        for _ in range(2):
            nxt = drive("frame1", "button/next", "button.press")
        at_rest("frame1", "picture 3 after two Next presses", lambda st: st["index"] == 2)
        agree("two Next presses")
        prev = drive("frame1", "button/previous", "button.press")
        at_rest("frame1", "picture 2 after Previous", lambda st: st["index"] == 1)
        agree("Previous")
        now = world["ha"].states()
        for e in (nxt, prev):  # a button's state is its last press
            if now.get(e.entity_id) in (None, "unknown", before.get(e.entity_id)):
                raise Failure(f"{e.entity_id} reads {now.get(e.entity_id)!r} after a press")
        return f"index 2, then 1; {basename(status('frame1')['image'])} on screen"

    def autoplay():
        sw = entity("frame1", "switch/autoplay")
        start = status("frame1")["index"]
        drive("frame1", "switch/autoplay", "switch.turn_on")
        # On means the pictures move, [autoplay] enabled = false or not.
        until("autoplay paging after the switch turned on", lambda: status("frame1")["index"] != start)
        until("the switch on in Home Assistant", lambda: world["ha"].states().get(sw.entity_id) == "on")
        drive("frame1", "switch/autoplay", "switch.turn_off")
        st = at_rest("frame1", "autoplay off", lambda st: not st["autoplay"]["enabled"])
        if st["autoplay"]["running"] or "command" not in st["autoplay"]["paused_by"]:
            raise Failure(f"autoplay after the switch turned off: {st['autoplay']}")
        agree("the Autoplay switch off")
        return f"paged from {start} to {st['index']} while on"

    def play_pause():
        # After the Autoplay switch turned off, autoplay is paused by a command.
        drive("frame1", "button/play", "button.press")
        st = until("the pause lifted by Play",
                   lambda: (lambda st: st if "command" not in st["autoplay"]["paused_by"] else None)(status("frame1")))
        if st["autoplay"]["enabled"]:
            raise Failure(f"Play turned on autoplay that [autoplay] enabled = false keeps off: {st['autoplay']}")
        drive("frame1", "button/pause", "button.press")
        until("paused by Pause", lambda: "command" in status("frame1")["autoplay"]["paused_by"])
        agree("Play and Pause")
        return "Play lifts the pause and leaves autoplay off; Pause holds"

    def interval():
        drive("frame1", "number/interval", "number.set_value", value=7.5)
        until("interval 7.5", lambda: status("frame1")["autoplay"]["interval"] == 7.5)
        agree("Interval 7.5")

    def display():
        drive("frame1", "switch/display", "switch.turn_off")
        until("the display off", lambda: status("frame1")["display"]["power"] == "off")
        agree("the Display switch off")
        drive("frame1", "switch/display", "switch.turn_on")
        until("the display on", lambda: status("frame1")["display"]["power"] == "on")
        agree("the Display switch on")

    def text():
        # What a user types shows as typed: quotes, a backslash, and `\n`
        # (the README's way to end a line) a line break.
        for typed, shown in (("Hello from Home Assistant", "Hello from Home Assistant"),
                             ('"Doorbell" and "parcel"', '"Doorbell" and "parcel"'),
                             ('"Hi"', '"Hi"'),
                             ("Rain \\ snow\\nfrom 16:00", "Rain \\ snow\nfrom 16:00")):
            drive("frame1", "text/text", "text.set_value", value=typed)
            try:
                until(f"the text {shown!r} on screen", lambda: status("frame1")["overlay"]["text"] == shown, timeout=10)
            except Failure as e:
                raise Failure(f"{e}; the text set in Home Assistant was {typed!r}, the frame shows "
                              f"{status('frame1')['overlay']['text']!r}")
            agree(f"the text {typed!r} set")
        drive("frame1", "text/text", "text.set_value", value="")
        until("the text cleared", lambda: status("frame1")["overlay"]["text"] is None)
        agree("the text emptied")

    def screen():
        e = entity("frame1", "image/screenshot")
        before = world["ha"].states().get(e.entity_id)
        pub(world["broker"], "ha_e2e/screenshot", "carouseld/frame1/command")
        # An image entity's state is when its picture last changed.
        got = until("a new picture in the Screen entity",
                    lambda: (lambda now: now if now not in (None, "unknown", before) else None)(
                        world["ha"].states().get(e.entity_id)))
        agree("a screenshot")
        # The picture itself, as Home Assistant's frontend fetches it.
        ha = world["ha"]
        ha.snapshot(world["broker"], "screen")
        url = ha.pictures().get(e.entity_id)
        if not url:
            raise Failure(f"{e.entity_id} has no entity_picture")
        with urllib.request.urlopen(f"http://127.0.0.1:{ha.http_port}{url}", timeout=30) as r:
            png = r.read()
        # A PNG of the offscreen display's 320x200 (IHDR's width and height).
        if png[:8] != b"\x89PNG\r\n\x1a\n" or png[16:24] != (320).to_bytes(4, "big") + (200).to_bytes(4, "big"):
            raise Failure(f"Home Assistant serves {len(png)} bytes that are no 320x200 PNG: {png[:32]!r}")
        return f"{e.entity_id} at {got}, a 320x200 PNG of {len(png)} bytes from Home Assistant"

    def presence():
        e = entity("frame2", "binary_sensor/presence")
        st = status("frame2")
        if st["presence"] is None or st["presence"]["present"] is not False:
            raise Failure(f"frame2's presence: {st['presence']}")
        agree("nothing")
        if world["ha"].states().get(e.entity_id) != "off":
            raise Failure(f"{e.entity_id} reads {world['ha'].states().get(e.entity_id)!r}")
        if any(x.kind == "binary_sensor/presence" for x in world["frames"]["frame1"][1]):
            raise Failure("frame1 has no presence sensor, yet announces a Presence entity")

    def removed():
        ha, b = world["ha"], world["broker"]
        f2, e2 = world["frames"]["frame2"]
        f2.write_ini({"broker": f"mqtt://127.0.0.1:{b.port}", "keepalive": "5", "client_id": "frame2",
                      "discovery_prefix": ""}, "[power]\npresence = key:KEY_F13")
        f2.proc.send_signal(signal.SIGHUP)
        ha.snapshot_until(b, "removal of frame2's entities from Home Assistant",
                          lambda states: all(states.get(e.entity_id) is None for e in e2), 60)
        return f"{len(e2)} entities removed"

    def unavailable():
        f1, e1 = world["frames"]["frame1"]
        f1.stop()
        until("frame1's entities unavailable in Home Assistant after it stopped",
              lambda: all(world["ha"].states().get(e.entity_id) == "unavailable" for e in e1))

    def registry_and_log():
        ha = world["ha"]
        ha.stop()  # Home Assistant writes its registry on the way out
        with open(os.path.join(ha.folder, ".storage", "core.entity_registry")) as f:
            registry = {e["unique_id"]: e for e in json.load(f)["data"]["entities"] if e["platform"] == "mqtt"}
        for e in world["frames"]["frame1"][1]:
            r = registry.get(e.config["unique_id"])
            if r is None or r["entity_id"] != e.entity_id:
                raise Failure(f"{e.config['unique_id']} in the entity registry: {r}")
        # frame2 left with its discovery: its entities go with it.
        left = [e.config["unique_id"] for e in world["frames"]["frame2"][1] if e.config["unique_id"] in registry]
        if left:
            raise Failure(f"still in the entity registry after frame2's discovery was removed: {left}")
        problems = ha.problems()
        if problems:
            raise Failure(f"{len(problems)} warning or error lines in Home Assistant's log: {problems[:5]}")
        return f"{len(registry)} MQTT entities registered, no warning"

    checks = [
        ("Home Assistant 2024.3.3 from PyPI starts with the MQTT config entry; two frames announce themselves", setup),
        ("every entity announced is discovered, and reads as the status says (Autoplay off with enabled = false)",
         discovered),
        ("the Next and Previous buttons page the frame", buttons),
        ("the Autoplay switch turns autoplay on (enabled = false in the INI) and off", autoplay),
        ("the Play and Pause buttons lift a pause (autoplay stays as the INI has it) and pause", play_pause),
        ("the Interval number sets the interval", interval),
        ("the Display switch turns the display off and on", display),
        ("the Text entity shows a text and clears it", text),
        ("the Screen image takes the screenshot an automation asks for", screen),
        ("the Presence sensor of a frame with a sensor reads off, and a frame without announces none", presence),
        ("a frame reloaded with discovery_prefix empty leaves Home Assistant", removed),
        ("a frame that stops reads unavailable in Home Assistant", unavailable),
        ("the entity registry holds the remaining frame's unique ids; Home Assistant logged no warning or error",
         registry_and_log),
    ]
    t0 = time.monotonic()
    try:
        for name, fn in checks:
            if name != checks[0][0] and "ha" not in world:
                s.failed.append((name, "not run: Home Assistant did not start"))
                print(f"FAIL {name}: not run", flush=True)
                continue
            s.check(name, fn)
    finally:
        for stop in reversed(stops):
            try:
                stop()
            except Exception:
                pass
    s.figures["stage s"] = round(time.monotonic() - t0, 1)
    print(json.dumps(s.figures, indent=1))
    if s.failed and "ha" in world:
        print(f"Home Assistant's log: {world['ha'].log_path}")
    else:
        shutil.rmtree(s.folder, ignore_errors=True)
    for name, why in s.failed:
        print(f"FAILED {name}: {why}")
    print(f"ha: {len(s.passed)} passed, {len(s.failed)} failed")
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
