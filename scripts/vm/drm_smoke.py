#!/usr/bin/env python3
"""The DRM backend on a real kernel: `carouseld probe` and `carouseld drm-test`
(atomic, legacy, auto with a mode switch) in the QEMU VM, with the screen
captured while the bar shows, after the restore (device still open) and after
exit. Exits non-zero naming the first check that failed.

  scripts/vm/drm_smoke.py [--binary GUEST_PATH] [--out DIR] [-v]

Build first (static, so the guest needs only glibc and libdrm):
  swift build -c release --static-swift-stdlib --scratch-path .build-drm-release --product carouseld
"""

import argparse
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmlib import REPO, VM, VMError, write_png  # noqa: E402

W, H = 1280, 800
# What drm-test draws (Sources/CarouselDisplay/TestPattern.swift, BarPainter): four
# bands, top to bottom, and a bar sweeping 60 frames per screen width.
BANDS = [(0x40, 0, 0), (0, 0x40, 0), (0, 0, 0x40), (0x40, 0x40, 0x40)]
CONSOLE = (0xff, 0x80, 0x00)  # the colour the console's framebuffer is filled with before


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    print("  ok  %s" % what, flush=True)


def bar(frame, width):
    return frame * max(1, width // 60) % width, max(8, width // 20)


def bar_color(frame):
    hue = (frame * 8) % 1536
    f = hue % 256
    return [(255, f, 0), (255 - f, 255, 0), (0, 255, f), (0, 255 - f, 255), (f, 0, 255), (255, 0, 255 - f)][hue // 256]


def pixel(w, rgb, x, y):
    i = (y * w + x) * 3
    return tuple(rgb[i:i + 3])


def fill_console(vm):
    """Fills the fbdev console's framebuffer with CONSOLE: what must come back
    after drm-test restores the CRTC (fbcon's framebuffer is not redrawn)."""
    script = r"""
import sys
sysfs = "/sys/class/graphics/fb0/"
stride = int(open(sysfs + "stride").read())
h = int(open(sysfs + "virtual_size").read().split(",")[1])
with open("/dev/fb0", "wb") as f:
    f.write(bytes([0x00, 0x80, 0xff, 0]) * (stride // 4) * h)
"""
    vm.run(["python3", "-c", script], check=True)


def check_bar_frame(w, h, rgb, frame, label):
    check((w, h) == (W, H), "%s: screen is %dx%d" % (label, w, h))
    x0, bw = bar(frame, w)
    for b, colour in enumerate(BANDS):
        y = (2 * b + 1) * h // 8  # middle of band b
        xs = [x for x in range(0, w, 7) if (x - x0) % w >= bw + 2 and (x - x0) % w < w - 2]
        same = sum(pixel(w, rgb, x, y) == colour for x in xs)
        check(same == len(xs), "%s: band %d is %s outside the bar (%d/%d)" % (label, b, bytes(colour).hex(), same, len(xs)))
        centre = pixel(w, rgb, (x0 + bw // 2) % w, y)
        check(centre == bar_color(frame), "%s: bar of frame %d in band %d is %s (got %s)"
              % (label, frame, b, bytes(bar_color(frame)).hex(), bytes(centre).hex()))


def check_console(w, h, rgb, label):
    samples = [(x, y) for y in range(5, h, 37) for x in range(3, w, 41)]
    same = sum(pixel(w, rgb, x, y) == CONSOLE for x, y in samples)
    check(same == len(samples), "%s: the console's framebuffer is back (%d/%d samples)" % (label, same, len(samples)))


def drm_test(vm, binary, out, label, args, expect_mode, frames=120, expect_api=None):
    """Runs drm-test holding the last frame and the restored console for a
    while; captures both and the screen after exit; checks the JSON line."""
    cmd = [binary, "drm-test", "--frames", str(frames), "--hold-ms", "6000", "--after-restore-ms", "6000"] + args
    job = vm.spawn(cmd)
    job.wait_output(r"holding the last frame", timeout=300, stream="stderr")
    time.sleep(0.5)
    w, h, rgb = vm.screen_rgb()
    write_png(os.path.join(out, "%s-bar.png" % label), w, h, rgb)
    job.wait_output(r"drm-test: restored", timeout=120, stream="stderr")
    time.sleep(0.5)
    w2, h2, rgb2 = vm.screen_rgb()
    write_png(os.path.join(out, "%s-restored.png" % label), w2, h2, rgb2)
    rc = job.wait(120)
    check(rc == 0, "%s: drm-test exited 0 (rc %s)\n%s" % (label, rc, job.err))
    w3, h3, rgb3 = vm.screen_rgb()
    write_png(os.path.join(out, "%s-exited.png" % label), w3, h3, rgb3)
    result = json.loads(job.out.strip().splitlines()[-1])
    print("      %s" % json.dumps(result), flush=True)
    print("      stderr: %s" % " | ".join(job.err.strip().splitlines()), flush=True)
    check(result["frames"] == frames, "%s: %d frames flipped" % (label, frames))
    if expect_api:
        check(result["api"] == expect_api, "%s: api %s (got %s)" % (label, expect_api, result["api"]))
    check(result["mode"] == expect_mode, "%s: mode %s (got %s)" % (label, expect_mode, result["mode"]))
    check(result["connector"] == "Virtual-1", "%s: connector Virtual-1" % label)
    if expect_mode.startswith("%dx%d" % (W, H)):
        check_bar_frame(w, h, rgb, frames - 1, label + " while showing")
    else:
        mw, mh = (int(v) for v in expect_mode.split("@")[0].split("x"))
        check((w, h) == (mw, mh), "%s: the screen is %dx%d after the switch (got %dx%d)" % (label, mw, mh, w, h))
    check_console(w2, h2, rgb2, label + " after restore, device still open")
    check_console(w3, h3, rgb3, label + " after exit")
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--assets")
    p.add_argument("--binary", default="/mnt/host/.build-drm-release/release/carouseld",
                   help="carouseld's path in the guest (the repo is at /mnt/host)")
    p.add_argument("--out", default=os.path.join(REPO, ".build-vm", "drm-smoke"))
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    results = {}
    vm = VM(assets=a.assets, share=REPO, xres=W, yres=H, verbose=a.verbose)
    try:
        t0 = time.monotonic()
        info = vm.start()
        print("guest ready in %.1f s: kernel %s" % (time.monotonic() - t0, info["kernel"]), flush=True)
        check(vm.run(["test", "-x", a.binary]).ok, "%s is there" % a.binary)

        r = vm.run([a.binary, "probe"], timeout=120)
        print("      " + r.out.replace("\n", "\n      ").rstrip(), flush=True)
        check(r.ok, "probe exits 0 (%s)" % r.err.strip())
        check("/dev/dri/card0: driver bochs-drm" in r.out, "probe names card0 and its driver")
        check("atomic: yes" in r.out and "DRM master: free" in r.out, "probe: atomic, master free")
        check("Virtual-1 (connector" in r.out and "): connected" in r.out, "probe: Virtual-1 connected")
        m = re.search(r"preferred mode: (%dx%d@\d+)" % (W, H), r.out)
        check(m and m.group(1) + "*" in r.out, "probe: preferred mode %dx%d marked (%s)" % (W, H, m and m.group(1)))
        preferred = m.group(1)  # QEMU's EDID says 75 Hz

        fill_console(vm)
        w, h, rgb = vm.screen_rgb()
        write_png(os.path.join(a.out, "console-before.png"), w, h, rgb)
        check_console(w, h, rgb, "before")

        results["atomic"] = drm_test(vm, a.binary, a.out, "atomic", ["--api", "atomic", "--reprobe"], preferred,
                                     expect_api="atomic")
        check(results["atomic"].get("reprobe_remodeset") is False, "atomic: reprobe with nothing changed does not re-modeset")
        results["legacy"] = drm_test(vm, a.binary, a.out, "legacy", ["--api", "legacy"], preferred, expect_api="legacy")
        results["auto-switch"] = drm_test(vm, a.binary, a.out, "auto-switch", ["--switch-mode", "1024x768"],
                                          "1024x768@60", expect_api="atomic")
        check(results["auto-switch"].get("switch_remodeset") is True, "auto: the mode switch re-modeset")
        results["legacy-switch"] = drm_test(vm, a.binary, a.out, "legacy-switch",
                                            ["--api", "legacy", "--mode", "1024x768", "--switch-mode", "%dx%d" % (W, H)],
                                            preferred, expect_api="legacy")

        # restore() with a flip in flight waits for it before freeing the buffers.
        for api in ("atomic", "legacy"):
            r = vm.run([a.binary, "drm-test", "--frames", "10", "--restore-in-flight", "--api", api], timeout=300)
            check(r.ok, "%s, restore with a flip in flight: exits 0 (%s)" % (api, r.err.strip()))
            result = json.loads(r.out.strip().splitlines()[-1])
            check(result["flips_completed"] == 11, "%s, restore with a flip in flight: its event was read (%d flips)"
                  % (api, result["flips_completed"]))
            check_console(*vm.screen_rgb(), "%s, restore with a flip in flight, after exit" % api)

        # Errors a user must be able to act on.
        r = vm.run([a.binary, "drm-test", "--connector", "HDMI-A-1"])
        check(r.rc == 1 and "no connector named HDMI-A-1" in r.err and "card0 Virtual-1 (connected)" in r.err,
              "unknown connector: named, with the list (%s)" % r.err.strip())
        r = vm.run([a.binary, "drm-test", "--mode", "1234x567"])
        check(r.rc == 1 and "has no mode 1234x567" in r.err and preferred + "*" in r.err,
              "unknown mode: named, with the list (%s)" % r.err.strip()[:200])
        r = vm.run([a.binary, "drm-test", "--device", "/dev/dri/card7"])
        check(r.rc == 1 and "no DRM device /dev/dri/card7" in r.err and "/dev/dri/card0" in r.err,
              "missing card: named, with the cards there are (%s)" % r.err.strip())
        holder = vm.spawn([a.binary, "drm-test", "--frames", "2", "--hold-ms", "20000"])
        holder.wait_output(r"holding the last frame", timeout=300, stream="stderr")
        r = vm.run([a.binary, "drm-test", "--frames", "2"])
        check(r.rc == 1 and "another program owns the display" in r.err,
              "second program: told who owns the display (%s)" % r.err.strip())
        r = vm.run([a.binary, "probe"])
        check("DRM master: held by another program" in r.out, "probe sees the display is taken")
        check(holder.wait(120) == 0, "the first program was not disturbed")
        r = vm.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", a.binary, "drm-test", "--frames", "2"])
        check(r.rc == 1 and "video" in r.err, "no permission: told to join 'video' (%s)" % r.err.strip())

        # At boot the driver may load after carouseld: wait, do not fail.
        r = vm.run("modprobe -r bochs && ! test -e /dev/dri/card0")
        check(r.ok, "bochs unloaded, no /dev/dri/card0 (%s)" % r.err.strip())
        r = vm.run([a.binary, "drm-test", "--frames", "2"])
        check(r.rc == 1 and "no DRM device in /dev/dri" in r.err and "modprobe" in r.err,
              "no driver: told to load one (%s)" % r.err.strip())
        waiter = vm.spawn([a.binary, "drm-test", "--frames", "30", "--wait-seconds", "240"])
        waiter.wait_output(r"waiting up to", timeout=120, stream="stderr")
        vm.run("modprobe bochs", check=True)
        rc = waiter.wait(300)
        print("      stderr: %s" % " | ".join(waiter.err.strip().splitlines()), flush=True)
        check(rc == 0 and "found /dev/dri/card0 Virtual-1" in waiter.err,
              "waits for the driver, then draws (rc %s)" % rc)

        vm.shutdown()
        print("DRM SMOKE TEST PASSED", flush=True)
        with open(os.path.join(a.out, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
        return 0
    except (Failure, VMError) as e:
        print("DRM SMOKE TEST FAILED: %s" % e, file=sys.stderr, flush=True)
        try:
            print("--- guest console tail\n%s" % vm.serial_tail(30), file=sys.stderr)
        except Exception:
            pass
        return 1
    finally:
        vm.close()


if __name__ == "__main__":
    sys.exit(main())
