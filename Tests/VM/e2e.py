#!/usr/bin/env python3
"""End-to-end tests of carouseld on a real kernel: bochs DRM, a uinput
touchscreen seen through udev and libinput, QEMU's virtio tablet, and the
screen captured from the host with QMP.

Checks compare the captured screen with `carouseld render` frames for the
same offset (PSNR), never with hand-made pixels; gestures are judged by the
daemon's own event lines. Everything waits on state (log lines, a stable
screen), with generous limits: TCG is slow.

The scenarios are in modules by family, run in this order: e2e_carousel.py
(start, gestures, autoplay, rotation, reload, the album, zoom),
e2e_fbdev.py, e2e_wall.py (effects, captions, formats) and e2e_video.py on
bochs; then e2e_power.py (display power, backlight, presence) on QEMU's
VGA. What they share is e2e_support.py.

Usage: Tests/VM/e2e.py BINARY [--out DIR] [--only TEXT]
BINARY is a statically linked carouseld (swift build -c release --static-swift-stdlib).
"""
import argparse
import json
import os
import sys
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import REPO, VM
import e2e_carousel
import e2e_fbdev
import e2e_power
import e2e_video
import e2e_wall
from e2e_support import GUEST_REPO, H, W, Suite

# One boot of bochs for these, in this order.
BOCHS = e2e_carousel.SCENARIOS + e2e_fbdev.SCENARIOS + e2e_wall.SCENARIOS + e2e_video.SCENARIOS
# Then QEMU's VGA (-vga std), not bochs-display: only it stops showing the
# last frame when the CRTC goes off (shared/notes/qemu.md).
VGA = e2e_power.SCENARIOS


class _NoVM:
    """Stands in for the VM when no scenario that runs in it is selected."""
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", help="carouseld, statically linked, inside the repo")
    ap.add_argument("--out", default=os.path.join(REPO, "out/e2e"))
    ap.add_argument("--only", help="run only the scenarios whose name contains this text (development)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    binary_rel = os.path.relpath(os.path.abspath(args.binary), REPO)
    guest_binary = f"{GUEST_REPO}/{binary_rel}"
    boot_start = time.monotonic()
    bochs = [(name, fn) for name, fn in BOCHS if not args.only or args.only in name]
    vga = [(name, fn) for name, fn in VGA if not args.only or args.only in name]
    s = Suite(None, guest_binary, args.out)
    with (VM(share=REPO, xres=W, yres=H, pointer="virtio", capture_dir=args.out) if bochs else _NoVM()) as vm:
        s.vm = vm
        if bochs:
            s.figures["boot to agent ready s"] = round(time.monotonic() - boot_start, 1)
        touch = vm.touchscreen() if bochs else None
        for name, fn in bochs:
            s.check(name, lambda fn=fn: fn(s, touch))
        if touch:
            touch.close()
    if vga:
        with VM(share=REPO, xres=W, yres=H, display="vga", capture_dir=args.out) as vm:
            s.vm = vm
            touch = vm.touchscreen()
            try:
                for name, fn in vga:
                    s.check(name, lambda fn=fn: fn(s, touch))
            finally:
                touch.close()
    print(json.dumps(s.figures, indent=1))
    for name, why in s.failed:
        print(f"FAILED {name}: {why}")
    print(f"e2e: {len(s.passed)} passed, {len(s.failed)} failed")
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
