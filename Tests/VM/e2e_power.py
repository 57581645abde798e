"""The display's power on QEMU's VGA (which stops scanning out when the
CRTC goes off; bochs-display keeps the last frame): `display off` and on
with DPMS, idle_off and the schedule; the backlight of the VM's test
module; a presence sensor, a key and a gpio-sim line."""
import os
import re
import signal
import time

from e2e_support import SUBSCRIBE, Failure, ask_guest, loop_switches


POWER_SOCKET = "/tmp/e2e-power.sock"
DPMS = "/sys/class/drm/card0-Virtual-1/dpms"


def display_power(s, touch):
    """`display off` over the socket: the connector's DPMS state is Off in
    sysfs and the capture black (QEMU's VGA stops scanning out; its
    bochs-display would keep the last frame); the loop sleeps (wake-ups
    counted over 30 s); a swipe wakes it without paging; a monitor that
    goes away while off does not stop the wake. Figures: wake-ups per
    minute while off, and the daemon's own time from the waking touch's
    time stamp to the flip that put the picture back."""
    vm = s.vm
    extra = {"control": {"socket": POWER_SOCKET}}

    def ask(line):
        return ask_guest(vm, POWER_SOCKET, line)

    def dpms():
        return vm.run(["cat", DPMS], timeout=30).out.strip()

    def power():
        return ask("status")["display"]["power"]

    def black(name):
        w, h, rgb = vm.wait_screen_stable(interval=0.3, stable_for=1.5, timeout=90)
        vm.screendump(os.path.join(s.out, f"{name}.png"))
        brightest = max(rgb[::97])
        if brightest > 8:
            raise Failure(f"the screen is not black with the display off (a byte of {brightest}; {name}.png)")

    d = s.start(extra)
    s.wait_log(d, r"first picture on screen")
    s.screen_matches(0, "16-before-display-off")
    events = vm.spawn(["python3", "-u", "-c", SUBSCRIBE, POWER_SOCKET])
    try:
        events.wait_output(r'"ok":true', timeout=60)
        if dpms() != "On":
            raise Failure(f"DPMS reads {dpms()!r} before display off")
        reply = ask("display off")
        if reply.get("ok") is not True or reply["display"]["power"] != "off":
            raise Failure(f"display off: {reply}")
        if "display" not in reply["autoplay"]["paused_by"]:
            raise Failure(f"autoplay not paused by the display: {reply['autoplay']}")
        events.wait_output(r'"event":"displayOff"', timeout=30)
        if dpms() != "Off":
            raise Failure(f"DPMS reads {dpms()!r} after display off")
        black("17-display-off")

        # Asleep: count the daemon's wake-ups (voluntary context switches)
        # over 30 s, per thread: the event loop's own thread, and every
        # thread alive at both ends (libdispatch's idle decoder workers
        # exit on their own meanwhile, taking their counts with them).
        pid = vm.run("pidof carouseld", timeout=30).out.split()[0]

        def switches():
            text = vm.run(["sh", "-c", f"for t in /proc/{pid}/task/*; do echo ${{t##*/}} "
                           "$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' $t/status); done"], timeout=30).out
            return {int(t): int(n) for t, n in (line.split() for line in text.splitlines() if len(line.split()) == 2)}
        frames_before = ask("status")["frames"]
        a = switches()
        time.sleep(30)
        b = switches()
        loop = b[int(pid)] - a[int(pid)]
        others = sum(b[t] - a[t] for t in a if t in b and t != int(pid))
        s.figures["display off: event loop wake-ups per minute"] = loop * 2
        s.figures["display off: other threads' wake-ups per minute"] = others * 2
        s.figures["display off: threads before, after"] = f"{len(a)}, {len(b)}"
        if ask("status")["frames"] != frames_before:
            raise Failure("frames were presented while the display was off")
        if loop > 1:
            raise Failure(f"the event loop woke {loop} times in 30 s with the display off")

        # A swipe wakes it and is swallowed: the same picture, no paging (a
        # fling, which would page whatever the half-way rule said).
        touch.swipe(1000, 400, 300, 400, ms=250)
        m = s.wait_log(d, r"display: picture back on screen (\d+) ms after the waking touch")
        s.figures["display on: waking touch to picture on screen ms"] = int(m.group(1))
        events.wait_output(r'"event":"displayOn"', timeout=30)
        if dpms() != "On":
            raise Failure(f"DPMS reads {dpms()!r} after the waking touch")
        s.screen_matches(0, "18-woken-by-a-swipe")
        status = ask("status")
        if status["index"] != 0 or status["display"]["power"] != "on":
            raise Failure(f"after the waking swipe: {status}")
        if "didEndDecelerating" in d.err or "willBeginDragging" in d.err:
            raise Failure("the waking swipe reached the carousel")

        # Off, the monitor goes away (standby HDMI drops hotplug): no
        # re-modeset, no crash; `display on` wakes it, and it is drawn again
        # once the monitor is back.
        ask("display off")
        vm.hotplug(False)
        time.sleep(2)
        if d.exited or power() != "off" or dpms() != "Off":
            raise Failure(f"unplugged while off: exited {d.exited}, power {power() if not d.exited else '-'}, DPMS {dpms()}")
        vm.hotplug(True)
        time.sleep(2)
        if dpms() != "Off":
            raise Failure(f"replugged while off: DPMS reads {dpms()!r}")
        reply = ask("display on")
        if reply.get("ok") is not True or reply["display"]["power"] != "on":
            raise Failure(f"display on: {reply}")
        s.wait_log(d, r"(?s)display on \(command\).*picture back on screen")
        s.screen_matches(0, "19-display-on-after-replug")
        # A touch now is an ordinary touch again: it pages.
        touch.drag_past_half(1100, 400, 200, 400)
        s.wait_log(d, r"event didEndDecelerating")
        s.screen_matches(1, "20-swipe-after-wake")
        s.stop(d)
    finally:
        events.terminate()

    # The legacy interface: the connector's DPMS property; a tap wakes it
    # and selects nothing.
    legacy = {**extra, "display": {"api": "legacy"}}
    d = s.start(legacy)
    if "(legacy)" not in d.err:
        raise Failure("the display line does not say legacy")
    s.wait_log(d, r"first picture on screen")
    reply = ask("display off")
    if reply.get("ok") is not True or dpms() != "Off":
        raise Failure(f"legacy display off: {reply}, DPMS {dpms()!r}")
    black("21-legacy-display-off")
    touch.tap(640, 400, ms=60)
    m = s.wait_log(d, r"display: picture back on screen (\d+) ms after the waking touch")
    s.figures["display on (legacy): waking touch to picture on screen ms"] = int(m.group(1))
    if dpms() != "On":
        raise Failure(f"legacy: DPMS reads {dpms()!r} after the waking tap")
    s.screen_matches(0, "22-legacy-woken-by-a-tap", legacy)
    if re.search(r"select \d", d.err):
        raise Failure("the waking tap selected")
    touch.tap(640, 400, ms=60)
    s.wait_log(d, r"select 0")
    s.stop(d)

    # [power] idle_off: six seconds without use and the display goes off by
    # itself; a touch wakes it.
    idle = {**extra, "power": {"idle_off": "0.1"}}
    d = s.start(idle)
    s.wait_log(d, r"display off \(idle\)", timeout=90)
    if dpms() != "Off" or ask("status")["display"]["power"] != "off":
        raise Failure(f"idle_off: DPMS {dpms()!r}")
    black("23-idle-off")
    touch.tap(640, 400, ms=60)
    s.wait_log(d, r"display on \(touch\)")
    s.screen_matches(0, "24-woken-after-idle-off")
    s.stop(d)

    # [power] schedule: started outside its on-time the daemon shows its
    # picture, then goes dark; the wall clock set into the on-time (date -s,
    # as an NTP step does) switches it on at once, through the timerfd that
    # TFD_TIMER_CANCEL_ON_SET wakes.
    hour = int(vm.run(["date", "+%H"], timeout=30).out.strip())
    start, end = (hour + 2) % 24, (hour + 3) % 24
    d = s.start({**extra, "power": {"schedule": f"daily {start:02d}:00-{end:02d}:00"}})
    s.wait_log(d, r"first picture on screen")
    s.wait_log(d, r"display off \(schedule\)")
    if dpms() != "Off" or ask("status")["display"]["schedule"] != "off":
        raise Failure(f"outside the schedule: DPMS {dpms()!r}")
    black("25-outside-the-schedule")
    vm.run(["date", "-s", f"{start:02d}:30"], timeout=30, check=True)
    s.wait_log(d, r"the wall clock was set")
    s.wait_log(d, r"display on \(schedule\)")
    if dpms() != "On" or ask("status")["display"]["schedule"] != "on":
        raise Failure(f"the clock set into the on-time: DPMS {dpms()!r}")
    s.screen_matches(0, "26-schedule-on-after-the-clock-was-set")
    s.stop(d)


PRESENCE_SOCKET = "/tmp/e2e-presence.sock"
# A presence sensor wired as a key (a PIR as gpio-key): a uinput device with
# one key, KEY_F13, driven line by line ("down", "up", "quit").
KEY_SENSOR = ("import sys, time\n"
              "from evdev import UInput, ecodes as e\n"
              "ui = UInput({e.EV_KEY: [e.KEY_F13]}, name='e2e PIR key')\n"
              "print('ready', ui.devnode, flush=True)\n"
              "for line in sys.stdin:\n"
              "    word = line.split()[0]\n"
              "    if word == 'quit': break\n"
              "    ui.write(e.EV_KEY, e.KEY_F13, 1 if word == 'down' else 0); ui.syn()\n"
              "    print('ok', word, flush=True)\n"
              "ui.close()\n")
GPIO_SIM = "/sys/kernel/config/gpio-sim/e2e"


def presence(s, touch):
    """[power] presence on the real kernel: a key sensor (uinput, KEY_F13)
    and a GPIO line of gpio-sim (built from Debian's kernel source by
    build-assets.sh), by the line's name. Each: idle_off darkens the display,
    the loop sleeps with the sensor open (wake-ups counted over 30 s), the
    sensor's edge wakes it (DPMS On, the same picture, no page changed, no
    touch swallowed), presence holds it past idle_off, and idle_off after
    presence ends darkens it again. The GPIO line also shows a bounce shorter
    than the debounce changing nothing. Figures: the daemon's time from the
    sensor's edge (the event's kernel time stamp) to the flip that put the
    picture back, and the wake-ups per minute at rest."""
    vm = s.vm

    def ask(line):
        return ask_guest(vm, PRESENCE_SOCKET, line)

    def dpms():
        return vm.run(["cat", DPMS], timeout=30).out.strip()

    def loop_wakeups_per_minute(label):
        pid = vm.run("pidof carouseld", timeout=30).out.split()[0]

        a = loop_switches(vm, pid)
        time.sleep(30)
        b = loop_switches(vm, pid)
        s.figures[f"presence ({label}), display off: event loop wake-ups per minute"] = (b - a) * 2
        if b - a > 1:
            raise Failure(f"{label}: the event loop woke {b - a} times in 30 s at rest with the sensor open")

    def cycle(d, label, come, leave, events, shot, debounce):
        """Dark by idle_off, then `come()` wakes it and `leave()` ends it."""
        s.wait_log(d, r"display off \(idle\)", timeout=90)
        if dpms() != "Off":
            raise Failure(f"{label}: DPMS reads {dpms()!r} after idle_off")
        status = ask("status")
        if status["presence"] is None or status["presence"]["present"] is not False:
            raise Failure(f"{label}: status presence before anyone came: {status['presence']}")
        index = status["index"]
        loop_wakeups_per_minute(label)
        offs = d.err.count("display off (idle)")
        come()
        m = s.wait_log(d, r"display: picture back on screen (\d+) ms after the waking presence")
        s.figures[f"presence ({label}): sensor edge to picture on screen ms ({debounce})"] = int(m.group(1))
        events.wait_output(r'"event":"didDetectPresence"', timeout=30)
        events.wait_output(r'"event":"displayOn"', timeout=30)
        if dpms() != "On":
            raise Failure(f"{label}: DPMS reads {dpms()!r} after presence")
        s.screen_matches(index, shot)
        status = ask("status")
        if status["index"] != index or status["presence"]["present"] is not True:
            raise Failure(f"{label}: after the wake: index {status['index']} (was {index}), presence {status['presence']}")
        # Held: longer than idle_off (6 s) and still on.
        time.sleep(9)
        if d.err.count("display off (idle)") != offs or dpms() != "On":
            raise Failure(f"{label}: the display went off while someone was there")
        # The wake swallowed no touch: the next swipe pages.
        touch.drag_past_half(1100, 400, 200, 400)
        s.wait_log(d, r"event didEndDecelerating")
        left = time.monotonic()
        leave()
        events.wait_output(r'"event":"didLosePresence"', timeout=30)
        s.wait_log(d, r"(?s)" + r"display off \(idle\).*" * (offs + 1), timeout=90)
        after = time.monotonic() - left
        s.figures[f"presence ({label}): presence end to display off s"] = round(after, 1)
        if after < 5:
            raise Failure(f"{label}: off {after:.1f} s after presence ended, before idle_off (6 s)")
        if dpms() != "Off":
            raise Failure(f"{label}: DPMS reads {dpms()!r} after idle_off following presence")

    base = {"control": {"socket": PRESENCE_SOCKET}, "power": {"idle_off": "0.1"}}

    # key:KEY_F13, a uinput device made before the daemon starts.
    sensor = vm.spawn(["python3", "-u", "-c", KEY_SENSOR], stdin=True)
    line = sensor.readline(60)
    if not line.startswith("ready"):
        raise Failure(f"the key sensor: {line} {sensor.err[-500:]}")

    def key(word):
        sensor.write(word + "\n")
        if not sensor.readline(30).startswith("ok"):
            raise Failure(f"the key sensor did not play {word}")
    try:
        d = s.start({**base, "power": {**base["power"], "presence": "key:KEY_F13"}})
        s.wait_log(d, r"first picture on screen")
        # libinput opens the sensor's device with the seat (its "added" line
        # is logged at the first input event, not at once).
        events = vm.spawn(["python3", "-u", "-c", SUBSCRIBE, PRESENCE_SOCKET])
        try:
            events.wait_output(r'"ok":true', timeout=60)
            cycle(d, "key", lambda: key("down"), lambda: key("up"), events, "40-presence-key-woken",
                  "no debounce in carouseld")
        finally:
            events.terminate()
        s.stop(d)
    finally:
        sensor.write("quit\n")
        sensor.wait(30)

    # gpio:CHIP:pir, a gpio-sim chip with a named line; its level set through
    # the simulator's pull (pull-up: the line reads 1).
    vm.run(f"modprobe gpio-sim && (mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config)"
           f" && mkdir -p {GPIO_SIM}/bank0/line5 && echo 8 > {GPIO_SIM}/bank0/num_lines"
           f" && echo pir > {GPIO_SIM}/bank0/line5/name && echo 1 > {GPIO_SIM}/live", timeout=60, check=True)
    chip = vm.run(["cat", f"{GPIO_SIM}/bank0/chip_name"], timeout=30).out.strip()
    device = vm.run(["cat", f"{GPIO_SIM}/dev_name"], timeout=30).out.strip()
    pull = f"/sys/devices/platform/{device}/{chip}/sim_gpio5/pull"

    def level(word):
        vm.run(f"echo {word} > {pull}", timeout=30, check=True)
    try:
        extra = {**base, "power": {**base["power"], "presence": f"gpio:{chip}:pir", "presence_debounce": "0.5"}}
        d = s.start(extra)
        s.wait_log(d, rf"presence: {chip} line 5 \(pir\), debounce 0.5 s")
        s.wait_log(d, r"first picture on screen")
        events = vm.spawn(["python3", "-u", "-c", SUBSCRIBE, PRESENCE_SOCKET])
        try:
            events.wait_output(r'"ok":true', timeout=60)
            # A bounce shorter than the debounce changes nothing.
            vm.run(f"echo pull-up > {pull}; echo pull-down > {pull}", timeout=30, check=True)
            time.sleep(2)
            if "didDetectPresence" in events.out or "presence: someone is there" in d.err:
                raise Failure("a bounce shorter than presence_debounce was taken for presence")
            # Back to the default debounce (the line is opened again): the
            # wake latency below is the shipped one's.
            reply = ask("set power.presence_debounce 0.05")
            if reply.get("ok") is not True:
                raise Failure(f"set power.presence_debounce: {reply}")
            s.wait_log(d, rf"presence: {chip} line 5 \(pir\), debounce 0.05 s")
            cycle(d, "gpio", lambda: level("pull-up"), lambda: level("pull-down"), events, "41-presence-gpio-woken",
                  "with presence_debounce = 0.05 s")
        finally:
            events.terminate()
        s.stop(d)
    finally:
        vm.run(f"echo 0 > {GPIO_SIM}/live; rmdir {GPIO_SIM}/bank0/line5 {GPIO_SIM}/bank0 {GPIO_SIM}", timeout=30)


BACKLIGHT = "/sys/class/backlight/carousel-test"


def backlight(s, touch):
    """The panel's backlight, through the kernel's backlight class (the
    VM's test module, guest/test-backlight: QEMU has no panel with one):
    brightness and dimming land in sysfs and reach the driver (its log
    lines, actual_brightness), display off powers it down with DPMS, a
    waking touch lights it at the lit level, `brightness N` sets that level
    and is kept for the next start, unloading the driver costs one warning."""
    vm = s.vm
    extra = {"control": {"socket": POWER_SOCKET}}

    def ask(line):
        return ask_guest(vm, POWER_SOCKET, line)

    def sysfs(name):
        return int(vm.run(["cat", f"{BACKLIGHT}/{name}"], timeout=30, check=True).out.strip())

    def driver_saw(level, power):
        """The driver's last update: what a panel would have been sent."""
        lines = re.findall(r"carousel_test_backlight: brightness (\d+) power (\d+)", vm.run("dmesg", timeout=30).out)
        return lines and lines[-1] == (str(level), str(power))

    def until(what, check, timeout=60):
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise Failure(f"{what}: brightness {sysfs('brightness')}, bl_power {sysfs('bl_power')},"
                              f" actual {sysfs('actual_brightness')}")
            time.sleep(0.3)

    vm.run(["modprobe", "carousel_test_backlight"], timeout=60, check=True)
    vm.run(["sh", "-c", "mkdir -p /var/lib/carouseld && rm -f /var/lib/carouseld/brightness"], timeout=30, check=True)
    if sysfs("max_brightness") != 1023 or sysfs("brightness") != 700:
        raise Failure("the test backlight did not start at 700 of 1023")
    # dim_after 0.1 min: dims six seconds after the last use.
    d = s.start({**extra, "power": {"dim_after": "0.1", "dim_level": "10", "brightness": "60"}})
    s.wait_log(d, r"backlight: carousel-test \(raw, 0 to 1023\), lit at 60 %")
    s.wait_log(d, r"first picture on screen")
    until("lit at 60 %", lambda: sysfs("brightness") == 614 and driver_saw(614, 0))
    s.wait_log(d, r"backlight: dimmed to 10 %", timeout=90)
    until("dimmed to 10 %", lambda: sysfs("actual_brightness") == 102 and driver_saw(102, 0))
    status = ask("status")["display"]
    if status["backlight"] != "carousel-test" or status["brightness"] != 60 or status["dimmed"] is not True:
        raise Failure(f"status while dimmed: {status}")
    # The first touch lights it and acts as usual: the picture was visible.
    touch.drag_past_half(1100, 400, 200, 400)
    s.wait_log(d, r"backlight: 60 % again")
    s.wait_log(d, r"event didEndDecelerating")
    until("lit again by the touch", lambda: sysfs("actual_brightness") == 614)
    # Off: DPMS and the backlight powered down; the touch wakes both.
    ask("display off")
    until("powered down with the display", lambda: sysfs("bl_power") == 4 and sysfs("actual_brightness") == 0
          and driver_saw(614, 4))
    if vm.run(["cat", DPMS], timeout=30).out.strip() != "Off":
        raise Failure("DPMS is not Off with the backlight")
    touch.tap(640, 400, ms=60)
    s.wait_log(d, r"display on \(touch\)")
    until("lit by the waking touch", lambda: sysfs("bl_power") == 0 and sysfs("actual_brightness") == 614)
    # brightness N: the lit level, at once, and kept for the next start.
    reply = ask("brightness 35")
    if reply.get("ok") is not True or reply["display"]["brightness"] != 35:
        raise Failure(f"brightness 35: {reply}")
    until("brightness 35", lambda: sysfs("actual_brightness") == 358 and driver_saw(358, 0))
    reply = ask("brightness 0")
    if reply.get("ok") is not False or "1 to 100" not in reply.get("error", ""):
        raise Failure(f"brightness 0 was not refused: {reply}")
    # Stopped while off, the console comes back on a lit panel.
    ask("display off")
    until("powered down again", lambda: sysfs("bl_power") == 4)
    s.stop(d)
    until("lit at 35 % after a stop while off", lambda: sysfs("bl_power") == 0 and sysfs("actual_brightness") == 358)
    # Killed while dimmed: the next start comes back at the level `brightness`
    # set (kept in the state directory), not at the dimmed one the kernel holds.
    d = s.start({**extra, "power": {"dim_after": "0.1", "dim_level": "10"}})
    s.wait_log(d, r"backlight: dimmed to 10 %", timeout=90)
    d.signal(signal.SIGKILL)
    d.wait(60)
    if sysfs("brightness") != 102:
        raise Failure(f"killed while dimmed, the kernel holds {sysfs('brightness')}, not the dimmed 102")
    d = s.start({**extra})
    s.wait_log(d, r"lit at 35 %")
    until("35 % after a restart while dimmed", lambda: sysfs("brightness") == 358)
    # The driver goes away (module unloaded): one warning, the carousel runs on.
    vm.run(["rmmod", "carousel_test_backlight"], timeout=60, check=True)
    reply = ask("brightness 50")
    if reply.get("ok") is not False:
        raise Failure(f"brightness with the driver gone: {reply}")
    s.wait_log(d, r"<4>backlight carousel-test: cannot write")
    if ask("status")["display"]["backlight"] is not None:
        raise Failure("the vanished backlight is still in the status")
    touch.drag_past_half(1100, 400, 200, 400)
    s.wait_log(d, r"event didEndDecelerating")
    s.stop(d)


SCENARIOS = [("display off and on: DPMS (atomic, legacy), black, a waking touch neither pages nor selects, idle_off, schedule", display_power),
             ("backlight: dims, powers down with the display, brightness N kept, a driver that goes away", backlight),
             ("presence: a key and a gpio-sim line wake the display without paging, hold it, idle_off after", presence)]
