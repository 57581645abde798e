#!/usr/bin/env python3
"""Faults on a real kernel (QEMU): what carouseld does when the world under
it breaks while it runs. One VM boot, one scenario after another:

* the display driver unbound and bound again (sysfs
  /sys/bus/pci/drivers/bochs-drm/unbind): the daemon says so in one line,
  keeps running and answering, and shows the picture again once the card is
  back (the screen compared with `carouseld render`, PSNR, as in e2e.py);
* the touchscreen removed in the middle of a drag: the carousel settles on a
  page, and a swipe on a new touchscreen works;
* the pictures folder on a file system that goes read-only (what is shown
  stays, and it follows the folder again once writable) and one that goes
  away (one line; back when it is mounted again);
* a full disk under `carouselctl screenshot`: an error reply, no partial
  file, the carousel runs on. carouseld keeps no state file (nothing to
  fill a disk with besides screenshots).

Everything waits on state (log lines, `status`, a stable screen) with
generous limits; nothing asserts wall-clock time.

Usage: Tests/VM/faults.py BINDIR [--out DIR] [--only TEXT]
BINDIR holds statically linked carouseld and carouselctl (inside the repo,
e.g. .build-static/release). The last line is `faults: N passed, M failed`.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import REPO, VM, VMError
from e2e_support import Failure, psnr, read_png_rgb

W, H = 1280, 800
GUEST_REPO = "/mnt/host"
SOCKET = "/run/faults.sock"
PICS = "/srv/pics"  # a tmpfs of its own, so that it can go read-only or away


class Suite:
    def __init__(self, vm, bindir, out):
        self.vm = vm
        self.guest_bin = f"{GUEST_REPO}/{os.path.relpath(bindir, REPO)}"
        self.host_bin = bindir
        self.out = out
        self.passed, self.failed = [], []
        self.figures = {}
        self.daemon = None

    def check(self, name, fn):
        start = time.monotonic()
        self.daemon = None
        try:
            fn()
        except Exception as e:  # a failed scenario must not stop the others
            self.failed.append((name, repr(e)))
            print(f"FAIL {name}: {e}", flush=True)
            if self.daemon is not None:
                print(self.daemon.err[-3000:], flush=True)
        else:
            self.passed.append(name)
            print(f"ok   {name} ({time.monotonic() - start:.1f} s)", flush=True)
        if self.daemon is not None and not self.daemon.exited:
            self.daemon.terminate()

    # -- helpers ---------------------------------------------------------

    def config(self, images, extra=None):
        # resume = false: each scenario starts on the first picture, whatever
        # the one before it left on screen (the daemon makes
        # /var/lib/carouseld to keep the position in when it is missing).
        sections = {"images": {"path": images, "resume": "false"}, "log": {"level": "debug"},
                    "autoplay": {"enabled": "false"}, "control": {"socket": SOCKET}}
        for section, keys in (extra or {}).items():
            sections.setdefault(section, {}).update(keys)
        return "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items())
                       for name, keys in sections.items())

    def start(self, extra=None):
        self.vm.put("/tmp/faults.ini", self.config(PICS, extra))
        d = self.vm.spawn([f"{self.guest_bin}/carouseld", "run", "--config", "/tmp/faults.ini"])
        self.daemon = d
        d.wait_output(r"first picture on screen", timeout=180, stream="stderr")
        d.wait_output(r"control socket: ", timeout=60, stream="stderr")
        return d

    def ctl(self, *words, timeout=60):
        """carouselctl WORDS --json: (ok, decoded reply)."""
        r = self.vm.run([f"{self.guest_bin}/carouselctl", *words, "--socket", SOCKET, "--json"], timeout=timeout)
        try:
            reply = json.loads(r.out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise Failure(f"carouselctl {' '.join(words)}: rc {r.rc}, no JSON reply: {r.out!r} {r.err!r}")
        return reply.get("ok") is True, reply

    def status(self):
        ok, reply = self.ctl("status")
        if not ok:
            raise Failure(f"status refused: {reply}")
        return reply

    def wait_rest(self, timeout=90):
        """Polls status until the carousel is at rest (state idle, offset on
        a page, the same twice in a row); returns the status."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            st = self.status()
            key = (st.get("state"), st.get("index"), st.get("offset"))
            if st.get("state") == "idle" and key == last and float(st["offset"]).is_integer():
                return st
            last = key
            if time.monotonic() > deadline:
                raise Failure(f"not at rest after {timeout} s: {st}")
            time.sleep(0.5)

    def alive(self, d):
        if d.exited:
            raise Failure(f"carouseld exited {d.rc}: {d.err[-2000:]}")
        return self.status()

    def reference(self, offset):
        """The frame `carouseld render` draws on the host for this offset,
        with the pictures the guest's folder holds (the demo set)."""
        ini = os.path.join(self.out, "ref.ini")
        with open(ini, "w") as f:
            f.write(self.config(os.path.join(REPO, "scripts/demo/images")))
        out = os.path.join(self.out, f"ref-{offset}.png")
        subprocess.run([os.path.join(self.host_bin, "carouseld"), "render", "--config", ini, "--size", f"{W}x{H}",
                        f"--offset={offset}", "--out", out], check=True, capture_output=True)
        return read_png_rgb(out)

    def screen_matches(self, offset, name, minimum=30.0):
        w, h, rgb = self.vm.wait_screen_stable(interval=0.3, stable_for=1.5, timeout=120)
        shot = self.vm.screendump(os.path.join(self.out, f"{name}.png"))
        _, _, ref = self.reference(offset)
        if (w, h) != (W, H):
            raise Failure(f"screen is {w}x{h}, not {W}x{H} ({shot})")
        value = psnr(rgb, ref)
        self.figures[f"psnr {name}"] = round(value, 1)
        if value < minimum:
            raise Failure(f"screen differs from render --offset {offset}: PSNR {value:.1f} dB < {minimum} ({shot})")

    def sh(self, cmd, timeout=120):
        r = self.vm.run(cmd, timeout=timeout)
        if not r.ok:
            raise Failure(f"guest: {cmd}: rc {r.rc}: {r.out} {r.err}")
        return r.out

    def stop(self, d):
        d.terminate()
        rc = d.wait(60)
        if rc != 0:
            raise Failure(f"carouseld exited {rc}: {d.err[-2000:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bindir", help="folder with statically linked carouseld and carouselctl, inside the repo")
    ap.add_argument("--out", default=os.path.join(REPO, "out/faults"))
    ap.add_argument("--only", help="run only the scenarios whose name contains this text (development)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    bindir = os.path.abspath(args.bindir)
    with VM(share=REPO, xres=W, yres=H, capture_dir=args.out, boot_timeout=600) as vm:
        s = Suite(vm, bindir, args.out)

        def fresh_pictures():
            # A scenario before may have taken the card away and back.
            # (A card bound again comes back as card1 if anything still holds
            # the old card0 open.)
            s.sh("udevadm settle -t 60; for i in $(seq 90); do ls /dev/dri/card* >/dev/null 2>&1 && exit 0; sleep 1; done; exit 1",
                 timeout=240)
            s.sh(f"umount -l {PICS} 2>/dev/null; mkdir -p {PICS} && mount -t tmpfs -o size=8m faults {PICS} "
                 f"&& cp {GUEST_REPO}/scripts/demo/images/* {PICS}/")

        def driver_unbind_bind():
            fresh_pictures()
            d = s.start()
            s.ctl("goto", "2", "0")
            s.wait_rest()
            s.screen_matches(2, "01-before-unbind")
            drivers = s.sh("ls /sys/bus/pci/drivers/").split()
            driver = next((x for x in ("bochs-drm", "bochs") if x in drivers), None)
            if driver is None:
                raise Failure(f"no bochs driver in /sys/bus/pci/drivers: {drivers}")
            path = f"/sys/bus/pci/drivers/{driver}"
            devices = [x for x in s.sh(f"ls {path}").split() if re.match(r"[0-9a-f]{4}:", x)]
            if len(devices) != 1:
                raise Failure(f"{path} holds {devices}")
            dev = devices[0]
            s.sh(f"echo {dev} > {path}/unbind")
            bound = False
            try:
                m = d.wait_output(r"<[34]>[^\n]*(display|/dev/dri)[^\n]*(gone|removed|unbound|went away)[^\n]*",
                                  timeout=120, stream="stderr")
                s.figures["unbind line"] = m.group(0).decode()
                # The dead card is let go (else the kernel cannot free it).
                held = s.sh(f"ls -l /proc/{d.pid}/fd | grep -c /dev/dri || true").strip()
                if held != "0":
                    raise Failure(f"carouseld still holds {held} descriptor(s) of the removed card")
                # Still running, still answering; commands still move the model.
                s.alive(d)
                ok, reply = s.ctl("next")
                if not ok:
                    raise Failure(f"next refused while the display is gone: {reply}")
                st = s.wait_rest()
                s.sh(f"echo {dev} > {path}/bind")
                bound = True
                d.wait_output(r"display (is )?back[^\n]*", timeout=180, stream="stderr")
            finally:
                if not bound:  # the next scenarios need the display
                    vm.run(f"echo {dev} > {path}/bind", timeout=120)
            s.alive(d)
            s.figures["cards after the rebind"] = s.sh("ls /dev/dri").split()
            s.screen_matches(st["index"], "02-after-rebind")
            # And it draws there, not just once: a command moves the screen.
            s.ctl("goto", "0", "0")
            s.wait_rest()
            s.screen_matches(0, "03-after-rebind-goto")
            s.stop(d)
            errors = [l for l in d.err.splitlines() if l.startswith("<3>")]
            s.figures["error lines during unbind/bind"] = len(errors)
            if len(errors) > 2:
                raise Failure(f"{len(errors)} error lines (a flood?): {errors[:5]}")

        def touchscreen_removed_mid_drag():
            fresh_pictures()
            d = s.start()
            touch = vm.touchscreen()
            d.wait_output(r"touchscreen[^\n]*added|added[^\n]*touch", timeout=60, stream="stderr")
            touch.down(900, 400)
            for x in range(880, 560, -40):  # half a page, slowly: a drag, not a fling
                touch.move(x, 400)
                time.sleep(0.05)
            d.wait_output(r"event willBeginDragging", timeout=60, stream="stderr")
            # The device goes away with the finger still down (no lift).
            touch.job.signal(9)
            touch.job.wait(60)
            d.wait_output(r"touchscreen[^\n]*removed|removed[^\n]*touch", timeout=60, stream="stderr")
            st = s.wait_rest()
            if st["index"] not in (0, 1):
                raise Failure(f"settled on {st['index']}, expected 0 or 1")
            s.screen_matches(st["index"], "04-settled-after-removal")
            # A new touchscreen works.
            touch = vm.touchscreen()
            d.wait_output(r"(?s)removed.*(touchscreen[^\n]*added|added[^\n]*touch)", timeout=60, stream="stderr")
            before = d.err.count("didEndDecelerating")
            touch.drag_past_half(1100, 400, 200, 400)
            vm._wait(lambda: d.err.count("didEndDecelerating") > before, 90, "a settle after the new swipe")
            after = s.wait_rest()
            if after["index"] != (st["index"] + 1) % after["count"]:
                raise Failure(f"the swipe on the new touchscreen went to {after['index']} from {st['index']}")
            touch.close()
            s.stop(d)

        def folder_read_only():
            fresh_pictures()
            d = s.start()
            s.sh(f"mount -o remount,ro {PICS}")
            # Nothing to read differently: the pictures stay, commands work.
            ok, _ = s.ctl("next")
            st = s.wait_rest()
            if st["count"] != 5 or not ok:
                raise Failure(f"after remount,ro: {st}")
            if "<3>" in d.err:
                raise Failure("an error line after remount,ro: " + d.err[-1000:])
            s.screen_matches(st["index"], "05-read-only")
            s.sh(f"mount -o remount,rw {PICS}")
            s.sh(f"cp {PICS}/01-mountains.jpg {PICS}/.t && mv {PICS}/.t {PICS}/06-again.jpg")
            d.wait_output(r"images: 6 now", timeout=60, stream="stderr")
            s.stop(d)

        def folder_goes_away():
            fresh_pictures()
            d = s.start()
            s.sh(f"umount -l {PICS}")
            m = d.wait_output(r"<[46]>[^\n]*" + re.escape(PICS) + r" (is another folder|was removed)[^\n]*",
                              timeout=60, stream="stderr")
            s.figures["folder gone line"] = m.group(0).decode()
            d.wait_output(r"images: 0 now", timeout=60, stream="stderr")
            st = s.alive(d)
            if st["count"] != 0:
                raise Failure(f"count {st['count']} with the folder gone")
            # Mounted again, with the pictures: followed again.
            s.sh(f"mount -t tmpfs -o size=8m faults {PICS} && cp {GUEST_REPO}/scripts/demo/images/* {PICS}/")
            d.wait_output(r"images: 5 now", timeout=90, stream="stderr")
            s.ctl("goto", "3", "0")
            st = s.wait_rest()
            s.screen_matches(3, "06-folder-back")
            # And it is watched: a file added now appears.
            s.sh(f"cp {PICS}/01-mountains.jpg {PICS}/.t && mv {PICS}/.t {PICS}/06-again.jpg")
            d.wait_output(r"images: 6 now", timeout=60, stream="stderr")
            lines = [l for l in d.err.splitlines() if l.startswith(("<3>", "<4>"))]
            if len(lines) > 3:
                raise Failure(f"{len(lines)} warning/error lines for one unmount: {lines}")
            s.stop(d)

        def disk_full_screenshot():
            fresh_pictures()
            d = s.start()
            s.sh("umount -l /srv/full 2>/dev/null; mkdir -p /srv/full && mount -t tmpfs -o size=64k full /srv/full "
                 "&& (dd if=/dev/zero of=/srv/full/filler bs=4k 2>/dev/null || true)")
            ok, reply = s.ctl("screenshot", "/srv/full/shot.png")
            if ok:
                raise Failure(f"screenshot onto a full disk answered ok: {reply}")
            s.figures["full disk reply"] = reply.get("error")
            # FIXME: libpng's own message for a short write is "Write Error"
            # (Sources/CImageCodecs/png_write.c passes it on without errno's
            # "No space left on device"); that room belongs to the PNG work,
            # so only the error reply that names the file is checked here.
            if "/srv/full/shot.png" not in str(reply.get("error")):
                raise Failure(f"the error does not name the file: {reply}")
            left = s.sh("ls -A /srv/full").split()
            if left != ["filler"]:
                raise Failure(f"left behind on the full disk: {left}")
            # A little room, not enough for this screen's PNG: the same. How
            # much a PNG of the screen takes depends on the picture (a flat
            # one compresses to 20 KB), so the room is half of what a
            # screenshot of it took with room to spare.
            ok, reply = s.ctl("screenshot", "/tmp/faults-probe.png")
            if not ok:
                raise Failure(f"screenshot with room failed: {reply}")
            room_k = min(24, reply["bytes"] // 2 // 4096 * 4)
            if room_k < 4:
                raise Failure(f"the screen's PNG is {reply['bytes']} bytes: too small to leave less room than it needs")
            s.sh(f"rm /srv/full/filler && dd if=/dev/zero of=/srv/full/filler bs=1k count={64 - room_k} 2>/dev/null")
            ok, reply = s.ctl("screenshot", "/srv/full/shot.png")
            left = s.sh("ls -A /srv/full").split()
            if ok or left != ["filler"]:
                raise Failure(f"nearly full disk: ok {ok}, {reply}, files {left}")
            s.figures["nearly full disk reply"] = reply.get("error")
            # The carousel runs on, and a screenshot with room works.
            ok, _ = s.ctl("next")
            st = s.wait_rest()
            ok, reply = s.ctl("screenshot", "/tmp/faults-shot.png")
            if not ok:
                raise Failure(f"screenshot with room failed: {reply}")
            s.alive(d)
            s.screen_matches(st["index"], "07-after-full-disk")
            s.stop(d)

        for name, fn in [("display driver unbound and bound again", driver_unbind_bind),
                         ("touchscreen removed mid-drag", touchscreen_removed_mid_drag),
                         ("pictures folder goes read-only", folder_read_only),
                         ("pictures folder unmounted and mounted again", folder_goes_away),
                         ("disk full under a screenshot", disk_full_screenshot)]:
            if args.only and args.only not in name:
                continue
            s.check(name, fn)
    print(json.dumps(s.figures, indent=1))
    for name, why in s.failed:
        print(f"FAILED {name}: {why}")
    print(f"faults: {len(s.passed)} passed, {len(s.failed)} failed")
    return 1 if s.failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except VMError as e:
        print(f"faults: VM error: {e}")
        print("faults: 0 passed, 1 failed")
        sys.exit(1)
