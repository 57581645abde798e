#!/usr/bin/env python3
"""Checks the VM harness end to end (run by smoke-test.sh after build-assets.sh):
DRM card and connector, a frame drawn in the guest reaching the host's
screendump, the synthetic touchscreen through udev and libinput, the QEMU
pointer and keyboard, the 9p share, guest->host requests, clean shutdown.
Exits non-zero with a message naming the first check that failed."""

import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmlib import REPO, VM, VMError  # noqa: E402

W, H = 1280, 800

# Runs in the guest: fills the visible part of the fbdev console (bochs' fbdev
# emulation, XRGB8888) with one colour, so that the host's screendump can be
# checked against something known. Nothing else draws while no one writes
# to the console (and the cursor is off: vt.global_cursor_default=0).
FILL_FB = r"""
import sys
sysfs = "/sys/class/graphics/fb0/"
w, h = (int(v) for v in open(sysfs + "virtual_size").read().split(","))
bpp = int(open(sysfs + "bits_per_pixel").read())
stride = int(open(sysfs + "stride").read())
assert bpp == 32, bpp
rows = int(sys.argv[2])
pixel = bytes.fromhex(sys.argv[1])      # B, G, R, X in memory
with open("/dev/fb0", "wb") as f:
    f.write(pixel * (stride // 4) * rows)
print(w, h, stride)
"""


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    print("  ok  %s" % what, flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--assets")
    p.add_argument("--out", default=os.path.join(REPO, ".build-vm", "smoke"))
    p.add_argument("--build-seconds", type=float)
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    timings = {}
    t0 = time.monotonic()
    vm = None
    try:
        vm = VM(assets=a.assets, share=REPO, xres=W, yres=H, pointer="virtio",
                capture_dir=a.out, verbose=a.verbose)
        info = vm.start()
        timings["boot to ready"] = time.monotonic() - t0
        print("guest ready: kernel %s, guest uptime %.1f s, phases %s"
              % (info["kernel"], info["uptime"], info.get("phases")), flush=True)

        # -- display
        r = vm.run("cat /sys/class/drm/card0-Virtual-1/status /sys/class/drm/card0-Virtual-1/modes")
        lines = r.out.split()
        check(r.ok and lines[:1] == ["connected"], "card0-Virtual-1 is connected")
        check(lines[1:2] == ["%dx%d" % (W, H)], "preferred mode is %dx%d (got %s)" % (W, H, lines[1:2]))
        check(vm.run("test -c /dev/dri/card0").ok, "/dev/dri/card0 exists")
        r = vm.run(["python3", "-c", FILL_FB, "0080ff00", str(H)]).check()
        t = time.monotonic()
        w, h, rgb = vm.screen_rgb()
        timings["screendump (PPM)"] = time.monotonic() - t
        check((w, h) == (W, H), "screendump is %dx%d" % (w, h))
        centre = (h // 2 * w + w // 2) * 3
        check(rgb[centre:centre + 3] == bytes([0xff, 0x80, 0x00]),
              "guest framebuffer colour reaches the screendump (centre pixel %s)" % rgb[centre:centre + 3].hex())
        t = time.monotonic()
        png = vm.screendump(os.path.join(a.out, "screen.png"))
        timings["screendump to PNG"] = time.monotonic() - t
        check(os.path.getsize(png) > 0, "PNG written: %s" % png)

        check(vm.hotplug(False) == "disconnected" and vm.hotplug(True) == "connected",
              "simulated monitor unplug/replug (vm-hotplug)")

        # -- share and guest->host requests
        check(vm.run("test -f /mnt/host/scripts/vm/uinput_touch.py").ok, "repo shared at /mnt/host")
        r = vm.run("vm-request capture from-guest && vm-request report smoke '{\"answer\": 42}'")
        check(r.ok and os.path.exists(os.path.join(a.out, "from-guest.png")),
              "guest asked for a capture: %s" % r.out.strip().splitlines()[:1])
        check(vm.reports.get("smoke") == {"answer": 42}, "guest reported a result")

        # -- input through udev and libinput
        events = vm.spawn(["stdbuf", "-oL", "libinput", "debug-events"])
        t = time.monotonic()
        touch = vm.touchscreen()
        timings["touchscreen tagged by udev"] = time.monotonic() - t
        events.wait_output(r"DEVICE_ADDED\s+carousel-vm touchscreen", 60)
        node = os.path.basename(touch.devnode)
        r = vm.run("libinput list-devices")
        block = [b for b in r.out.split("\n\n") if "carousel-vm touchscreen" in b]
        # QEMU's EDID: ~100 dpi, 320x200 mm at 1280x800; the touchscreen
        # takes the display's size by default.
        check(block and "Capabilities:     touch" in block[0] and "320x200mm" in block[0],
              "libinput lists the touchscreen with its size: %s"
              % " | ".join(l.strip() for l in (block[0].splitlines()[:5] if block else [])))
        t = time.monotonic()
        touch.swipe(1000, 400, 200, 400, 300)
        timings["300 ms swipe played"] = time.monotonic() - t
        events.wait_output(r"%s\s+TOUCH_UP" % node, 60)
        motions = events.out.count("TOUCH_MOTION")
        check(re.search(r"%s\s+TOUCH_DOWN" % node, events.out), "libinput: TOUCH_DOWN on %s" % node)
        check(motions >= 20, "libinput: %d TOUCH_MOTION events for a 300 ms swipe at 100 Hz" % motions)
        touch.tap(640, 400)
        events.wait_output(r"(?s)TOUCH_UP.*TOUCH_DOWN.*TOUCH_UP", 60)
        check(True, "libinput: tap")

        events.wait_output(r"DEVICE_ADDED\s+QEMU Virtio Tablet", 30)
        vm.pointer_move(100, 100)
        vm.pointer_move(640, 400)
        events.wait_output("POINTER_MOTION_ABSOLUTE", 30)
        vm.pointer_button(True)
        vm.pointer_button(False)
        events.wait_output("POINTER_BUTTON.*released", 30)
        check(True, "libinput: QEMU tablet motion and button")
        vm.send_key("right")
        events.wait_output("KEYBOARD_KEY.*KEY_RIGHT.*released", 30)
        check(True, "libinput: keyboard key from QMP send-key")
        touch.close()
        events.signal(2)
        events.wait(30)
        with open(os.path.join(a.out, "libinput-debug-events.txt"), "w") as f:
            f.write(events.out)

        t = time.monotonic()
        clean = vm.shutdown()
        timings["shutdown"] = time.monotonic() - t
        check(clean, "clean power-off")
    except (Failure, VMError) as e:
        print("SMOKE TEST FAILED: %s" % e, file=sys.stderr)
        if vm is not None and "--- serial console" not in str(e):
            print("--- serial console (tail)\n%s" % vm.serial_tail(), file=sys.stderr)
        return 1
    finally:
        if vm is not None:
            vm.close()
    timings["VM total"] = time.monotonic() - t0
    print("\ntimings:")
    if a.build_seconds is not None:
        print("  %-30s %6.1f s" % ("asset build (this run)", a.build_seconds))
    for k, v in timings.items():
        print("  %-30s %6.2f s" % (k, v))
    print("smoke test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
