#!/usr/bin/env python3
"""Shows the carousel running on a real kernel in the bundled QEMU machine
(bochs DRM display, a uinput touchscreen) and leaves screenshots: the first
picture, an autoplay advance, an animated capture of a finger swiping, and
the picture it settled on. For machines without a display of their own.

Usage: scripts/vm/demo.py BINARY [--out DIR]
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from vmlib import VM  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--out", default=os.path.join(REPO, "out/run"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    guest_binary = "/mnt/host/" + os.path.relpath(os.path.abspath(a.binary), REPO)
    config = open(os.path.join(REPO, "scripts/demo/demo.ini")).read().replace(
        "path = scripts/demo/images", "path = /mnt/host/scripts/demo/images")
    with VM(share=REPO, xres=1280, yres=800, capture_dir=a.out) as vm:
        touch = vm.touchscreen()
        vm.put("/tmp/demo.ini", config)
        d = vm.spawn([guest_binary, "run", "--config", "/tmp/demo.ini"], stdin=False)
        d.wait_output(r"first frame on screen", timeout=120, stream="stderr")
        vm.wait_screen_stable(interval=0.3, stable_for=1.0, timeout=60)
        print("screenshot:", vm.screendump(os.path.join(a.out, "1-first-picture.png")), flush=True)
        # Autoplay advances after `interval` (2.5 s in the demo configuration).
        time.sleep(3.5)
        vm.wait_screen_stable(interval=0.3, stable_for=1.0, timeout=60)
        print("screenshot:", vm.screendump(os.path.join(a.out, "2-after-autoplay.png")), flush=True)
        # A slow swipe, captured frame by frame: the pictures follow the finger.
        frames = os.path.join(a.out, "swipe-frames")
        os.makedirs(frames, exist_ok=True)
        touch.down(1050, 400)
        for i, x in enumerate(range(1030, 330, -35)):
            touch.move(x, 400)
            vm.screendump(os.path.join(frames, f"{i:03d}.png"))
        touch.up()
        for j in range(12):
            time.sleep(0.06)
            vm.screendump(os.path.join(frames, f"{100 + j:03d}.png"))
        vm.wait_screen_stable(interval=0.3, stable_for=1.0, timeout=60)
        print("screenshot:", vm.screendump(os.path.join(a.out, "3-after-swipe.png")), flush=True)
        if shutil.which("convert"):
            gif = os.path.join(a.out, "swipe.gif")
            subprocess.run(["convert", "-delay", "6", "-loop", "0", "-resize", "640x400",
                            os.path.join(frames, "*.png"), gif], check=True)
            print("animation:", gif, flush=True)
        touch.tap(640, 400)
        d.wait_output(r"select \d+", timeout=60, stream="stderr")
        d.terminate()
        touch.close()
        print("--- carouseld's log in the VM:\n" + d.err, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
