"""[display] backend = fbdev: bochs' own /dev/fb0 at 32 bits and vfb at 16
(5-6-5), read back from the device; a framebuffer that comes after the
daemon started, as an SPI panel's driver does at boot."""
import os
import re
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import write_png
from e2e_support import Failure, psnr


# Sets a framebuffer's depth through FBIOPUT_VSCREENINFO (linux/fb.h), in
# the guest's python: 16 bits gives RGB565 on vfb (what SPI panels use).
FB_DEPTH = ("import fcntl, struct, sys\n"
            "f = open(sys.argv[1], 'r+b', buffering=0)\n"
            "var = bytearray(160); fcntl.ioctl(f, 0x4600, var)\n"
            "v = list(struct.unpack('40I', var))\n"
            "v[0], v[1], v[2], v[3], v[6] = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])\n"
            "var = bytearray(struct.pack('40I', *v)); fcntl.ioctl(f, 0x4601, var)\n"
            "v = struct.unpack('40I', var)\n"
            "print(v[0], v[1], v[6], v[8], v[9], v[11], v[12], v[14], v[15])\n")


# The console's mode (KDGETMODE on /dev/tty0): 0 text, 1 graphics.
KD_MODE = ("import array, fcntl\n"
           "m = array.array('i', [0]); fcntl.ioctl(open('/dev/tty0', 'rb'), 0x4B3B, m)\n"
           "print(m[0])\n")


def rgb565_to_rgb(data, width, height, line, red_low=False):
    """RGB bytes of a little-endian RGB565 framebuffer (BGR565 with
    `red_low`), each channel widened to 8 bits as a panel shows it."""
    out = bytearray(width * height * 3)
    k = 0
    for y in range(height):
        row = data[y * line:y * line + width * 2]
        for x in range(width):
            v = row[2 * x] | (row[2 * x + 1] << 8)
            r, g, b = (v >> 11) & 31, (v >> 5) & 63, v & 31
            if red_low:
                r, b = b, r
            out[k] = (r * 255 + 15) // 31
            out[k + 1] = (g * 255 + 31) // 63
            out[k + 2] = (b * 255 + 15) // 31
            k += 3
    return bytes(out)


def framebuffer_stride(vm, dev, default):
    """Bytes a row of the framebuffer `dev`, as sysfs says (else `default`)."""
    return int(vm.run(f"cat /sys/class/graphics/{dev.split('/')[-1]}/stride", timeout=30).out.strip() or default)


def framebuffer_matches(s, dev, size, line, red_low, offset, name, extra):
    """The frame read back from the 16-bit framebuffer `dev` (RGB565, or
    BGR565 with `red_low`; `line` bytes a row; it is not on QEMU's screen)
    against `carouseld render` of the same offset and configuration."""
    vm = s.vm
    fw, fh = size
    # Until two reads agree (a frame may be written meanwhile).
    previous = None
    for _ in range(40):
        vm.run(f"dd if={dev} of=/tmp/fb.raw bs={line * fh} count=1 2>/dev/null", timeout=60)
        data = vm.get("/tmp/fb.raw")
        if data == previous:
            break
        previous = data
        time.sleep(0.3)
    rgb = rgb565_to_rgb(data, fw, fh, line, red_low)
    write_png(os.path.join(s.out, f"{name}.png"), fw, fh, rgb)
    _, _, ref = s.reference(offset, extra, (fw, fh))
    value = psnr(rgb, ref)
    s.figures[f"psnr {name}"] = round(value, 1)
    if value < 30:
        raise Failure(f"{dev} differs from render --offset {offset} at {fw}x{fh}: PSNR {value:.1f} dB")


def fbdev_backend(s, touch):
    """[display] backend = fbdev: on bochs' own /dev/fb0 (32 bits, the DRM
    driver's fbdev emulation, no DRM master) the captured screen matches
    `carouseld render`, before and after a swipe; then on vfb set to 16 bits
    (RGB565), the frames read back from the device match too. The frame's
    cost beside a memcpy of it is taken from the daemon's last line."""
    vm = s.vm
    r = vm.run([s.binary, "probe"], timeout=120)
    if r.rc != 0 or "Framebuffers (fbdev):" not in r.out or "/dev/fb0" not in r.out:
        raise Failure(f"probe lists no framebuffer: rc {r.rc}: {r.out[-1500:]}")
    extra = {"display": {"backend": "fbdev", "device": "/dev/fb0"}}
    d = s.start(extra)
    if not re.search(r"display: fbdev /dev/fb0 \d+x\d+ 32 bpp", d.err):
        raise Failure(f"the display line does not say fbdev at 32 bits: {d.err[-1500:]}")
    s.wait_log(d, r"first picture on screen")
    vm.put("/tmp/kdmode.py", KD_MODE)
    mode = vm.run(["python3", "/tmp/kdmode.py"], timeout=60).out.strip()
    if mode != "1":
        raise Failure(f"the console is not in graphics mode while the carousel draws (KDGETMODE {mode!r})")
    s.screen_matches(0, "50-fbdev-32", extra)
    touch.drag_past_half(1100, 400, 200, 400)
    s.wait_log(d, r"event didEndDecelerating")
    s.screen_matches(1, "51-fbdev-32-after-swipe", extra)
    s.stop(d)
    mode = vm.run(["python3", "/tmp/kdmode.py"], timeout=60).out.strip()
    if mode != "0":
        raise Failure(f"the console's text mode was not given back on exit (KDGETMODE {mode!r})")
    m = re.search(r"fbdev: (\d+) frames written at 32 bpp, median (\d+) us each; a memcpy of the frame (\d+) us \(ratio ([\d.]+)\)", d.err)
    if not m:
        raise Failure("no frame cost line at 32 bits")
    s.figures["fbdev 32 bpp: frame write / memcpy of the frame"] = float(m.group(4))

    # 16 bits: vfb, read back from the device (it is not on QEMU's screen).
    r = vm.run("modprobe vfb vfb_enable=1 videomemorysize=4194304", timeout=120)
    if r.rc != 0:
        raise Failure(f"modprobe vfb: {r.err[-500:]}")
    try:
        fb = vm.run("grep -l 'Virtual FB' /sys/class/graphics/fb*/name", timeout=30).out.split()
        if not fb:
            raise Failure("vfb made no framebuffer")
        dev = "/dev/" + fb[0].split("/")[-2]
        fw, fh = 640, 400
        vm.put("/tmp/fbdepth.py", FB_DEPTH)
        r = vm.run(["python3", "/tmp/fbdepth.py", dev, str(fw), str(fh), "16"], timeout=60)
        got = r.out.split()
        # vfb lays 16 bits out as BGR565 (red in the low bits); panels mostly as RGB565.
        if r.rc != 0 or got[:3] != [str(fw), str(fh), "16"] or got[3:] not in (["11", "5", "5", "6", "0", "5"], ["0", "5", "5", "6", "11", "5"]):
            raise Failure(f"{dev} is not {fw}x{fh} at 5-6-5: {r.out} {r.err[-500:]}")
        red_low = got[3] == "0"
        extra16 = {"display": {"backend": "fbdev", "device": dev}}
        d = s.start(extra16)
        if not re.search(rf"display: fbdev {dev} {fw}x{fh} 16 bpp {'BGR' if red_low else 'RGB'}565", d.err):
            raise Failure(f"the display line does not say fbdev at 16 bits: {d.err[-1500:]}")
        s.wait_log(d, r"first picture on screen")
        line = framebuffer_stride(vm, dev, fw * 2)
        framebuffer_matches(s, dev, (fw, fh), line, red_low, 0, "52-fbdev-16", extra16)
        touch.drag_past_half(1100, 400, 200, 400)
        s.wait_log(d, r"event didEndDecelerating")
        framebuffer_matches(s, dev, (fw, fh), line, red_low, 1, "53-fbdev-16-after-swipe", extra16)
        s.stop(d)
        m = re.search(r"fbdev: (\d+) frames written at 16 bpp, median (\d+) us each; a memcpy of the frame (\d+) us \(ratio ([\d.]+)\)", d.err)
        if not m:
            raise Failure("no frame cost line at 16 bits")
        s.figures["fbdev 16 bpp: frame write / memcpy of the frame"] = float(m.group(4))
    finally:
        vm.run("rmmod vfb", timeout=60)


def fbdev_late_device(s, touch):
    """[display] backend = fbdev with a device that is not there yet, as an
    SPI panel whose fbtft driver loads after carouseld at boot: the daemon
    says once that it waits and keeps running (no exit for systemd to
    restart into the same state); when vfb makes /dev/fb1 (bochs' /dev/fb0
    is the first) it starts on it by itself, and the frame read back from
    the device matches `carouseld render`. vfb comes up in its 16-bit mode
    at once (mode_option), as a panel's driver does: nothing sets the mode
    between the driver's loading and the daemon's start."""
    vm = s.vm
    dev, fw, fh = "/dev/fb1", 640, 400
    if vm.run(["test", "-e", dev], timeout=30).rc == 0:
        raise Failure(f"{dev} is there before vfb is loaded: {vm.run('cat /sys/class/graphics/fb*/name', timeout=30).out}")
    extra = {"display": {"backend": "fbdev", "device": dev}}
    vm.put("/tmp/e2e.ini", s.config(extra))
    d = vm.spawn([s.binary, "run", "--config", "/tmp/e2e.ini"], stdin=False)
    s.daemon = d
    try:
        s.wait_log(d, rf"<4>display: cannot open {dev}: No such file or directory \(.*\); waiting for one\n", timeout=120)
        # A few rounds of the wait (a look a second): still there, said once.
        time.sleep(3)
        if d.exited:
            raise Failure(f"carouseld exited ({d.rc}) while waiting for {dev}: {d.err[-1500:]}")
        if d.err.count("waiting for one") != 1:
            raise Failure(f"the wait was said more than once: {d.err[-1500:]}")
        r = vm.run(f"modprobe vfb vfb_enable=1 videomemorysize=4194304 mode_option={fw}x{fh}-16", timeout=120)
        if r.rc != 0:
            raise Failure(f"modprobe vfb: {r.err[-500:]}")
        name = vm.run(["cat", f"/sys/class/graphics/{dev.split('/')[-1]}/name"], timeout=30).out.strip()
        if name != "Virtual FB":
            raise Failure(f"{dev} is {name!r}, not vfb's")
        s.wait_log(d, r"first picture on screen", timeout=120)
        m = re.search(rf"display: fbdev {dev} {fw}x{fh} 16 bpp (RGB|BGR)565", d.err)
        if not m:
            raise Failure(f"the display line does not say fbdev {dev} {fw}x{fh} at 16 bits: {d.err[-1500:]}")
        line = framebuffer_stride(vm, dev, fw * 2)
        framebuffer_matches(s, dev, (fw, fh), line, m.group(1) == "BGR", 0, "54-fbdev-late-device", extra)
        s.stop(d)
    finally:
        if not d.exited:
            d.terminate()
        vm.run("rmmod vfb", timeout=60)


SCENARIOS = [("fbdev: bochs' /dev/fb0 at 32 bits and vfb at 16 (5-6-5), a swipe paging on both, the console's mode given back", fbdev_backend),
             ("fbdev late device: waits for /dev/fb1 until vfb is loaded, then shows the picture on it", fbdev_late_device)]
