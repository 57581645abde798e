#!/usr/bin/env python3
"""The DRM backend on a real kernel: `carouseld probe` and `carouseld drm-test`
(atomic, legacy, auto with a mode switch) in the QEMU VM, with the screen
captured while the bar shows, after the restore (device still open) and after
exit; then zero-copy windows (`drm-test --window-room`): buffers longer than
the mode filled with a pattern in which every pixel has its own colour, shown
at several windows (odd offsets too) on both axes and both APIs, each capture
compared pixel for pixel with the window asked for; windows refused by the
backend and by the kernel (the screen keeps the last frame, the room is
withdrawn, the window at (0, 0) still shows); a room video memory cannot hold;
and window moves timed against frame copies. Exits non-zero naming the first
check that failed.

  Tests/VM/drm_smoke.py [--binary GUEST_PATH] [--out DIR] [-v]

Build first (static, so the guest needs only glibc and libdrm):
  swift build -c release --static-swift-stdlib --scratch-path .build-drm-release --product carouseld
"""

import argparse
import json
import os
import re
import sys
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import REPO, VM, VMError, write_png

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


def window_color(x, y):
    """WindowPattern.color (Sources/CarouselDisplay/TestPattern.swift) as RGB."""
    return (x & 0xff, ((x >> 8) & 0xf) << 4 | ((y >> 8) & 0xf), y & 0xff)


def window_mismatches(w, h, rgb, wx, wy):
    """Pixels of four whole rows and four whole columns of the screen that are
    not the window pattern seen through a window at (wx, wy): (count, first few)."""
    points = [(x, y) for y in (0, 1, h // 2, h - 1) for x in range(w)]
    points += [(x, y) for x in (0, 1, w // 2, w - 1) for y in range(h)]
    bad = [(x, y, pixel(w, rgb, x, y), window_color(x + wx, y + wy)) for x, y in points
           if pixel(w, rgb, x, y) != window_color(x + wx, y + wy)]
    return len(bad), len(points), bad[:3]


def check_window(vm, out, name, wx, wy, label, wait=True, size=(W, H)):
    """The screen (`size`) shows the pattern through the window at (wx, wy). Waits
    (polling, up to 20 s) for QEMU's display to catch up with the flip unless
    `wait` is False (a frame that must stay, checked after half a second)."""
    deadline = time.monotonic() + (20 if wait else 0)
    if not wait:
        time.sleep(0.5)
    while True:
        w, h, rgb = vm.screen_rgb()
        bad, total, first = window_mismatches(w, h, rgb, wx, wy) if (w, h) == size else (-1, 0, [])
        if bad == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    write_png(os.path.join(out, "%s.png" % name), w, h, rgb)
    check(bad == 0, "%s: the screen (%dx%d) shows the window at (%d, %d) (%d of %d pixels differ%s)"
          % (label, w, h, wx, wy, bad, total, "; first (x, y, got, wanted): %s" % first if first else ""))


def window_test(vm, binary, out, label, args, steps, more=()):
    """Runs drm-test --window-room ARGS --step; `steps` lists, for each window
    asked, (x, y, "shown" or "refused", (wx, wy) the screen must show then);
    `more` the windows drm-test shows after those (the last measured move,
    those after --window-switch-mode) as (x, y, (width, height) of the screen).
    Returns the JSON line."""
    windows = ";".join("%d,%d" % (x, y) for x, y, _, _ in steps)
    cmd = [binary, "drm-test", "--frames", "2", "--step", "--windows", windows] + args
    job = vm.spawn(cmd, stdin=True)
    for i, (x, y, expect, screen) in enumerate(steps + [(x, y, "shown", (x, y) + size) for x, y, size in more]):
        line = job.readline(timeout=300)
        check(line == "window %d %d %s" % (x, y, expect), "%s: window (%d, %d) %s (got '%s')" % (label, x, y, expect, line))
        check_window(vm, out, "%s-%d-%d-%d" % (label, i, x, y), screen[0], screen[1],
                     "%s, after window (%d, %d)" % (label, x, y), wait=expect == "shown",
                     size=screen[2:] if len(screen) == 4 else (W, H))
        job.write("\n")
    job.close_stdin()
    rc = job.wait(120)
    check(rc == 0, "%s: drm-test exited 0 (rc %s)\n%s" % (label, rc, job.err))
    result = json.loads(job.out.strip().splitlines()[-1])
    print("      %s" % json.dumps(result), flush=True)
    print("      stderr: %s" % " | ".join(job.err.strip().splitlines()), flush=True)
    return result


def windows(vm, binary, out, results):
    """Zero-copy windows: see the module's description."""
    h = lambda x: (x, 0, "shown", (x, 0))  # noqa: E731
    v = lambda y: (0, y, "shown", (0, y))  # noqa: E731
    moves = 120
    last_move = ((moves - 1) * 37 + 1) % (W + 1)  # drm-test's last measured window
    for api in ("atomic", "legacy"):
        label = "window-%s-horizontal" % api
        r = window_test(vm, binary, out, label,
                        ["--api", api, "--window-room", str(W), "--window-axis", "horizontal",
                         "--measure-moves", str(moves), "--window-switch-mode", "1024x768"],
                        [h(0), h(1), h(333), h(W), (W + 1, 0, "refused", (W, 0)), h(640)],
                        more=[(last_move, 0, (W, H)), (0, 0, (1024, 768)), (1, 0, (1024, 768))])
        results[label] = r
        check(r["api"] == api and r["room_granted"] == W and r["extent"] == "%dx%d" % (2 * W, H),
              "%s: %d pixels of room granted, %dx%d buffers" % (label, W, 2 * W, H))
        refused = r["windows"][4]
        check(refused["reason"] == "other" and "does not lie in the %dx%d buffer" % (2 * W, H) in refused["error"],
              "%s: a window past the buffer is refused as the caller's bug, naming the buffer (%s)" % (label, refused["error"]))
        check(r["room_granted_again"] == W, "%s: the room is still granted after that (%d)" % (label, r["room_granted_again"]))
        check(r["switch_remodeset"] and r["switch_generation"] > r["generation_before_switch"]
              and r["switch_extent"] == "1024x768",
              "%s: a new mode makes panel-sized buffers of a new generation (%s, generation %d -> %d)"
              % (label, r["switch_extent"], r["generation_before_switch"], r["switch_generation"]))
        check(r["switch_room_granted"] == W and r["switch_room_extent"] == "%dx768" % (1024 + W),
              "%s: room asked again in the new mode is granted (%s)" % (label, r["switch_room_extent"]))
        print("      %s: a window move (AddFB2 + commit) costs %.4f of a frame copy (means %.1f us vs %.1f us; with its flip"
              " %.4f); medians %.4f (%.1f us vs %.1f us; with its flip %.4f)"
              % (api, r["window_to_copy_ratio"], r["window_present_us_mean"], r["frame_copy_us_mean"],
                 r["window_flip_to_copy_ratio"], r["window_to_copy_ratio_median"], r["window_present_us_median"],
                 r["frame_copy_us_median"], r["window_flip_to_copy_ratio_median"]), flush=True)
        label = "window-%s-vertical" % api
        r = window_test(vm, binary, out, label,
                        ["--api", api, "--window-room", str(H), "--window-axis", "vertical"],
                        [v(1), v(333), v(H), (0, H + 1, "refused", (0, H)), v(0)])
        results[label] = r
        check(r["room_granted"] == H and r["extent"] == "%dx%d" % (W, 2 * H),
              "%s: %d pixels of room granted, %dx%d buffers" % (label, H, W, 2 * H))

    # The kernel's own refusal (the backend's check off, as on a driver that
    # takes no offset at all): a window past the buffer is refused. Which
    # call the kernel refuses it at (AddFB2 on bochs today, or the commit
    # after it) is the kernel's: either is the room refused, and the error
    # names the window, the failed call's own words after it.
    label = "window-kernel-refusal"
    r = window_test(vm, binary, out, label,
                    ["--api", "atomic", "--window-room", str(W), "--unchecked-windows"],
                    [h(333), (0, 900, "refused", (333, 0)), h(0)])
    results[label] = r
    refused = r["windows"][1]
    check(refused["reason"] == "window_refused" and "cannot show a window at (0, 900)" in refused["error"],
          "%s: the kernel's refusal is .windowRefused, naming the window (%s)" % (label, refused["error"]))
    check(r["windows"][2]["generation"] > r["windows"][0]["generation"] and r["extent"] == "%dx%d" % (W, H),
          "%s: panel-sized buffers of a new generation after it" % label)
    check(r["room_granted_again"] == 0, "%s: no room is granted any more (%d)" % (label, r["room_granted_again"]))

    # More room than a buffer can have: none is granted, buffers stay
    # panel-sized, the window at (0, 0) shows and others are refused.
    label = "window-too-long"
    r = window_test(vm, binary, out, label, ["--window-room", "100000"], [h(0), (1, 0, "refused", (0, 0))])
    results[label] = r
    check(r["room_granted"] == 0 and r["extent"] == "%dx%d" % (W, H), "%s: no room granted, panel-sized buffers" % label)

    # More room than video memory holds (64 MiB; two 13280x800 buffers are
    # 85 MB). bochs makes dumb buffers in system memory and moves them into
    # video memory at their first flip, so the room is granted and a flip
    # fails with ENOMEM: that is a refusal of the room (.windowRefused), the
    # backend goes back to panel-sized buffers and the window at (0, 0)
    # shows at the next present. Asked again, it grants one screen of room
    # (two 2560x800 buffers fit): only the room beyond one screen is lost.
    # (A driver that refuses the memory at once grants one screen of room,
    # or none: every window shows.)
    label = "window-no-memory"
    job = vm.spawn([binary, "drm-test", "--frames", "2", "--step", "--windows", "0,0;0,0;0,0", "--window-room", "12000"],
                   stdin=True)
    lines = []
    for i in range(3):
        lines.append(job.readline(timeout=300))
        check(lines[-1] in ("window 0 0 shown", "window 0 0 refused"), "%s: window %d answered (%s)" % (label, i, lines[-1]))
        check_window(vm, out, "%s-%d" % (label, i), 0, 0, "%s, window %d" % (label, i), wait=lines[-1].endswith("shown"))
        job.write("\n")
    job.close_stdin()
    check(job.wait(120) == 0, "%s: drm-test exited 0\n%s" % (label, job.err))
    r = json.loads(job.out.strip().splitlines()[-1])
    print("      %s" % json.dumps(r), flush=True)
    print("      stderr: %s" % " | ".join(job.err.strip().splitlines()), flush=True)
    results[label] = r
    refusals = [w for w in r["windows"] if not w["shown"]]
    check(lines[-1] == "window 0 0 shown", "%s: the last window at (0, 0) shows" % label)
    if r["room_granted"] <= W:
        check(not refusals, "%s: one screen of room or none granted, every window shows" % label)
    else:
        check(len(refusals) == 1 and refusals[0]["reason"] == "window_refused",
              "%s: room granted, one flip refused as .windowRefused (%s)" % (label, refusals and refusals[0]["error"]))
        check(r["extent"] == "%dx%d" % (W, H), "%s: panel-sized buffers after it" % label)
    check(r["room_granted_again"] == W, "%s: one screen of room the second time (%d)" % (label, r["room_granted_again"]))


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
        # bochs has no vblank counter: its flips complete at once, so the
        # daemon flips with blocking commits there and reads no events.
        check(results["atomic"].get("vblank") is False and results["atomic"].get("flips_in_commit") is False,
              "atomic: bochs has no vblank; drm-test waits for events unless asked (%s, %s)"
              % (results["atomic"].get("vblank"), results["atomic"].get("flips_in_commit")))
        results["atomic-in-commit"] = drm_test(vm, a.binary, a.out, "atomic-in-commit", ["--api", "atomic", "--flips-in-commit"],
                                               preferred, frames=60, expect_api="atomic")
        check(results["atomic-in-commit"].get("flips_in_commit") is True
              and results["atomic-in-commit"].get("flips_completed") == 60,
              "atomic, flips in the commit (the daemon's way on bochs): 60 flips completed without events (%s)"
              % results["atomic-in-commit"].get("flips_completed"))
        results["legacy"] = drm_test(vm, a.binary, a.out, "legacy", ["--api", "legacy"], preferred, expect_api="legacy")
        results["auto-switch"] = drm_test(vm, a.binary, a.out, "auto-switch", ["--switch-mode", "1024x768"],
                                          "1024x768@60", expect_api="atomic")
        check(results["auto-switch"].get("switch_remodeset") is True, "auto: the mode switch re-modeset")
        results["legacy-switch"] = drm_test(vm, a.binary, a.out, "legacy-switch",
                                            ["--api", "legacy", "--mode", "1024x768", "--switch-mode", "%dx%d" % (W, H)],
                                            preferred, expect_api="legacy")

        windows(vm, a.binary, a.out, results)

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
