#!/usr/bin/env python3
"""The peer benchmark: carouseld against Debian's fbi and `mpv --vo=drm` on
the same QEMU machine, the same albums of 1920x1080 JPEGs (5 and 20) and the
same 2 s cycle, side by side, as ratios to fbi. carouseld runs twice per
album: sliding (its default 0.5 s slide) and with `effect = cut`.

Usage: Tests/Benchmarks/peers.py [--carouseld BINARY] [--runs 3] [--albums 5,20]
                                 [--only fbi,mpv,carouseld,carouseld-cut]
                                 [--seconds 20] [--cycle 2] [--out out/peers]

BINARY defaults to the release build scripts/test.sh makes
(.build-static/release/carouseld: swift build -c release --static-swift-stdlib
--scratch-path .build-static). The VM boots the peers image
(`build-assets.sh --peers`: the tests' image plus fbi and mpv; this script
runs it, which is cheap when it is up to date) at 1920x1080 with one vCPU.
The pictures and the binary are copied onto the guest's root disk (from a
9p share a program or a picture pages in slowly under TCG), and every
program runs from there.

Each run, one program at a time, round-robin over the programs so that a
drift in the host's load touches all of them alike:

* the page cache is dropped (every run starts cold, as after a boot; --warm
  keeps it, so that only each program's first run is cold), the framebuffer is cleared and the screen must match none of
  the pictures;
* the program is started (t = 0 is the host's request to the guest agent);
* **first full picture**: QMP screendumps every --poll s (>= 0.05: each one
  stops the guest for ~10 ms) until the screen shows one of the pictures
  completely: the screen is cut into 8x6 tiles and every tile's mean
  absolute difference from the reference (the JPEG decoded by ImageMagick
  on the host) must be below TILE_MAX. A half-drawn frame, a frame
  mid-slide (even 1-2 pixels from the end) or a letterboxed or shifted
  picture fails in some tile; the JPEG decoders (libjpeg-turbo in fbi and
  carouseld, ffmpeg + swscale in mpv, ImageMagick) differ by less than 0.5
  (the worst tile of each match is in the raw data). Normally that is the
  first picture in name order; when it is another one (a program that
  keeps its schedule while the first picture is still being decoded) the
  run says so. The time is that of the capture that matched, so it is late
  by up to one poll interval, alike for all programs;
* **slide cadence**: the same captures go on until --seconds; each time a
  different picture is first complete, that is a slide; the median time
  between slides;
* **CPU** at --seconds after the start: utime + stime (+ the children it
  waited for) from /proc/PID/stat, all threads, of the drawing process; fbi
  forks and its first process exits at once: its CPU is added (the shell
  that starts fbi prints it with `times`);
* **the whole guest's CPU**: the guest's busy ticks (/proc/stat: all but
  idle and iowait) from just before the start to the CPU reading, per
  picture shown. It counts what the kernel does for a program in its own
  threads: the atomic commits of a page flip without a blocking commit
  (run in a kernel worker), fbdev's damage worker that copies what fbi
  writes to the display. The guest runs nothing else meanwhile;
* **after the first**: the same CPU figures from the capture that found the
  first picture complete (read then) to the end, per picture that became
  complete after it: what a further picture costs, the start left out;
* **pictures shown** in those seconds (the slides above, the first picture
  included) and **CPU per picture shown**, the CPU divided by them: the
  programs keep different schedules (carouseld keeps its 2 s exactly, fbi
  drifts to 2.5-2.8 s as its decoding adds to each interval), so CPU over
  the same seconds compares different amounts of work, and per picture it
  does not;
* **peak RSS**: VmHWM from /proc/PID/status of the drawing process, right
  after the CPU reading, just before it is stopped (SIGTERM, SIGKILL after
  10 s).

Before each run the script waits (at most --wait-quiet s) until the host's
other processes keep fewer than --max-other-load cores busy. A run is
*disturbed* when other host processes than QEMU and this script kept more
than --max-other-load cores busy meanwhile (from /proc/stat); it is kept in
the raw data, marked, and repeated (at most --retries times per program).
Medians are over the undisturbed runs of each program.

Prints one table, writes out/peers/results.json (everything), runs.csv (one
line per run), and per run the program's output and the first full picture
and last capture as PNGs. Figures, never a verdict: no exit code depends on
the numbers. Exit 1 if a program could not be run at all.
"""
import argparse
import csv
import json
import operator
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import machine
from vmlib import REPO, VM, VMError, write_png

W, H = 1920, 1080
PROGRAMS = ("fbi", "mpv", "carouseld", "carouseld-cut")
GUEST_DIR = "/opt/peers"
PICS = GUEST_DIR + "/pics"
PEERS_ASSETS = os.path.join(REPO, ".build-vm", "peers-out")
# Five deterministic 1920x1080 pictures: ImageMagick's plasma fractal with a
# fixed seed, each with its own colours (noisy, like a photo, and far apart
# from each other: a wrong picture differs by 50-100 per channel).
COLOURS = ["red-blue", "green-yellow", "navy-orange", "purple-lime", "teal-maroon",
           "gold-indigo", "coral-darkgreen", "cyan-brown", "pink-olive", "salmon-navy",
           "khaki-purple", "orchid-darkcyan", "tomato-steelblue", "lime-crimson", "sienna-skyblue",
           "plum-forestgreen", "chocolate-turquoise", "violet-darkorange", "seagreen-magenta", "peru-slateblue"]
PICTURES = [("%02d-plasma.jpg" % (i + 1), i + 1, c) for i, c in enumerate(COLOURS)]
ALBUMS = (5, 20)

# Screen comparison: samples every STEP pixels on both axes; TILES_X x TILES_Y
# tiles; a tile matches when its mean absolute difference per channel is
# below TILE_MAX (of 255).
STEP = 8
TILES_X, TILES_Y = 8, 6
TILE_MAX = 3.0


def log(msg):
    print("[peers %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


# -- pictures and comparison ---------------------------------------------------

def make_pictures(folder):
    """The twenty JPEGs (made once; ImageMagick's plasma with a seed is
    deterministic) and their decoded RGB, as ImageMagick decodes them. An
    album of N is the first N."""
    os.makedirs(folder, exist_ok=True)
    refs = []
    for name, seed, colours in PICTURES:
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            subprocess.run(["convert", "-size", "%dx%d" % (W, H), "-seed", str(seed), "plasma:" + colours,
                            "-quality", "90", path + ".tmp.jpg"], check=True)
            os.replace(path + ".tmp.jpg", path)
        rgb = subprocess.run(["convert", path, "-depth", "8", "rgb:-"], check=True, capture_output=True).stdout
        if len(rgb) != W * H * 3:
            raise SystemExit("peers: %s is not %dx%d" % (path, W, H))
        refs.append((name, sample(rgb)))
    return refs


def sample(rgb):
    """The sampled grid of an RGB frame: per sampled row, three channel
    byte strings (R, G, B of every STEP-th pixel)."""
    stride, step3 = W * 3, STEP * 3
    rows = []
    for y in range(0, H, STEP):
        row = rgb[y * stride:(y + 1) * stride]
        rows.append((row[0::step3], row[1::step3], row[2::step3]))
    return rows


def tile_diffs(shot, ref):
    """Mean absolute difference per channel in each tile (a flat list)."""
    cols = len(shot[0][0])
    nrows = len(shot)
    xb = [cols * i // TILES_X for i in range(TILES_X + 1)]
    yb = [nrows * j // TILES_Y for j in range(TILES_Y + 1)]
    out = []
    for j in range(TILES_Y):
        sums = [0] * TILES_X
        for y in range(yb[j], yb[j + 1]):
            for a, b in zip(shot[y], ref[y]):
                d = list(map(abs, map(operator.sub, a, b)))
                for i in range(TILES_X):
                    sums[i] += sum(d[xb[i]:xb[i + 1]])
        for i in range(TILES_X):
            n = (yb[j + 1] - yb[j]) * (xb[i + 1] - xb[i]) * 3
            out.append(sums[i] / n)
    return out


def coarse_diff(shot, ref):
    """Mean absolute difference on a sparser grid (every 4th sample): cheap,
    to pick the candidate picture before the tile check."""
    total = n = 0
    for y in range(0, len(shot), 4):
        for a, b in zip(shot[y], ref[y]):
            total += sum(map(abs, map(operator.sub, a[::4], b[::4])))
            n += len(a[::4])
    return total / n


def which_picture(shot, refs):
    """(index, worst tile difference, nearest) of the picture the screen
    shows completely: index is None when none is complete; nearest is the
    picture that comes closest, worst its worst tile."""
    best = min(range(len(refs)), key=lambda i: coarse_diff(shot, refs[i][1]))
    worst = max(tile_diffs(shot, refs[best][1]))
    return (best if worst < TILE_MAX else None), worst, best


# -- host load -----------------------------------------------------------------

def _busy_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal (guest time is in user)
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7]


def _proc_ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except OSError:
        return 0


class HostLoad:
    """Host CPU used by everything but QEMU and this process, in cores."""

    def __init__(self, qemu_pid):
        self.qemu_pid = qemu_pid
        self.hz = os.sysconf("SC_CLK_TCK")
        self.start()

    def _sample(self):
        return time.monotonic(), _busy_ticks(), _proc_ticks(self.qemu_pid), _proc_ticks(os.getpid())

    def start(self):
        self.t0 = self._sample()

    def other_cores(self):
        t1 = self._sample()
        elapsed = max(1e-3, t1[0] - self.t0[0])
        other = (t1[1] - self.t0[1]) - (t1[2] - self.t0[2]) - (t1[3] - self.t0[3])
        return max(0.0, other / self.hz / elapsed), (t1[2] - self.t0[2]) / self.hz / elapsed


# -- the programs --------------------------------------------------------------------

def commands(cycle, album):
    """argv of each program for an album of `album` pictures, started from the root disk."""
    files = ["%s/%s" % (PICS, p[0]) for p in PICTURES[:album]]
    return {
        # fbi needs a virtual console (it forks, the child takes tty1 and
        # draws into /dev/fb0, bochs's fbdev emulation). -a: fit the screen
        # (the pictures are its size: 1:1); --noverbose: no status line.
        # The shell prints the CPU of fbi's first process with `times`.
        "fbi": ["sh", "-c", 'fbi "$@"; times >&2', "fbi-launch",
                "-T", "1", "-a", "-t", "%g" % cycle, "--noverbose", "-d", "/dev/fb0"] + files,
        # A slideshow and nothing else: no audio, no OSD or on-screen
        # controller, no scripts, no terminal input, software decoding.
        "mpv": ["mpv", "--no-config", "--vo=drm", "--no-audio", "--image-display-duration=%g" % cycle,
                "--loop-playlist=inf", "--osd-level=0", "--no-osc", "--load-scripts=no", "--ytdl=no",
                "--no-terminal", "--hwdec=no"] + files,
        "carouseld": [GUEST_DIR + "/carouseld", "run", "--config", "%s/carouseld-%d.ini" % (GUEST_DIR, album)],
        "carouseld-cut": [GUEST_DIR + "/carouseld", "run", "--config", "%s/carouseld-cut-%d.ini" % (GUEST_DIR, album)],
    }


def carouseld_ini(cycle, transition, album, cut=False, images_extra=()):
    # interval counts from rest (README: "Autoplay advances every interval
    # seconds counted from rest"): interval + transition = the cycle, so a
    # new picture is complete every `cycle` s, as with the others; a cut
    # comes to rest at once. The page dots are off: fbi (--noverbose) and
    # mpv (no OSD) show the bare picture. Each album is a folder of links
    # to the pictures (made in the guest). resume = false: every run starts
    # on the first picture, as the others do (not where the last run stopped).
    effect = ["effect = cut", "interval = %g" % cycle] if cut else [
        "interval = %g" % (cycle - transition), "transition = %g" % transition]
    return "\n".join([
        "[images]", "path = %s/album-%d" % (GUEST_DIR, album), "resume = false", *images_extra,
        "[autoplay]", "enabled = true", *effect,
        "[indicator]", "enabled = false",
        "[log]", "level = info", ""])


def parse_stat(text):
    """{pid: (comm, ppid, cpu ticks incl. waited-for children, starttime)} of
    `cat /proc/[0-9]*/stat`."""
    procs = {}
    for line in text.splitlines():
        m = re.match(r"(\d+) \((.*)\) (.*)$", line)
        if not m:
            continue
        f = m.group(3).split()
        # f[0] is field 3 (state): utime is field 14 -> f[11], starttime 22 -> f[19]
        procs[int(m.group(1))] = (m.group(2), int(f[1]), sum(int(x) for x in f[11:15]), int(f[19]))
    return procs


def parse_times(text):
    """CPU seconds of the children in dash's `times` output (second line)."""
    lines = re.findall(r"^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$", text, re.M)
    if len(lines) < 2:
        return None
    um, us, sm, ss = lines[1]
    return int(um) * 60 + float(us) + int(sm) * 60 + float(ss)


class Bench:
    def __init__(self, vm, args, refs):
        self.vm, self.args, self.refs = vm, args, refs
        self.hz = int(vm.run(["getconf", "CLK_TCK"], check=True).out.strip())
        self.argv = {album: commands(args.cycle, album) for album in args.album_sizes}
        self.load = HostLoad(vm.proc.pid)

    def guest_procs(self):
        """The guest's processes (`parse_stat`), and the whole guest's busy
        CPU ticks so far (/proc/stat's first line: everything but idle and
        iowait), read in one command."""
        out = self.vm.run("cat /proc/[0-9]*/stat 2>/dev/null; head -1 /proc/stat", timeout=60).out
        m = re.search(r"^cpu +(.*)$", out, re.M)
        busy = None
        if m:
            v = [int(x) for x in m.group(1).split()]
            busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
        return parse_stat(out), busy

    def clean_screen(self):
        """Clears the framebuffer and checks the screen shows none of the
        pictures (a leftover of the previous run would fake a first picture)."""
        for attempt in range(3):
            self.vm.run("printf '\\033[2J\\033[H' >/dev/tty1; "
                        "head -c $(( $(cut -d, -f1 /sys/class/graphics/fb0/virtual_size) * "
                        "$(cut -d, -f2 /sys/class/graphics/fb0/virtual_size) * "
                        "$(cat /sys/class/graphics/fb0/bits_per_pixel) / 8 )) /dev/zero >/dev/fb0 2>/dev/null; true",
                        check=True)
            w, h, rgb = self.vm.wait_screen_stable(interval=0.2, stable_for=0.4, timeout=60)
            if (w, h) != (W, H):
                raise VMError("the screen is %dx%d, not %dx%d" % (w, h, W, H))
            index, _, _ = which_picture(sample(rgb), self.refs)
            if index is None:
                return
            time.sleep(1)
        raise VMError("the screen still shows %s before the run" % self.refs[index][0])

    def stop(self, job, pids):
        for pid in pids:
            self.vm.run(["kill", "-TERM", str(pid)])
        deadline = time.monotonic() + 10
        while pids and time.monotonic() < deadline:
            alive = self.vm.run(" ".join("kill -0 %d 2>/dev/null && echo %d;" % (p, p) for p in pids)).out.split()
            pids = [int(p) for p in alive]
            if pids:
                time.sleep(0.2)
        for pid in pids:
            self.vm.run(["kill", "-KILL", str(pid)])
        job.terminate(timeout=10)
        return not pids

    def wait_quiet(self):
        """Waits (at most --wait-quiet s) until the host's other processes
        keep fewer than --max-other-load cores busy over 3 s: other
        engineers' builds and VMs share this machine. Returns the seconds
        waited."""
        t0 = time.monotonic()
        said = False
        while True:
            self.load.start()
            time.sleep(3)
            other, _ = self.load.other_cores()
            waited = time.monotonic() - t0
            if other <= self.args.max_other_load or waited >= self.args.wait_quiet:
                return round(waited, 1)
            if not said:
                log("host busy (%.2f cores besides QEMU and this script): waiting for it to calm down" % other)
                said = True

    def breakdown(self, pid):
        """Where a drawing process's memory and CPU went, for the raw data:
        RssAnon/RssFile, CPU ticks per thread, and the mappings holding the
        most resident memory (smaps)."""
        out = {}
        status = self.vm.run(["cat", "/proc/%d/status" % pid]).out
        for key in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
            m = re.search(r"%s:\s+(\d+) kB" % key, status)
            if m:
                out[key.lower() + "_kib"] = int(m.group(1))
        # Per thread: name, user and system CPU seconds.
        threads = []
        for line in self.vm.run("cat /proc/%d/task/[0-9]*/stat 2>/dev/null" % pid).out.splitlines():
            m = re.match(r"(\d+) \((.*)\) (.*)$", line)
            if m:
                f = m.group(3).split()
                threads.append([m.group(2), round(int(f[11]) / self.hz, 2), round(int(f[12]) / self.hz, 2)])
        out["thread_user_system_s"] = sorted(threads, key=lambda t: -(t[1] + t[2]))
        rss = {}
        name = "?"
        for line in self.vm.run(["cat", "/proc/%d/smaps" % pid]).out.splitlines():
            head = re.match(r"[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$", line)
            if head:
                name = head.group(1) or "[anon]"
                continue
            m = re.match(r"Rss:\s+(\d+) kB", line)
            if m:
                rss[name] = rss.get(name, 0) + int(m.group(1))
        out["rss_by_mapping_kib"] = sorted(([k, v] for k, v in rss.items() if v), key=lambda t: -t[1])[:12]
        return out

    def run_once(self, name, label, album):
        a = self.args
        refs = self.refs[:album]
        argv = self.argv[album][name]
        waited = self.wait_quiet()
        if not a.warm:
            self.vm.run("sync; echo 3 >/proc/sys/vm/drop_caches", check=True)
        self.clean_screen()
        time.sleep(0.5)
        procs_before, busy_before = self.guest_procs()
        before = set(procs_before)
        self.load.start()
        t0 = time.monotonic()
        job = self.vm.spawn(argv)
        run = {"program": name, "album": album, "label": label, "waited_s": waited, "first_s": None, "first_tile_max": None, "first_picture": None,
               "slides": [], "captures": [], "cadence_s": None, "cpu_s": None, "cpu_at_s": None, "hwm_kib": None,
               "pids": [], "notes": []}
        first_rgb = last_rgb = None
        first_procs = first_busy = None
        shown = None           # index of the complete picture on screen
        nearest = None
        deadline = t0 + a.seconds
        while True:
            t = time.monotonic()
            if t >= deadline:
                break
            w, h, rgb = self.vm.screen_rgb()
            tc = t - t0
            last_rgb = rgb
            index, worst, near = which_picture(sample(rgb), refs)
            # Every capture: when, the nearest picture, its worst tile.
            run["captures"].append([round(tc, 3), near, round(worst, 1)])
            if index is None:
                nearest = worst if nearest is None else min(nearest, worst)
            elif index != shown:
                if not run["slides"]:
                    run["first_s"], run["first_tile_max"] = round(tc, 3), round(worst, 2)
                    run["first_picture"] = refs[index][0]
                    first_rgb = rgb
                    # The CPU so far, the start's: what comes after it is per picture.
                    first_procs, first_busy = self.guest_procs()
                    if index != 0:
                        run["notes"].append("the first complete picture was %s, not %s"
                                            % (refs[index][0], refs[0][0]))
                run["slides"].append([round(tc, 3), index, round(worst, 2)])
            shown = index if index is not None else shown
            time.sleep(max(0.0, (a.poll if run["first_s"] is None else a.cadence_poll) - (time.monotonic() - t)))
        t_read = time.monotonic()
        procs, busy_after = self.guest_procs()
        # /proc is read somewhere during the round trip: its middle.
        run["cpu_at_s"] = round((t_read + time.monotonic()) / 2 - t0, 3)
        comm = {"fbi": "fbi", "mpv": "mpv"}.get(name, "carouseld")
        drawers = [p for p, v in procs.items() if p not in before and v[0] == comm]
        run["pids"] = drawers
        if not drawers:
            run["notes"].append("no %s process left at %g s (exit %s): %s"
                                % (comm, a.seconds, job.rc, job.err.strip()[-500:]))
        else:
            hwm = 0
            for pid in drawers:
                m = re.search(r"VmHWM:\s+(\d+) kB", self.vm.run(["cat", "/proc/%d/status" % pid]).out)
                if m:
                    hwm = max(hwm, int(m.group(1)))
            run["hwm_kib"] = hwm or None
            run["breakdown"] = {pid: self.breakdown(pid) for pid in drawers}
            cpu = sum(procs[p][2] for p in drawers) / self.hz
            if first_procs is not None:
                # A drawer not there yet at the first picture had used nothing then.
                run["cpu_after_first_s"] = round(cpu - sum(first_procs[p][2] for p in drawers if p in first_procs
                                                           and first_procs[p][3] == procs[p][3]) / self.hz, 3)
                if first_busy is not None and busy_after is not None:
                    run["guest_cpu_after_first_s"] = round((busy_after - first_busy) / self.hz, 3)
            if not self.stop(job, drawers):
                run["notes"].append("needed SIGKILL")
            if name == "fbi":
                job.wait(30)
                launcher = parse_times(job.err)
                if launcher is None:
                    run["notes"].append("no `times` line from fbi's launcher: its CPU is missing")
                else:
                    cpu += launcher
                    run["launcher_cpu_s"] = launcher
            run["cpu_s"] = round(cpu, 3)
            if busy_before is not None and busy_after is not None:
                run["guest_cpu_s"] = round((busy_after - busy_before) / self.hz, 3)
        if not job.exited:
            job.terminate(timeout=10)
        other, qemu = self.load.other_cores()
        run["host_other_cores"], run["qemu_cores"] = round(other, 2), round(qemu, 2)
        run["disturbed"] = other > a.max_other_load
        if run["first_s"] is None:
            run["notes"].append("no picture was ever complete on screen (nearest: worst tile %.1f)"
                                % (nearest if nearest is not None else -1))
        times = [s[0] for s in run["slides"]]
        if len(times) >= 2:
            run["cadence_s"] = round(statistics.median(b - a_ for a_, b in zip(times, times[1:])), 3)
        # Pictures shown by the time CPU was read; none shown: no figure.
        run["shown"] = len(run["slides"])
        run["cpu_per_picture_s"] = (round(run["cpu_s"] / run["shown"], 4)
                                    if run["cpu_s"] is not None and run["shown"] else None)
        run["guest_cpu_per_picture_s"] = (round(run["guest_cpu_s"] / run["shown"], 4)
                                          if run.get("guest_cpu_s") is not None and run["shown"] else None)
        # After the start: the pictures that followed the first, and the CPU since it was complete.
        after = run["shown"] - 1
        run["cpu_per_picture_after_first_s"] = (round(run["cpu_after_first_s"] / after, 4)
                                                if run.get("cpu_after_first_s") is not None and after > 0 else None)
        run["guest_cpu_per_picture_after_first_s"] = (
            round(run["guest_cpu_after_first_s"] / after, 4)
            if run.get("guest_cpu_after_first_s") is not None and after > 0 else None)
        # Evidence for a reader: what was on screen, and what the program said.
        base = os.path.join(a.out, label)
        with open(base + ".log", "w") as f:
            f.write("$ %s\n--- stdout\n%s--- stderr\n%s" % (" ".join(argv), job.out, job.err))
        if first_rgb is not None:
            write_png(base + "-first.png", W, H, first_rgb, level=1)
        if last_rgb is not None:
            write_png(base + "-last.png", W, H, last_rgb, level=1)
        return run


# -- report ------------------------------------------------------------------------------

def fmt(v, unit, digits=2):
    return "-" if v is None else ("%.*f %s" % (digits, v, unit)).strip()


def summarize(runs, programs):
    """Medians per program of one album's runs."""
    med = {}
    for p in programs:
        good = [r for r in runs if r["program"] == p and not r["disturbed"]]
        m = {"runs": len(good), "disturbed": len([r for r in runs if r["program"] == p and r["disturbed"]])}
        for key in ("first_s", "hwm_kib", "cpu_s", "cadence_s", "shown", "cpu_per_picture_s", "guest_cpu_per_picture_s",
                    "cpu_per_picture_after_first_s", "guest_cpu_per_picture_after_first_s"):
            vals = [r[key] for r in good if r.get(key) is not None]
            m[key] = statistics.median(vals) if vals else None
            m[key + "_all"] = vals
            m[key + "_missing"] = len(good) - len(vals)
        m["first_not_first"] = len([r for r in good if r["first_picture"] not in (None, PICTURES[0][0])])
        med[p] = m
    return med


def table(med, programs, versions, args, album):
    base = med.get("fbi")

    def ratio(p, key):
        if base is None or p == "fbi" or base[key] in (None, 0) or med[p][key] is None:
            return ""
        return " %.2fx" % (med[p][key] / base[key])

    def spread(vals, scale, digits):
        return "" if len(vals) < 2 else " (%s-%s)" % ("%.*f" % (digits, min(vals) / scale),
                                                     "%.*f" % (digits, max(vals) / scale))

    names = {"fbi": "fbi %s" % versions.get("fbi", "?"),
             "mpv": "mpv %s --vo=drm" % versions.get("mpv", "?"),
             "carouseld": "carouseld (%g s slide)" % args.transition, "carouseld-cut": "carouseld (cut)"}
    head = ["%d pictures" % album, "CPU per picture shown", "whole guest's CPU per picture",
            "after the first: CPU per picture", "whole guest's", "pictures shown", "peak RSS (VmHWM)",
            "first full picture", "CPU in first %g s" % args.seconds, "cadence", "runs"]
    rows = []
    for p in programs:
        m = med[p]
        rows.append([
            names[p],
            fmt(m["cpu_per_picture_s"], "s", 3) + ratio(p, "cpu_per_picture_s") + spread(m["cpu_per_picture_s_all"], 1, 3),
            fmt(m["guest_cpu_per_picture_s"], "s", 3) + ratio(p, "guest_cpu_per_picture_s")
            + spread(m["guest_cpu_per_picture_s_all"], 1, 3),
            fmt(m["cpu_per_picture_after_first_s"], "s", 3) + ratio(p, "cpu_per_picture_after_first_s")
            + spread(m["cpu_per_picture_after_first_s_all"], 1, 3),
            fmt(m["guest_cpu_per_picture_after_first_s"], "s", 3) + ratio(p, "guest_cpu_per_picture_after_first_s")
            + spread(m["guest_cpu_per_picture_after_first_s_all"], 1, 3),
            fmt(m["shown"], "", 1) + spread(m["shown_all"], 1, 0),
            fmt(None if m["hwm_kib"] is None else m["hwm_kib"] / 1024, "MiB", 1) + ratio(p, "hwm_kib")
            + spread(m["hwm_kib_all"], 1024, 1),
            fmt(m["first_s"], "s") + ratio(p, "first_s") + spread(m["first_s_all"], 1, 2)
            + (" [%d not seen]" % m["first_s_missing"] if m["first_s_missing"] else "")
            + (" [%d not %s]" % (m["first_not_first"], PICTURES[0][0]) if m["first_not_first"] else ""),
            fmt(m["cpu_s"], "s") + ratio(p, "cpu_s") + spread(m["cpu_s_all"], 1, 2),
            fmt(m["cadence_s"], "s"),
            "%d%s" % (m["runs"], " (+%d disturbed, repeated)" % m["disturbed"] if m["disturbed"] else ""),
        ])
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in [head] + rows]
    lines.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--carouseld", default=os.path.join(REPO, ".build-static/release/carouseld"),
                    help="statically linked carouseld to measure (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=3, help="runs per program (default 3)")
    ap.add_argument("--only", default=",".join(PROGRAMS), help="comma-separated: " + ",".join(PROGRAMS))
    ap.add_argument("--albums", default=",".join(map(str, ALBUMS)),
                    help="comma-separated album sizes, each 1 to %d pictures (default %%(default)s)" % len(PICTURES))
    ap.add_argument("--seconds", type=float, default=20, help="length of a run; CPU is read at its end")
    ap.add_argument("--cycle", type=float, default=2.0, help="seconds from one complete picture to the next")
    ap.add_argument("--transition", type=float, default=0.5, help="carouseld's slide (its default)")
    ap.add_argument("--poll", type=float, default=0.1, help="screendump interval until the first picture")
    ap.add_argument("--cadence-poll", type=float, default=0.2, help="screendump interval after it")
    ap.add_argument("--images-key", action="append", default=[], metavar="KEY=VALUE",
                    help="an extra [images] line for carouseld, e.g. 'cache_mb = 48' (repeatable)")
    ap.add_argument("--warm", action="store_true",
                    help="keep the guest's page cache between runs (each program's first run is still cold)")
    ap.add_argument("--max-other-load", type=float, default=0.5,
                    help="host cores busy with other processes above which a run is repeated")
    ap.add_argument("--retries", type=int, default=2, help="repeats of disturbed runs per program")
    ap.add_argument("--wait-quiet", type=float, default=120,
                    help="seconds to wait before a run for the host to be below --max-other-load")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the vCPU thread to its own host core")
    ap.add_argument("--assets", default=PEERS_ASSETS, help="peers image (build-assets.sh --peers)")
    ap.add_argument("--out", default=os.path.join(REPO, "out/peers"))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    programs = [p for p in PROGRAMS if p in args.only.split(",")]
    unknown = set(args.only.split(",")) - set(PROGRAMS)
    if unknown or not programs:
        ap.error("--only takes %s (comma-separated), not %s" % (", ".join(PROGRAMS), ",".join(sorted(unknown))))
    try:
        args.album_sizes = [int(n) for n in args.albums.split(",")]
    except ValueError:
        ap.error("--albums takes album sizes, such as 5,20, not %s" % args.albums)
    if not args.album_sizes or not all(1 <= n <= len(PICTURES) for n in args.album_sizes):
        ap.error("--albums: each album holds 1 to %d pictures" % len(PICTURES))
    if args.poll < 0.05 or args.cadence_poll < 0.05:
        ap.error("poll no faster than every 0.05 s: each screendump stops the guest")
    if not 0 <= args.transition < args.cycle:
        ap.error("--transition must be shorter than --cycle")
    binary = os.path.abspath(args.carouseld)
    runs_carouseld = any(p.startswith("carouseld") for p in programs)
    if runs_carouseld and not os.path.exists(binary):
        raise SystemExit("peers: no %s: build it with swift build -c release --static-swift-stdlib "
                         "--scratch-path .build-static (or pass --carouseld)" % binary)

    if os.geteuid() == 0:
        subprocess.run(["bash", os.path.join(machine.FOLDER, "build-assets.sh"), "--peers"], check=True)
    elif not os.path.exists(os.path.join(args.assets, "manifest.json")):
        raise SystemExit("peers: no peers image in %s: run scripts/vm/build-assets.sh --peers as root" % args.assets)

    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.out):
        if re.match(r"(fbi|mpv|carouseld|carouseld-cut)-\d+(pics-\d+)?.*\.(png|log)$", f):
            os.unlink(os.path.join(args.out, f))
    stage = os.path.join(args.out, "stage")
    log("pictures")
    refs = make_pictures(os.path.join(stage, "pics"))
    if runs_carouseld:
        # A copy this run owns: a rebuild meanwhile must not change it.
        shutil.copy(binary, os.path.join(stage, "carouseld"))

    t_start = time.monotonic()
    runs = []
    with VM(assets=args.assets, share=stage, xres=W, yres=H, cpus=1, pin_vcpu=not args.no_pin,
            boot_timeout=600, verbose=args.verbose) as vm:
        log("guest ready after %.1f s; copying to its root disk" % vm.timings["ready"])
        vm.run("mkdir -p %s && cp /mnt/host/pics/*.jpg %s/ && sync" % (PICS, PICS), check=True, timeout=300)
        # carouseld's albums: folders of hard links to the same files.
        for album in args.album_sizes:
            folder = "%s/album-%d" % (GUEST_DIR, album)
            vm.run("rm -rf %s && mkdir -p %s && ln %s %s/" % (
                folder, folder, " ".join("%s/%s" % (PICS, p[0]) for p in PICTURES[:album]), folder), check=True)
        if runs_carouseld:
            vm.run("install -m 755 /mnt/host/carouseld %s/carouseld" % GUEST_DIR, check=True, timeout=300)
            for album in args.album_sizes:
                for cut in (False, True):
                    ini = "%s/carouseld-%s%d.ini" % (GUEST_DIR, "cut-" if cut else "", album)
                    vm.put(ini, carouseld_ini(args.cycle, args.transition, album, cut, args.images_key))
                    vm.run([GUEST_DIR + "/carouseld", "check-config", ini], check=True)
        # Nothing of the share is used from here on.
        vm.run("umount /mnt/host")
        versions = {}
        if "fbi" in programs:
            versions["fbi"] = vm.run(["dpkg-query", "-W", "-f", "${Version}", "fbi"]).out.strip() or "?"
        if "mpv" in programs:
            versions["mpv"] = vm.run(["dpkg-query", "-W", "-f", "${Version}", "mpv"]).out.strip() or "?"
        if runs_carouseld:
            versions["carouseld"] = vm.run([GUEST_DIR + "/carouseld", "--version"]).out.strip()
        versions["kernel"] = vm.ready_info.get("kernel")
        bench = Bench(vm, args, refs)
        counts = {(a, p): 0 for a in args.album_sizes for p in programs}
        retries = {(a, p): 0 for a in args.album_sizes for p in programs}
        # Round-robin over the programs within each album, the albums in turn.
        todo = [(a, p) for i in range(args.runs) for a in args.album_sizes for p in programs]
        while todo:
            album, p = todo.pop(0)
            counts[(album, p)] += 1
            label = "%s-%dpics-%d" % (p, album, counts[(album, p)])
            log("%s: %s" % (label, " ".join(bench.argv[album][p])))
            r = bench.run_once(p, label, album)
            runs.append(r)
            # Kept as they come: an interrupted benchmark still leaves its runs.
            with open(os.path.join(args.out, "runs-partial.json"), "w") as f:
                json.dump(runs, f, indent=1)
            log("%s: first %s, VmHWM %s, CPU %s in %.1f s, %d shown, cadence %s, host other %.2f cores%s%s" % (
                label, fmt(r["first_s"], "s"), fmt(r["hwm_kib"] and r["hwm_kib"] / 1024, "MiB", 1),
                fmt(r["cpu_s"], "s"), r["cpu_at_s"], r["shown"], fmt(r["cadence_s"], "s"), r["host_other_cores"],
                " DISTURBED" if r["disturbed"] else "", "".join("; " + n for n in r["notes"])))
            if r["disturbed"] and retries[(album, p)] < args.retries:
                retries[(album, p)] += 1
                todo.append((album, p))
    elapsed = time.monotonic() - t_start

    med = {album: summarize([r for r in runs if r["album"] == album], programs) for album in args.album_sizes}
    setup = ("%dx%d bochs, 1 TCG vCPU, albums of %s JPEGs %dx%d, a picture every %g s, %d run(s) each, medians, "
             "%s page cache; guest kernel %s; %s" % (
                 W, H, " and ".join(map(str, args.album_sizes)), W, H, args.cycle, args.runs,
                 "warm" if args.warm else "cold", versions.get("kernel"), time.strftime("%Y-%m-%d")))
    print("peers: " + setup)
    for album in args.album_sizes:
        print()
        print(table(med[album], programs, versions, args, album))
    print()
    missing = ["%s (%d pictures)" % (p, album) for album in args.album_sizes for p in programs
               if med[album][p]["runs"] == 0 or med[album][p]["cpu_s"] is None]
    for r in runs:
        for n in r["notes"]:
            print("note: %s: %s" % (r["label"], n))
    print("peers: %d runs in %.0f s; raw figures in %s" % (len(runs), elapsed, args.out))
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"setup": setup, "args": vars(args), "versions": versions, "tile_max": TILE_MAX,
                   "medians": {str(a): m for a, m in med.items()}, "runs": runs, "seconds_total": round(elapsed, 1)}, f, indent=1)
    with open(os.path.join(args.out, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["label", "program", "album", "first_s", "first_tile_max", "hwm_kib", "cpu_s", "cpu_at_s",
                    "shown", "cpu_per_picture_s", "guest_cpu_s", "guest_cpu_per_picture_s", "cpu_after_first_s",
                    "cpu_per_picture_after_first_s", "guest_cpu_after_first_s", "guest_cpu_per_picture_after_first_s",
                    "cadence_s", "host_other_cores",
                    "qemu_cores", "disturbed", "notes"])
        for r in runs:
            w.writerow([r["label"], r["program"], r["album"], r["first_s"], r["first_tile_max"], r["hwm_kib"],
                        r["cpu_s"], r["cpu_at_s"], r["shown"], r["cpu_per_picture_s"], r.get("guest_cpu_s"),
                        r.get("guest_cpu_per_picture_s"), r.get("cpu_after_first_s"),
                        r.get("cpu_per_picture_after_first_s"), r.get("guest_cpu_after_first_s"),
                        r.get("guest_cpu_per_picture_after_first_s"), r["cadence_s"], r["host_other_cores"],
                        r["qemu_cores"], r["disturbed"], "; ".join(r["notes"])])
    if missing:
        print("peers: no figures for %s (see the notes and %s/*.log)" % (", ".join(missing), args.out))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
