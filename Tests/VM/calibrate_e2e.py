#!/usr/bin/env python3
"""`carouseld calibrate` on a real kernel: a uinput touchscreen mounted the
wrong way against the bochs display (axes swapped, one of them inverted,
both scaled, offset and a little skewed: a resistive overlay glued on
turned and askew), calibrated by
touching each target where calibrate says it drew it; then the daemon, run
with the INI file calibrate wrote, pages on a swipe and selects on a tap as
on a panel that was never wrong. Also: a slipped check touch is refused and
nothing written; no touch at all ends with one error line.

Usage: Tests/VM/calibrate_e2e.py BINARY [--out DIR] [--screenshot PNG]
BINARY is a statically linked carouseld inside the repo. --screenshot saves
the capture of the first target's screen there (the README's picture).
"""
import argparse
import os
import re
import shutil
import signal
import sys
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import REPO, STILL_MS, VM, VMError, Touchscreen
from e2e_support import Suite, Failure, GUEST_REPO

W, H = 1280, 800
# Screen fractions to device fractions: device x runs up the screen's y,
# device y along the screen's x; scaled 0.9 and 0.85, offset, and skewed
# (each device axis leans 0.05 and 0.04 into the other screen axis).
MOUNT = (0.05, -0.9, 0.92, 0.85, 0.04, 0.08)


def inverse(m):
    """The inverse of the affine map x' = a x + b y + c, y' = d x + e y + f."""
    a, b, c, d, e, f = m
    det = a * e - b * d
    ia, ib, id_, ie = e / det, -b / det, -d / det, a / det
    return (ia, ib, -(ia * c + ib * f), id_, ie, -(id_ * c + ie * f))


def apply(m, x, y):
    a, b, c, d, e, f = m
    return a * x + b * y + c, d * x + e * y + f


# Its inverse, the matrix calibrate must find (device to screen).
EXPECTED = inverse(MOUNT)
INI = "/tmp/calibrate.ini"
HEADER = "# carouseld, calibrated in the VM\n; this comment and the blank line below must survive\n\n"


class MountedTouchscreen(Touchscreen):
    """uinput_touch.py from the shared repo (the image's copy may predate --mount)."""

    def __init__(self, vm, mount, timeout=60):
        self.vm = vm
        self.job = vm.spawn(["python3", f"{GUEST_REPO}/scripts/vm/uinput_touch.py", "--width", str(W),
                             "--height", str(H), "--mount", ",".join(str(v) for v in mount), "serve"], stdin=True)
        line = self.job.readline(timeout)
        if not line.startswith("ready "):
            raise Failure("uinput_touch.py: %s\n%s" % (line, self.job.err))
        self.devnode = line.split()[1]


def play(vm, binary, touch, args, touch_at=None, screenshot=None):
    """Runs calibrate, touching each target it announces (at touch_at(i, x, y)
    if given); returns (rc, stdout, stderr)."""
    job = vm.spawn([binary, "calibrate", *args], stdin=False)
    while True:
        try:
            line = job.readline(timeout=180)
        except VMError:
            break  # calibrate exited: no more lines
        m = re.match(r"target (\d+)/(\d+) at (\d+) (\d+)", line)
        if m:
            i, x, y = int(m.group(1)), int(m.group(3)), int(m.group(4))
            if i == 1 and screenshot:
                vm.wait_screen_stable(interval=0.3, stable_for=1.0, timeout=60)
                vm.screendump(screenshot)
            tx, ty = touch_at(i, x, y) if touch_at else (x, y)
            touch.tap(tx, ty, ms=80)
    rc = job.wait(180)
    return rc, job.out, job.err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", help="carouseld, statically linked, inside the repo")
    ap.add_argument("--out", default=os.path.join(REPO, "out/calibrate-e2e"))
    ap.add_argument("--screenshot", help="save the calibration screen's capture here (PNG)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    binary = f"{GUEST_REPO}/{os.path.relpath(os.path.abspath(args.binary), REPO)}"
    with VM(share=REPO, xres=W, yres=H, capture_dir=args.out) as vm:
        s = Suite(vm, binary, args.out)
        touch = MountedTouchscreen(vm, MOUNT)
        base = HEADER + s.config()

        def calibrated_and_saved():
            vm.put(INI, base)
            shot = os.path.join(args.out, "calibrate-screen.png")
            # A finger is never exact: each fitted target is touched a
            # little off (up to 2 px, about 0.5 mm here), the check point
            # on its centre.
            jitter = [(2, -1), (-1, 2), (-2, -2), (1, 1), (2, 0)]

            def near(i, x, y):
                return (x + jitter[i - 1][0], y + jitter[i - 1][1]) if i <= len(jitter) else (x, y)
            rc, out, err = play(vm, binary, touch, ["--config", INI, "--timeout", "120"], touch_at=near, screenshot=shot)
            print(out, end="", flush=True)
            if rc != 0:
                raise Failure(f"calibrate exited {rc}: {err[-2000:]}")
            targets = re.findall(r"^target \d+/(\d+) at", out, re.M)
            if len(targets) < 5:
                raise Failure(f"{len(targets)} targets shown, expected at least 4 and a check point")
            m = re.search(r"^matrix (\S+) (\S+) (\S+) (\S+) (\S+) (\S+)$", out, re.M)
            got = [float(v) for v in m.groups()]
            if any(abs(g - e) > 0.02 for g, e in zip(got, EXPECTED)):
                raise Failure(f"matrix {got}, expected about {EXPECTED}")
            m = re.search(r"^check ([\d.]+) mm uncalibrated ([\d.]+) mm$", out, re.M)
            if not m or not 0 < float(m.group(1)) <= 1.0:
                raise Failure(f"check point off by more than 1 mm: {m and m.group(0)}")
            if float(m.group(2)) < 20:
                raise Failure(f"the uncalibrated panel was not off at all: {m.group(0)}")
            s.figures = {"check point error mm": float(m.group(1)), "uncalibrated error mm": float(m.group(2))}
            text = vm.get(INI).decode()
            if not text.startswith(base):
                raise Failure(f"the INI file lost or changed its lines:\n{text}")
            if not re.search(r"^\[input\]\ncalibration = " + re.escape(m_text(out)) + r"\n", text, re.M):
                raise Failure(f"no [input] calibration line in:\n{text}")
            if args.screenshot:
                shutil.copyfile(shot, args.screenshot)

        def daemon_follows_the_hand():
            d = s.start_with(INI)
            # The daemon opens the input devices after its first frame (and
            # logs them only once one of them speaks): wait until it holds
            # the touchscreen open, or the gesture goes unseen.
            deadline = time.monotonic() + 60
            while not vm.run(["sh", "-c", f"ls -l /proc/$(pidof carouseld)/fd | grep -q '{touch.devnode}$'"]).ok:
                if time.monotonic() > deadline:
                    raise Failure(f"the daemon did not open {touch.devnode}")
                time.sleep(0.2)
            # A slow drag right to left over more than half the screen (up
            # and down on the device), held still before the lift: no
            # fling, so where it settles depends on where the finger went
            # only, and it pages forward only if the panel was calibrated.
            touch.swipe(1000, 400, 250, 400, ms=900, hold_ms=STILL_MS)
            s.wait_log(d, r"currentItemIndexDidChange 1")
            s.wait_log(d, r"event didEndDecelerating")
            s.screen_matches(1, "calibrated-after-swipe")
            touch.tap(640, 400, ms=60)
            s.wait_log(d, r"select 1")
            s.stop(d)

        def udev_rule():
            rule = "/etc/udev/rules.d/99-carousel-calibration.rules"
            rc, out, err = play(vm, binary, touch, ["--udev-rule", rule, "--timeout", "120"])
            if rc != 0 or f"saved {rule}" not in out:
                raise Failure(f"calibrate --udev-rule exited {rc}: {out}\n{err[-1500:]}")
            matrix = m_text(out)
            # udev must match the rule on the device's name and set the property libinput reads.
            vm.run(["udevadm", "control", "--reload"], check=True)
            vm.run(["udevadm", "trigger", "--action=change", "--settle", touch.devnode], check=True, timeout=120)
            info = vm.run(["udevadm", "info", "--query=property", touch.devnode], check=True).out
            if f"LIBINPUT_CALIBRATION_MATRIX={matrix}" not in info:
                raise Failure(f"udev did not apply the rule to {touch.devnode}:\n{vm.get(rule).decode()}\n{info}")
            # With the rule in place, calibrate still reads raw positions
            # (identity set over the rule's matrix): the same fit comes out.
            rc, out2, err = play(vm, binary, touch, ["--dry-run", "--timeout", "120"])
            if rc != 0 or m_text(out2) != matrix:
                raise Failure(f"with the udev rule active the fit changed: {m_text(out2)} vs {matrix}\n{err[-1000:]}")
            vm.run(["rm", "-f", rule], check=True)
            vm.run(["udevadm", "control", "--reload"], check=True)

        def slipped_check_refused():
            before = vm.get(INI)
            # The check touch lands where the *uncalibrated* panel reads the
            # check point: the fit is then worse there than no fit.
            def slip(i, x, y):
                if i < 6:
                    return x, y
                # Where the device reads the target's own fractions (which the
                # uncalibrated panel takes for the target): MOUNT's inverse.
                sx, sy = apply(EXPECTED, x / W, y / H)
                return round(sx * W), round(sy * H)
            rc, out, err = play(vm, binary, touch, ["--config", INI, "--timeout", "120"], touch_at=slip)
            if rc != 1 or "not saved" not in err or "worse than the uncalibrated panel" not in err:
                raise Failure(f"a slipped check was not refused: rc {rc}\n{out}\n{err[-1500:]}")
            if len([l for l in err.splitlines() if "carouseld: calibrate:" in l]) != 1:
                raise Failure(f"expected one error line: {err[-1500:]}")
            if vm.get(INI) != before:
                raise Failure("the INI file changed although the fit was refused")

        def no_touch():
            r = vm.run([binary, "calibrate", "--dry-run", "--timeout", "2"], timeout=120)
            if r.rc != 1 or "no touch on target 1 within 2 s" not in r.err:
                raise Failure(f"no touch: rc {r.rc}: {r.err[-1500:]}")

        def stopped():
            job = vm.spawn([binary, "calibrate", "--dry-run", "--timeout", "120"], stdin=False)
            job.wait_output(r"target 1/", timeout=120)
            job.signal(signal.SIGTERM, group=False)
            rc = job.wait(60)
            if rc != 1 or "stopped by signal 15 at target 1; nothing written" not in job.err:
                raise Failure(f"SIGTERM: rc {rc}: {job.err[-1500:]}")

        for name, fn in [("calibrated, saved to the INI file", calibrated_and_saved),
                         ("the daemon with the calibration pages and selects", daemon_follows_the_hand),
                         ("saved as a udev rule that udev applies", udev_rule),
                         ("a slipped check touch is refused", slipped_check_refused),
                         ("no touch: one error line", no_touch),
                         ("SIGTERM while waiting for a touch", stopped)]:
            s.check(name, fn)
        touch.close()
    print(s.figures)
    for name, why in s.failed:
        print(f"FAILED {name}: {why}")
    print(f"calibrate: {len(s.passed)} passed, {len(s.failed)} failed")
    return 1 if s.failed else 0


def m_text(out):
    return re.search(r"^matrix (.*)$", out, re.M).group(1)


def start_with(self, path):
    d = self.vm.spawn([self.binary, "run", "--config", path], stdin=False)
    self.daemon = d
    d.wait_output(r"first frame on screen (\d+) ms", timeout=120, stream="stderr")
    return d


Suite.start_with = start_with

if __name__ == "__main__":
    sys.exit(main())
