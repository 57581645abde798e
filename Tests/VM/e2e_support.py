"""What the end-to-end scenarios share (e2e.py runs them, and
calibrate_e2e.py, faults.py, service_e2e.py and deb_e2e.py take from it):
the Suite that runs each scenario and starts the daemon in the guest, the
screen against `carouseld render` (PSNR), the control socket from inside
the guest, and gestures that must page whatever the injector's timing."""
import json
import math
import os
import re
import subprocess
import tempfile
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import REPO, write_png

W, H = 1280, 800
GUEST_REPO = "/mnt/host"


def read_png_rgb(path):
    """Width, height and packed RGB bytes of a PNG (ImageMagick, installed by scripts/setup.sh)."""
    size = subprocess.run(["identify", "-format", "%w %h", path], check=True, capture_output=True, text=True).stdout
    w, h = map(int, size.split())
    rgb = subprocess.run(["convert", path, "-depth", "8", "rgb:-"], check=True, capture_output=True).stdout
    return w, h, rgb


def psnr(a, b):
    """PSNR in dB of two equally sized RGB byte strings, sampled on a grid (speed)."""
    assert len(a) == len(b), (len(a), len(b))
    step = 3 * 7  # every 7th pixel
    se, n = 0, 0
    for i in range(0, len(a) - 2, step):
        for k in range(3):
            d = a[i + k] - b[i + k]
            se += d * d
        n += 3
    mse = se / n
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)


class Failure(Exception):
    pass


class Suite:
    def __init__(self, vm, binary, out):
        self.vm = vm
        self.binary = binary
        self.out = out
        self.passed = []
        self.failed = []
        self.figures = {}

    def check(self, name, fn):
        start = time.monotonic()
        self.daemon = None
        try:
            fn()
        except Exception as e:  # a failed scenario must not stop the others
            self.failed.append((name, repr(e)))
            print(f"FAIL {name}: {e}", flush=True)
            if self.daemon is not None and not self.daemon.exited:
                print(self.daemon.err[-3000:], flush=True)
                self.daemon.terminate()
        else:
            self.passed.append(name)
            print(f"ok   {name} ({time.monotonic() - start:.1f} s)", flush=True)

    # -- helpers ---------------------------------------------------------

    def config(self, extra=None, host=False):
        """The INI text: the demo pictures, debug log lines (the events), autoplay
        slow enough not to interfere, and `extra` ({section: {key: value}}) on top."""
        images = os.path.join(REPO, "scripts/demo/images") if host else f"{GUEST_REPO}/scripts/demo/images"
        # Autoplay is off unless a scenario turns it on: it would resume
        # resume_delay after every gesture and move the screen under the checks.
        # resume is off unless a scenario turns it on: a position kept by one
        # scenario would move the next one's start picture.
        sections = {"images": {"path": images, "resume": "false"}, "log": {"level": "debug"},
                    "autoplay": {"enabled": "false"}}
        for section, keys in (extra or {}).items():
            # "{repo}" in a value is the repository, where the host or the guest sees it.
            sections.setdefault(section, {}).update(
                {k: v.replace("{repo}", REPO if host else GUEST_REPO) for k, v in keys.items()})
        return "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items())
                       for name, keys in sections.items())

    def start(self, extra=None, env=None):
        self.vm.put("/tmp/e2e.ini", self.config(extra))
        d = self.vm.spawn([self.binary, "run", "--config", "/tmp/e2e.ini"], env=env, stdin=False)
        self.daemon = d
        d.wait_output(r"first frame on screen (\d+) ms", timeout=120, stream="stderr")
        return d

    def reference(self, offset, extra=None, size=(W, H), clock_time=None):
        """The frame `carouseld render` draws on the host for this offset
        (with [overlay] clock showing `clock_time`, HH:MM)."""
        ini = tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False)
        ini.write(self.config(extra, host=True))
        ini.close()
        key = json.dumps([extra, clock_time], sort_keys=True)
        out = os.path.join(self.out, f"ref-{offset}-{abs(hash(key)) % 10000}.png")
        host_binary = os.path.join(REPO, os.path.relpath(self.binary, GUEST_REPO))
        clock = [f"--clock-time={clock_time}"] if clock_time else []
        subprocess.run([host_binary, "render", "--config", ini.name, "--size", f"{size[0]}x{size[1]}",
                        f"--offset={offset}", "--out", out] + clock, check=True, capture_output=True)
        return read_png_rgb(out)

    def screen_matches(self, offset, name, extra=None, minimum=30.0, clock_time=None):
        """The stable screen against `carouseld render` of the same offset and
        configuration; returns the captured RGB."""
        w, h, rgb = self.vm.wait_screen_stable(interval=0.3, stable_for=1.5, timeout=90)
        shot = write_png(os.path.join(self.out, f"{name}.png"), w, h, rgb)
        rw, rh, ref = self.reference(offset, extra, (w, h), clock_time)
        value = psnr(rgb, ref)
        self.figures[f"psnr {name}"] = round(value, 1)
        if value < minimum:
            raise Failure(f"screen differs from render --offset {offset}: PSNR {value:.1f} dB < {minimum} ({shot})")
        return rgb

    def wait_log(self, d, pattern, timeout=60):
        return d.wait_output(pattern, timeout=timeout, stream="stderr")

    def stop(self, d):
        d.terminate()
        rc = d.wait(60)
        if rc != 0:
            raise Failure(f"carouseld exited {rc}: {d.err[-2000:]}")
        if "display restored" not in d.err:
            raise Failure("no 'display restored' line")


# A request line on the control socket from inside the guest, with the
# guest's own python (carouselctl is not in the static build the suite
# runs): prints the reply line.
ASK = ("import socket, sys\n"
       "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
       "s.sendall((sys.argv[2] + '\\n').encode())\n"
       "print(s.makefile().readline().strip())\n")
# A subscriber: every event line, as it comes.
SUBSCRIBE = ("import socket, sys\n"
             "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
             "s.sendall(b'subscribe\\n')\n"
             "for line in s.makefile(): print(line.strip(), flush=True)\n")


def loop_switches(vm, pid):
    """The voluntary context switches of carouseld's event loop (its main
    thread) so far: each is one wake-up."""
    text = vm.run(f"cat /proc/{pid}/task/{pid}/status", timeout=30).out
    return int(re.search(r"voluntary_ctxt_switches:\s+(\d+)", text).group(1))


def ask_guest(vm, sock, line):
    """One request on the control socket from inside the guest; its JSON reply."""
    r = vm.run(["python3", "-c", ASK, sock, line], timeout=60)
    try:
        return json.loads(r.out)
    except ValueError:
        raise Failure(f"{line}: no reply: rc {r.rc} {r.out!r} {r.err!r}")


def event_lines(job, start=0):
    """The subscriber's event lines from byte `start` on, parsed."""
    return [json.loads(line) for line in job.out[start:].splitlines() if line.startswith('{"event"')]


def wait_event(job, name, mark, timeout=60):
    """Waits for the subscriber's next `name` event after byte `mark`."""
    n = job.out[:mark].count(f'"event":"{name}"') + 1
    job.wait_output(rf'(?s)("event":"{name}".*){{{n}}}', timeout=timeout)


def resting_index(d):
    """The item the carousel last moved to, by its log (index 0 before any
    change: the scenarios start there, [images] resume off)."""
    changes = re.findall(r"event currentItemIndexDidChange (\d+)", d.err)
    return int(changes[-1]) if changes else 0


def fling_to(s, d, touch, x0, y0, x1, y1, ms, want, tries=3):
    """A fling that must bring the carousel to rest on item `want`, less than
    half a page long, so that only its speed pages. The speed is what the
    kernel stamps on its frames as the injector writes them: when those
    stamps show the injector was starved (Touchscreen.swipe's "as_asked"
    False), the kernel saw another swipe. If that one did not reach `want`
    but sprang back, it is played again, at most `tries` times in all. A
    fling the kernel saw as asked must reach `want`: that is the check."""
    start = resting_index(d)
    for attempt in range(1, tries + 1):
        rests = d.err.count("event didEndDecelerating")
        timing = touch.swipe(x0, y0, x1, y1, ms)
        s.wait_log(d, rf"(?s)(event didEndDecelerating.*){{{rests + 1}}}")
        index = resting_index(d)
        if index == want:
            if attempt > 1:
                s.figures["flings played again (the injector starved)"] = (
                    s.figures.get("flings played again (the injector starved)", 0) + attempt - 1)
            return timing
        if timing["as_asked"]:
            raise Failure(f"a fling the kernel saw as asked ({timing}) rested on {index}, not {want}")
        if index != start:
            raise Failure(f"a fling the injector was starved in ({timing}) went to {index}, neither {want} nor back to {start}")
    raise Failure(f"{tries} flings, each with the injector starved, none reached {want}: {timing}")
