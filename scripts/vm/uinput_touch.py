#!/usr/bin/python3
"""A synthetic multitouch touchscreen for the carouseld test VM (runs in the guest).

Creates a uinput device that udev tags ID_INPUT_TOUCHSCREEN=1 and libinput
handles as a touchscreen (multitouch protocol B: ABS_MT_SLOT,
ABS_MT_TRACKING_ID, ABS_MT_POSITION_X/Y, plus the single-touch ABS_X/Y and
BTN_TOUCH, and INPUT_PROP_DIRECT: a screen, not a touchpad), then plays
gestures in screen pixels with real timing: motion frames at --rate Hz
(100 by default) scheduled on the monotonic clock, so the kernel's event
timestamps, which libinput's velocity comes from, follow the requested speed.

One-shot (creates the device, waits until udev has tagged it and --settle ms
more for libinput users to open it, plays, removes it):
  uinput_touch.py swipe X0 Y0 X1 Y1 MS [HOLD_MS]   down at 0, straight line, HOLD_MS still, up
  uinput_touch.py tap X Y [MS]                      down, up after MS (default 50)
  uinput_touch.py hold X Y MS                       down, still for MS, up (long press)

Server (one device for many gestures; a new device per gesture is slow to be
picked up by udev and libinput): reads commands, one a line, from stdin or
--fifo PATH; prints "ready DEVNODE" once the device is tagged, then
"ok COMMAND" after each command (or "error MESSAGE"); after a swipe or a
double tap, "ok COMMAND timing JSON": the kernel's time stamps of what was
played (Touchscreen.timing, double_tap), read back from the device's own
event node.
  uinput_touch.py serve
  commands: swipe/tap/hold as above, down X Y [SLOT], move X Y [SLOT],
            up [SLOT], sleep MS, doubletap X Y MS GAP_MS (replies with its
            timing too), quit

Coordinates are screen pixels of a --width x --height screen (default
1280x800); the device reports --scale units per pixel (sub-pixel motion) and
a physical size through the axes' resolution, so libinput can work in
millimetres: --size-mm WxH, or by default ("auto") the size the display's
EDID gives DRM (so that touch and display agree on the panel's size as on
real hardware; QEMU's EDID says about 100 dpi: 320x200 mm at 1280x800), or
217x136 (a 10.1" 16:10 panel) when there is no display.

--mount A,B,C,D,E,F makes a panel mounted wrong (a resistive overlay turned,
flipped or shifted against the display): the screen point at fractions
(x, y) is reported at device fractions (A*x + B*y + C, D*x + E*y + F),
clamped to the device; the default is the identity. `carouseld calibrate`
finds libinput's matrix that undoes it.

Standard library only (uinput through fcntl.ioctl): importing python3-evdev
costs about a second under TCG.
"""

import argparse
import array
import fcntl
import json
import os
import struct
import sys
import time

# Linux input constants (linux/input-event-codes.h, linux/uinput.h).
EV_SYN, EV_KEY, EV_ABS = 0x00, 0x01, 0x03
SYN_REPORT = 0
BTN_TOUCH = 0x14a
ABS_X, ABS_Y = 0x00, 0x01
ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID = 0x2f, 0x35, 0x36, 0x39
INPUT_PROP_DIRECT = 0x01
BUS_VIRTUAL = 0x06
# EVIOCSCLOCKID, _IOW('E', 0xa0, int): the reader's stamps on the monotonic
# clock, as libinput sets it (the default is the wall clock, which tests set).
EVIOCSCLOCKID = (1 << 30) | (4 << 16) | (ord("E") << 8) | 0xa0
CLOCK_MONOTONIC = 1


def _ioc(direction, nr, size):
    # Linux _IOC(dir, 'U', nr, size): the uinput ioctl encoding.
    return (direction << 30) | (size << 16) | (ord("U") << 8) | nr


UI_DEV_CREATE = _ioc(0, 1, 0)
UI_DEV_DESTROY = _ioc(0, 2, 0)
UI_DEV_SETUP = _ioc(1, 3, 92)      # struct uinput_setup
UI_ABS_SETUP = _ioc(1, 4, 28)      # struct uinput_abs_setup
UI_SET_EVBIT = _ioc(1, 100, 4)
UI_SET_KEYBIT = _ioc(1, 101, 4)
UI_SET_ABSBIT = _ioc(1, 103, 4)
UI_SET_PHYS = _ioc(1, 108, 8)      # char *
UI_SET_PROPBIT = _ioc(1, 110, 4)


def UI_GET_SYSNAME(length):
    return _ioc(2, 44, length)


class UInput:
    """A uinput device, with the standard library only (fcntl, struct): no
    python3-evdev, whose import alone (it pulls asyncio) costs about a
    second under TCG. Events are queued by write() and sent as one frame,
    in one write(2), by syn()."""

    def __init__(self, name, keys, absinfo, props, bustype, vendor, product, phys):
        self.fd = os.open("/dev/uinput", os.O_WRONLY | os.O_CLOEXEC)
        self.queue = []
        try:
            fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_SYN)
            if keys:
                fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_KEY)
                for k in keys:
                    fcntl.ioctl(self.fd, UI_SET_KEYBIT, k)
            if absinfo:
                fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_ABS)
            for code, (value, lo, hi, fuzz, flat, res) in absinfo.items():
                fcntl.ioctl(self.fd, UI_SET_ABSBIT, code)
                # struct uinput_abs_setup: u16 code, (pad), struct input_absinfo
                fcntl.ioctl(self.fd, UI_ABS_SETUP,
                            struct.pack("<H2x6i", code, value, lo, hi, fuzz, flat, res))
            for prop in props:
                fcntl.ioctl(self.fd, UI_SET_PROPBIT, prop)
            fcntl.ioctl(self.fd, UI_SET_PHYS, phys.encode() + b"\0")
            # struct uinput_setup: struct input_id, char name[80], u32 ff_effects_max
            fcntl.ioctl(self.fd, UI_DEV_SETUP,
                        struct.pack("<4H80sI", bustype, vendor, product, 1, name.encode()[:79], 0))
            fcntl.ioctl(self.fd, UI_DEV_CREATE)
            sysname = fcntl.ioctl(self.fd, UI_GET_SYSNAME(64), bytes(64)).split(b"\0")[0].decode()
            self.devnode = self._find_event_node("/sys/devices/virtual/input/" + sysname)
            # The device's own events as every reader gets them, for the
            # kernel's time stamps (a reader does not take them from others).
            self.reader = os.open(self.devnode, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            fcntl.ioctl(self.reader, EVIOCSCLOCKID, struct.pack("<i", CLOCK_MONOTONIC))
        except BaseException:
            os.close(self.fd)
            raise
        self.frame_times = []  # µs, the kernel's stamp of each frame played

    @staticmethod
    def _find_event_node(sysdir, timeout=10.0):
        # The evdev node appears a moment after UI_DEV_CREATE returns.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for entry in os.listdir(sysdir):
                if entry.startswith("event") and os.path.exists("/dev/input/" + entry):
                    return "/dev/input/" + entry
            time.sleep(0.01)
        raise RuntimeError("no event node for %s (is the evdev module loaded?)" % sysdir)

    def write(self, etype, code, value):
        # struct input_event: struct timeval (the kernel stamps it), u16, u16, s32
        self.queue.append(struct.pack("<qqHHi", 0, 0, etype, code, value))

    def syn(self):
        self.write(EV_SYN, SYN_REPORT, 0)
        os.write(self.fd, b"".join(self.queue))
        self.queue = []
        self._read_back()

    def _read_back(self):
        """Notes the kernel's time stamp of every frame (SYN_REPORT) the
        device has sent: the write above put it in the reader's buffer, and
        draining it after each frame keeps that buffer from overflowing."""
        while True:
            try:
                data = os.read(self.reader, 24 * 64)
            except BlockingIOError:
                return
            for sec, usec, etype, code, _ in struct.iter_unpack("<qqHHi", data[:len(data) // 24 * 24]):
                if etype == EV_SYN and code == SYN_REPORT:
                    self.frame_times.append(sec * 1_000_000 + usec)
            del self.frame_times[:-4096]  # a gesture's worth, however long the session

    def close(self):
        try:
            fcntl.ioctl(self.fd, UI_DEV_DESTROY)
        finally:
            os.close(self.fd)
            os.close(self.reader)


class Touchscreen:
    def __init__(self, width=1280, height=800, size_mm=(217, 136), scale=10,
                 slots=10, rate=100.0, name="carousel-vm touchscreen", mount=(1, 0, 0, 0, 1, 0)):
        self.width, self.height, self.scale, self.rate = width, height, scale, rate
        self.mount = mount
        xmax, ymax = width * scale - 1, height * scale - 1
        # Resolution is in units per millimetre (an integer, in the kernel).
        xres = max(1, round(width * scale / size_mm[0]))
        yres = max(1, round(height * scale / size_mm[1]))
        # (value, min, max, fuzz, flat, resolution)
        x, y = (0, 0, xmax, 0, 0, xres), (0, 0, ymax, 0, 0, yres)
        self.ui = UInput(name, keys=[BTN_TOUCH], absinfo={
            ABS_X: x, ABS_Y: y,
            ABS_MT_SLOT: (0, 0, slots - 1, 0, 0, 0),
            ABS_MT_TRACKING_ID: (0, 0, 65535, 0, 0, 0),
            ABS_MT_POSITION_X: x, ABS_MT_POSITION_Y: y,
        }, props=[INPUT_PROP_DIRECT], bustype=BUS_VIRTUAL, vendor=0x1209, product=0xca05,
            phys="carousel-vm/touch0")
        self.devnode = self.ui.devnode
        self.contacts = {}      # slot -> (x, y) in pixels
        self.primary = None     # slot the single-touch axes follow
        self.next_id = 1

    # -- readiness -------------------------------------------------------------

    def wait_tagged(self, timeout=20.0):
        """Wait until udev has processed the device: libinput (udev backend)
        ignores input devices that have no ID_INPUT* properties in udev's
        database, and it only learns of the device from udev's "add" event."""
        rdev = os.stat(self.devnode).st_rdev
        db = "/run/udev/data/c%d:%d" % (os.major(rdev), os.minor(rdev))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with open(db) as f:
                    if "E:ID_INPUT_TOUCHSCREEN=1" in f.read():
                        return True
            except FileNotFoundError:
                pass
            time.sleep(0.02)
        raise RuntimeError("udev did not tag %s as a touchscreen within %.0f s "
                           "(is systemd-udevd running?)" % (self.devnode, timeout))

    # -- low level (one call = one frame, SYN_REPORT included) ----------------

    def _units(self, v, limit):
        return max(0, min(limit * self.scale - 1, round(v * self.scale)))

    def _device(self, x, y):
        """Device units of screen pixel (x, y), through the mount."""
        a, b, c, d, e, f = self.mount
        fx, fy = x / self.width, y / self.height
        dx, dy = a * fx + b * fy + c, d * fx + e * fy + f
        return self._units(dx * self.width, self.width), self._units(dy * self.height, self.height)

    def _position(self, slot, x, y):
        ux, uy = self._device(x, y)
        self.ui.write(EV_ABS, ABS_MT_SLOT, slot)
        self.ui.write(EV_ABS, ABS_MT_POSITION_X, ux)
        self.ui.write(EV_ABS, ABS_MT_POSITION_Y, uy)
        if slot == self.primary:
            self.ui.write(EV_ABS, ABS_X, ux)
            self.ui.write(EV_ABS, ABS_Y, uy)

    def down(self, x, y, slot=0):
        if slot in self.contacts:
            raise ValueError("slot %d is already down" % slot)
        self.ui.write(EV_ABS, ABS_MT_SLOT, slot)
        self.ui.write(EV_ABS, ABS_MT_TRACKING_ID, self.next_id)
        self.next_id = self.next_id % 65535 + 1
        first = not self.contacts
        if first:
            self.primary = slot
        self.contacts[slot] = (x, y)
        self._position(slot, x, y)
        if first:
            self.ui.write(EV_KEY, BTN_TOUCH, 1)
        self.ui.syn()

    def move(self, x, y, slot=0):
        if slot not in self.contacts:
            raise ValueError("slot %d is not down" % slot)
        self.contacts[slot] = (x, y)
        self._position(slot, x, y)
        self.ui.syn()

    def up(self, slot=0):
        if slot not in self.contacts:
            raise ValueError("slot %d is not down" % slot)
        del self.contacts[slot]
        self.ui.write(EV_ABS, ABS_MT_SLOT, slot)
        self.ui.write(EV_ABS, ABS_MT_TRACKING_ID, -1)
        if not self.contacts:
            self.primary = None
            self.ui.write(EV_KEY, BTN_TOUCH, 0)
        elif slot == self.primary:
            # The single-touch axes follow the oldest remaining contact.
            self.primary = min(self.contacts)
            ux, uy = self._device(*self.contacts[self.primary])
            self.ui.write(EV_ABS, ABS_X, ux)
            self.ui.write(EV_ABS, ABS_Y, uy)
        self.ui.syn()

    # -- gestures ----------------------------------------------------------------

    @staticmethod
    def _sleep_until(t):
        d = t - time.monotonic()
        if d > 0:
            time.sleep(d)

    def swipe(self, x0, y0, x1, y1, ms, hold_ms=0, slot=0):
        """Down at (x0, y0), straight to (x1, y1) at constant speed in ms
        milliseconds (one frame per 1/rate s, on absolute deadlines so the
        speed does not drift when a frame is late), still for hold_ms after
        the last motion frame (however late that came), up. Returns the
        kernel's timing of what was played (`timing`)."""
        steps = max(1, round(ms * self.rate / 1000.0))
        self.ui.frame_times = []
        t0 = time.monotonic()
        self.down(x0, y0, slot)
        for i in range(1, steps + 1):
            self._sleep_until(t0 + ms / 1000.0 * i / steps)
            f = i / steps
            self.move(x0 + (x1 - x0) * f, y0 + (y1 - y0) * f, slot)
        if hold_ms:
            self._sleep_until(time.monotonic() + hold_ms / 1000.0)
        self.up(slot)
        return self.timing(ms / steps, hold_ms)

    def timing(self, interval_ms, hold_ms=0):
        """What the kernel stamped on the last gesture's frames (down, the
        motion frames, up), against the `interval_ms` asked between motion
        frames: the frames, the longest gap between two of them before the
        lift, the time from the last frame to the lift (ms), and whether
        the kernel saw the swipe asked for ("as_asked"): every gap before the
        lift, and the lift's own when nothing was held, within half an
        interval (and 4 ms) of the one asked; after a hold, the lift at least
        hold_ms late. A starved injector (its sleep overran, or the guest's
        vCPU was busy elsewhere) writes late: the swipe the kernel saw, and
        so its speed, was then another."""
        t = self.ui.frame_times
        gaps = [(b - a) / 1000.0 for a, b in zip(t, t[1:])]
        before_lift, lift = gaps[:-1], (gaps[-1] if gaps else None)
        slack = interval_ms + max(interval_ms / 2, 4.0)
        as_asked = (len(t) >= 2 and all(g <= slack for g in before_lift)
                    and (lift >= hold_ms if hold_ms else lift <= slack))
        return {"frames": len(t), "asked_gap_ms": round(interval_ms, 1),
                "longest_gap_ms": round(max(before_lift, default=0.0), 1),
                "lift_gap_ms": round(lift, 1) if lift is not None else None, "as_asked": as_asked}

    def tap(self, x, y, ms=50, slot=0):
        t0 = time.monotonic()
        self.down(x, y, slot)
        self._sleep_until(t0 + ms / 1000.0)
        self.up(slot)

    def double_tap(self, x, y, ms, gap_ms, slot=0):
        """Two taps of ms each, the second gap_ms after the first's lift.
        Returns what the kernel stamped: each tap's length and the time from
        the first lift to the second touch ("gap_ms"), which a starved
        injector stretches past whatever window a reader keeps."""
        self.ui.frame_times = []
        self.tap(x, y, ms, slot)
        time.sleep(gap_ms / 1000.0)
        self.tap(x, y, ms, slot)
        t = self.ui.frame_times
        if len(t) != 4:
            raise ValueError("double tap: %d frames read back, not 4" % len(t))
        return {"taps_ms": [round((t[1] - t[0]) / 1000.0, 1), round((t[3] - t[2]) / 1000.0, 1)],
                "gap_ms": round((t[2] - t[1]) / 1000.0, 1)}

    def hold(self, x, y, ms, slot=0):
        self.tap(x, y, ms, slot)

    def close(self):
        for slot in list(self.contacts):
            self.up(slot)
        self.ui.close()


def _iowr(nr, size):
    # Linux _IOWR('d', nr, size), the DRM ioctl encoding.
    return (3 << 30) | (size << 16) | (ord("d") << 8) | nr


def display_size_mm(card="/dev/dri/card0"):
    """Physical size (mm) of the first connected connector, as DRM reports
    it (DRM_IOCTL_MODE_GETCONNECTOR's mm_width/mm_height, from the EDID).
    Not read from sysfs' edid file: with bochs that one stays empty after
    the connector was forced off and on again (vm-hotplug)."""
    try:
        fd = os.open(card, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        # struct drm_mode_card_res: 4 pointers, 8 u32; first call counts.
        res = bytearray(64)
        fcntl.ioctl(fd, _iowr(0xA0, 64), res)
        n_conn = struct.unpack_from("<I", res, 40)[0]
        ids = array.array("I", [0] * max(1, n_conn))
        res = bytearray(64)
        struct.pack_into("<Q", res, 16, ids.buffer_info()[0])
        struct.pack_into("<I", res, 40, n_conn)
        fcntl.ioctl(fd, _iowr(0xA0, 64), res)
        for cid in ids[:n_conn]:
            # struct drm_mode_get_connector (80 bytes), no arrays asked for:
            # count_modes = 0 makes the kernel probe the connector.
            conn = bytearray(80)
            struct.pack_into("<I", conn, 48, cid)
            fcntl.ioctl(fd, _iowr(0xA7, 80), conn)
            connection, mm_w, mm_h = struct.unpack_from("<III", conn, 60)
            if connection == 1 and mm_w and mm_h:  # DRM_MODE_CONNECTED
                return float(mm_w), float(mm_h)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None


def run_command(ts, words):
    """Plays one command; returns False for quit, the timing (a dict) of a
    swipe or a double tap, True otherwise."""
    cmd, args = words[0], [float(w) for w in words[1:]]
    if cmd == "swipe" and len(args) in (5, 6):
        return ts.swipe(*args[:5], hold_ms=args[5] if len(args) == 6 else 0)
    elif cmd == "tap" and len(args) in (2, 3):
        ts.tap(*args)
    elif cmd == "doubletap" and len(args) == 4:
        return ts.double_tap(*args)
    elif cmd == "hold" and len(args) == 3:
        ts.hold(*args)
    elif cmd in ("down", "move") and len(args) in (2, 3):
        getattr(ts, cmd)(args[0], args[1], int(args[2]) if len(args) == 3 else 0)
    elif cmd == "up" and len(args) in (0, 1):
        ts.up(int(args[0]) if args else 0)
    elif cmd == "sleep" and len(args) == 1:
        time.sleep(args[0] / 1000.0)
    elif cmd == "quit" and not args:
        return False
    else:
        raise ValueError("bad command: %s" % " ".join(words))
    return True


def serve(ts, source):
    print("ready %s" % ts.devnode, flush=True)
    for line in source:
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        try:
            result = run_command(ts, words)
            if result is False:
                print("ok quit", flush=True)
                return
            timing = " timing %s" % json.dumps(result, separators=(",", ":")) if isinstance(result, dict) else ""
            print("ok %s%s" % (" ".join(words), timing), flush=True)
        except (ValueError, OSError) as err:
            print("error %s" % err, flush=True)


def fifo_lines(path):
    """Lines from a fifo, reopened when a writer closes it (each `echo >fifo`
    is one writer)."""
    if not os.path.exists(path):
        os.mkfifo(path)
    while True:
        with open(path) as f:
            for line in f:
                yield line


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=800)
    p.add_argument("--size-mm", default="auto", help="physical size WxH in mm, or auto (the display's)")
    p.add_argument("--scale", type=int, default=10, help="device units per pixel")
    p.add_argument("--rate", type=float, default=100.0, help="motion frames per second")
    p.add_argument("--name", default="carousel-vm touchscreen")
    p.add_argument("--mount", default="1,0,0,0,1,0",
                   help="A,B,C,D,E,F: screen fractions to device fractions (a panel mounted wrong)")
    p.add_argument("--settle", type=float, default=500,
                   help="one-shot mode: ms to wait after udev tagged the device, for libinput users to open it")
    p.add_argument("--fifo", help="serve mode: read commands from this fifo instead of stdin")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if not a.command:
        p.error("no command")
    if a.size_mm == "auto":
        w_mm, h_mm = display_size_mm() or (217.0, 136.0)
    else:
        w_mm, h_mm = (float(v) for v in a.size_mm.lower().split("x"))
    mount = tuple(float(v) for v in a.mount.split(","))
    if len(mount) != 6:
        p.error("--mount: six numbers A,B,C,D,E,F")
    ts = Touchscreen(a.width, a.height, (w_mm, h_mm), a.scale, rate=a.rate, name=a.name, mount=mount)
    try:
        ts.wait_tagged()
        if a.command[0] == "serve":
            serve(ts, fifo_lines(a.fifo) if a.fifo else sys.stdin)
        else:
            time.sleep(a.settle / 1000.0)
            run_command(ts, a.command)
            # Give readers time to drain the device before it disappears.
            time.sleep(0.2)
    finally:
        ts.close()


if __name__ == "__main__":
    try:
        main()
    except (ValueError, RuntimeError) as err:
        sys.exit("uinput_touch: %s" % err)
