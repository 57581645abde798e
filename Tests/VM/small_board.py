#!/usr/bin/env python3
"""The 512 MB board by hand (issue 31, item 5): carouseld on a QEMU guest with
`-m 512` and one vCPU (like a Raspberry Pi Zero 2 W) and a folder of large
real-world pictures, for --minutes of fast autoplay: is any process killed
for memory, what does each decode cost, and which pictures are refused, with
what line.

Usage: Tests/VM/small_board.py [--carouseld BINARY] [--minutes 10]
                               [--interval 5] [--images-key 'KEY = VALUE']
                               [--skip-renders] [--out out/small-board]
                               [--files out/small-board/files] [--wait-for FILE]

BINARY defaults to the release build scripts/test.sh makes
(.build-static/release/carouseld: swift build -c release --static-swift-stdlib
--scratch-path .build-static). Run as root (build-assets.sh is run first, as
Tests/Benchmarks/peers.py does; cheap when the image is up to date). Not
part of the suite: the figures are for the notes, no exit code depends on
them.

**The pictures** are made on the host once, deterministically (ImageMagick's
plasma fractal with a fixed seed, then fixed encoder settings), and kept in
out/small-board/files (--files; reused when present; delete a file to make
it again; their sizes and SHA-256 are in results.json):

| file | what |
| --- | --- |
| 48mp-progressive.jpg | 8000x6000 progressive JPEG, 4:2:0, quality 90 (ImageMagick) |
| 24mp-lossless.webp | 6000x4000 lossless WebP (ImageMagick, libwebp) |
| 100mp.png | 10000x10000 8-bit RGB PNG (ffmpeg, from the JPEG) |
| 48mp.heic | 8000x6000 HEIC, one image, no grid (heif-enc, x265, quality 70) |
| 8k.avif | 7680x4320 AVIF, 8-bit 4:2:0 (heif-enc, aom, quality 60, speed 8) |
| 01-plasma-1080p.jpg, 02-plasma-1080p.jpg | ordinary 1920x1080 JPEGs, so that something always shows |

and tiny-64.jpg (64x64, outside the folder: the baseline of the renders).
heif-enc comes from Debian's libheif-examples, installed when missing.
Making them all takes a few minutes; afterwards they are reused.

**The run**: the tests' image (.build-vm/out) boots with 512 MiB and one
vCPU, a 1920x1080 bochs display. The pictures are on a second virtio disk,
an ext4 image made from them (out/small-board/pictures.ext4, ~300 MB: more
than the root image has free; mounted read-only, as an SD card's photos
would be), the binary is copied onto the root disk (from the 9p share a
program pages in slowly under TCG), the page cache is dropped and the share
unmounted. Then
`carouseld run` with `[images] path` = the folder, `[autoplay] interval =
--interval`, `[log] level = debug`, for --minutes, started by a small
Python program in the guest (RUNNER below) that puts it in its own cgroup
(cgroup v2, memory controller) and samples every second (4 times a second
while a `carouseld decode-picture` helper runs: it decodes HEIF and AVIF in
a child process):

* carouseld's VmRSS and VmHWM, each helper's VmRSS and VmHWM (the last
  VmHWM seen before it exited is its peak, to within the sampling interval);
* the guest's MemAvailable, MemFree and Shmem (/proc/meminfo; the helper
  hands its pixels back through a memory file, which counts as Shmem);
* the cgroup's memory.current: carouseld and its helpers together, file
  cache they read included; at the end memory.peak (the most they held at
  once), memory.events (oom_kill) and carouseld's VmHWM;
* the socket's event stream (`subscribe`): the `status` at the start, then
  every currentItemIndexDidChange with its `images`, so each picture shown
  is counted by name (when the carousel comes to its page: a picture whose
  decode then fails is counted once, and its skip line says so).

With `cache_mb = auto` an album this small is decoded once and then cycles
from the cache (README.md, "Memory"): the decodes happen in the first
minute. `--images-key 'cache_mb = 8'` (room for one picture) decodes every
picture on every pass, for ten minutes of decodes.

At the end: whether carouseld still runs under the PID it started with (a
restart would be a new PID; nothing restarts it here, so a death is a
death), the kernel's log searched for OOM kills ("Out of memory", "Killed
process", "oom-kill", "invoked oom-killer"), each victim named (carouseld,
one of its decode helpers by PID, a render) from its PID and cgroup,
the daemon's log kept, every `skipping PATH: REASON` line collected; a line
with "decode budget" in it is a refusal by the per-decode memory budget
(`[images] decode_mb`, when the binary has it).

**Per-file decode peaks** (after the run, --skip-renders leaves them out):
for each picture alone, and the tiny JPEG as the baseline of the process
itself, `carouseld render --size 1920x1080` with the same INI and `[images]
files` = that file, one at a time, each in a cgroup of its own, the file
read once beforehand (so that its page cache is not charged to the render).
Three figures per render, because each covers something else:

* **cgroup peak** (memory.peak): the render and its decode helper together,
  at the moment they held the most (anonymous memory, the memory files,
  kernel memory for them): what the decode costs the board;
* **max RSS** (wait4's ru_maxrss): the largest peak RSS of *one* process of
  the tree, the render or its helper, not their sum; it counts file pages
  mapped (the binary) as well;
* **sum RSS**: the largest VmRSS of the render plus its helper sampled at
  the same instant (every 50 ms), which a short peak can slip between.

Each figure is also given minus the baseline's. A render killed by a signal
or out of time (--render-timeout) says so, and one whose cgroup saw an OOM
kill (its helper, usually: the helper sets its oom_score_adj to 1000) is
marked; its figures are then those of a decode cut short, a lower bound.

Writes out/small-board/results.json (everything), samples.csv (one line per
sample), daemon.log (carouseld's stderr), render-NAME.log, end.png (the
screen at the end), and prints a table per file and the run's figures.

--wait-for FILE: on a machine shared with other VMs, boot only while FILE
exists, and stop (daemon, renders, VM) within a minute when it goes away;
the results so far are written.
"""
import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import machine
from vmlib import REPO, VM, VMError

W, H = 1920, 1080
MEMORY_MB = 512
GUEST_DIR = "/opt/small-board"
DISK = GUEST_DIR + "/disk"  # the pictures' disk, /dev/vdb
PICS = DISK + "/pics"
SOCKET = "/run/small-board.sock"

# The large pictures, in the order of the table, and how each is made
# (recipe: a key of make_pictures; what: the table's words).
LARGE = [
    ("48mp-progressive.jpg", "48 MP progressive JPEG (8000x6000, 4:2:0, q90)"),
    ("24mp-lossless.webp", "24 MP lossless WebP (6000x4000)"),
    ("100mp.png", "100 MP PNG (10000x10000, RGB 8-bit)"),
    ("48mp.heic", "48 MP HEIC (8000x6000, x265 q70)"),
    ("8k.avif", "8K AVIF (7680x4320, aom q60)"),
]
ORDINARY = [
    ("01-plasma-1080p.jpg", "1920x1080 JPEG (q90)", 101, "red-blue"),
    ("02-plasma-1080p.jpg", "1920x1080 JPEG (q90)", 102, "green-yellow"),
]
BASELINE = "tiny-64.jpg"
MASTER_SEED = 31


def log(msg):
    print("[small-board %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


# -- the pictures ----------------------------------------------------------------

def run_tool(argv):
    """Runs a picture tool, its output kept for the error message."""
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("small-board: %s failed (%d):\n%s%s" % (" ".join(argv), r.returncode, r.stdout, r.stderr))


def ensure_heif_enc():
    if shutil.which("heif-enc"):
        return
    if os.geteuid() != 0:
        raise SystemExit("small-board: heif-enc is missing: apt-get install libheif-examples (as root)")
    log("installing libheif-examples (heif-enc)")
    subprocess.run(["apt-get", "install", "-y", "-o", "DPkg::Lock::Timeout=600", "libheif-examples"],
                   check=True, stdout=subprocess.DEVNULL)


def make_pictures(folder, work):
    """Makes the pictures that are missing in `folder` (and the baseline in
    `work`); returns {name: seconds it took} for those made now. Every step
    has fixed inputs and settings, so the same tools give the same bytes."""
    os.makedirs(folder, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    made = {}
    master = os.path.join(work, "master-8000x6000.ppm")

    def need(name, where=folder):
        return not os.path.exists(os.path.join(where, name))

    def make(name, steps, where=folder):
        """Runs steps (a function of the temporary output path) and moves the
        result into place only when complete."""
        path = os.path.join(where, name)
        tmp = os.path.join(work, "tmp-" + name)
        t0 = time.monotonic()
        log("making %s" % name)
        steps(tmp)
        os.replace(tmp, path)
        made[name] = round(time.monotonic() - t0, 1)

    def ensure_master():
        # The 48 MP source of the large pictures: plasma's fractal noise has
        # detail at every scale, like a photo's texture (and compresses like
        # one: ~2 bits a pixel at JPEG quality 90).
        if not os.path.exists(master):
            make(os.path.basename(master), lambda out: run_tool(
                ["convert", "-size", "8000x6000", "-seed", str(MASTER_SEED), "plasma:fractal",
                 "-depth", "8", "ppm:" + out]), where=work)

    jpeg = os.path.join(folder, "48mp-progressive.jpg")
    if need("48mp-progressive.jpg"):
        ensure_master()
        make("48mp-progressive.jpg", lambda out: run_tool(
            ["convert", master, "-sampling-factor", "2x2,1x1,1x1", "-interlace", "Plane", "-quality", "90",
             "-strip", "jpeg:" + out]))
    if need("24mp-lossless.webp"):
        ensure_master()
        make("24mp-lossless.webp", lambda out: run_tool(
            ["convert", master, "-resize", "6000x4000!", "-define", "webp:lossless=true", "-strip", "webp:" + out]))
    if need("100mp.png"):
        # ffmpeg, not ImageMagick: ImageMagick's cache limits (1 GiB of disk
        # in Debian's policy.xml) stop a 100 MP picture at 16 bits a sample.
        make("100mp.png", lambda out: run_tool(
            ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", jpeg, "-vf", "scale=10000:10000:flags=bicubic",
             "-pix_fmt", "rgb24", "-fflags", "+bitexact", "-flags", "+bitexact", "-frames:v", "1",
             "-f", "image2", "-c:v", "png", out]))
    if need("48mp.heic") or need("8k.avif"):
        ensure_heif_enc()
    if need("48mp.heic"):
        make("48mp.heic", lambda out: run_tool(
            ["heif-enc", "-q", "70", "-p", "preset=fast", "-o", out, jpeg]))
    if need("8k.avif"):
        crop = os.path.join(work, "8k-source.png")

        def avif(out):
            run_tool(["convert", jpeg, "-gravity", "center", "-crop", "7680x4320+0+0", "+repage", "-strip",
                      "png24:" + crop])
            run_tool(["heif-enc", "-A", "-q", "60", "-p", "speed=8", "-p", "chroma=420", "-o", out, crop])
            os.unlink(crop)
        make("8k.avif", avif)
    for name, _, seed, colours in ORDINARY:
        if need(name):
            make(name, lambda out, seed=seed, colours=colours: run_tool(
                ["convert", "-size", "%dx%d" % (W, H), "-seed", str(seed), "plasma:" + colours, "-quality", "90",
                 "-strip", "jpeg:" + out]))
    if need(BASELINE, work):
        make(BASELINE, lambda out: run_tool(
            ["convert", "-size", "64x64", "-seed", "7", "plasma:red-blue", "-quality", "90", "-strip", "jpeg:" + out]),
            where=work)
    if os.path.exists(master):
        os.unlink(master)  # 144 MB that nothing needs once the pictures exist
    return made


def describe_files(folder, work):
    """{name: {bytes, sha256, size (WxH from identify)}} of the pictures."""
    out = {}
    for name, where in [(n, folder) for n, _ in LARGE] + [(n[0], folder) for n in ORDINARY] + [(BASELINE, work)]:
        path = os.path.join(where, name)
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        out[name] = {"bytes": os.path.getsize(path), "sha256": h.hexdigest()}
    return out


# -- in the guest ----------------------------------------------------------------

# The guest's side: starts carouseld (or one render at a time) in a cgroup of
# its own and samples memory; one JSON object a line on stdout, which the
# host reads as it comes. Python's standard library only (the image's).
#   runner.py daemon SECONDS LOG SOCKET -- ARGV...   carouseld run for SECONDS
#   runner.py render TIMEOUT LABEL:INI:FILE... -- ARGV...  one render per INI
RUNNER = r'''
import json, os, select, signal, socket, sys, time

CGROUPS = "/sys/fs/cgroup"
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def emit(kind, **fields):
    fields["kind"] = kind
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def meminfo():
    d = {}
    for line in (read("/proc/meminfo") or "").splitlines():
        k, _, v = line.partition(":")
        d[k] = int(v.split()[0])
    return {"avail_kib": d.get("MemAvailable"), "free_kib": d.get("MemFree"), "shmem_kib": d.get("Shmem"),
            "total_kib": d.get("MemTotal")}


def proc_status(pid):
    """VmRSS, VmHWM, RssAnon, RssFile, RssShmem in KiB; None once gone."""
    text = read("/proc/%d/status" % pid)
    if text is None:
        return None
    d = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
            d[k] = int(v.split()[0])
    return d


def children(pid):
    """Every descendant of pid, through each thread's children list (the
    helper is spawned from the decoder thread, so it is listed there)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for t in tasks:
            for c in (read("/proc/%d/task/%s/children" % (p, t)) or "").split():
                out.append(int(c))
                todo.append(int(c))
    return out


def cgroup(name):
    """A fresh cgroup v2 with the memory controller, or None."""
    try:
        with open(CGROUPS + "/cgroup.subtree_control", "w") as f:
            f.write("+memory")
    except OSError:
        pass
    path = os.path.join(CGROUPS, name)
    try:
        if os.path.isdir(path):
            os.rmdir(path)
        os.mkdir(path)
    except OSError as e:
        emit("note", text="no cgroup %s: %s" % (path, e))
        return None
    if read(path + "/memory.current") is None:
        emit("note", text="no memory controller in %s" % path)
        return None
    return path


def cg_figures(path):
    if path is None:
        return {}
    events = {}
    for line in (read(path + "/memory.events") or "").splitlines():
        k, _, v = line.partition(" ")
        events[k] = int(v)
    stat = {}
    for line in (read(path + "/memory.stat") or "").splitlines():
        k, _, v = line.partition(" ")
        stat[k] = int(v)
    peak = read(path + "/memory.peak")
    return {"cg_current_kib": int(read(path + "/memory.current") or 0) // 1024,
            "cg_anon_kib": stat.get("anon", 0) // 1024, "cg_shmem_kib": stat.get("shmem", 0) // 1024,
            "cg_file_kib": stat.get("file", 0) // 1024, "cg_kernel_kib": stat.get("kernel", 0) // 1024,
            "cg_peak_kib": int(peak) // 1024 if peak else None, "cg_events": events}


def start(argv, cg, log_path):
    err = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open("/dev/null", os.O_RDWR)
    pid = os.fork()
    if pid == 0:
        try:
            if cg:
                with open(cg + "/cgroup.procs", "w") as f:
                    f.write(str(os.getpid()))
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(err, 2)
            os.execv(argv[0], argv)
        except BaseException as e:
            os.write(err, ("runner: cannot start %s: %s\n" % (argv[0], e)).encode())
        os._exit(127)
    os.close(err)
    os.close(null)
    return pid


def exit_text(status):
    if os.WIFSIGNALED(status):
        return "killed by signal %d (%s)" % (os.WTERMSIG(status), signal.Signals(os.WTERMSIG(status)).name)
    return "exited %d" % os.WEXITSTATUS(status)


def oom_kills():
    for line in (read("/proc/vmstat") or "").splitlines():
        if line.startswith("oom_kill "):
            return int(line.split()[1])
    return None


def daemon(seconds, log_path, argv, sock_path):
    cg = cgroup("small-board-daemon")
    t0 = time.monotonic()
    pid = start(argv, cg, log_path)
    emit("started", pid=pid, oom_kill=oom_kills(), **meminfo())
    sub, buf, ended = None, b"", None
    helper_peaks = {}
    deadline = t0 + seconds
    while not stop and time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            ended = exit_text(status)
            break
        if sub is None and os.path.exists(sock_path):
            try:
                sub = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sub.connect(sock_path)
                # status first: the picture on screen has no index change.
                sub.sendall(b"status\nsubscribe\n")
                sub.setblocking(False)
            except OSError:
                sub = None
        st = proc_status(pid) or {}
        helpers = []
        for c in children(pid):
            cs = proc_status(c)
            if cs:
                helpers.append({"pid": c, "rss_kib": cs.get("VmRSS"), "hwm_kib": cs.get("VmHWM"),
                                "shmem_kib": cs.get("RssShmem")})
                helper_peaks[c] = max(helper_peaks.get(c, 0), cs.get("VmHWM") or 0)
        sample = {"t": round(time.monotonic() - t0, 2), "rss_kib": st.get("VmRSS"), "hwm_kib": st.get("VmHWM"),
                  "anon_kib": st.get("RssAnon"), "file_kib": st.get("RssFile"), "shmem_rss_kib": st.get("RssShmem"),
                  "helpers": helpers}
        sample.update(meminfo())
        cgf = cg_figures(cg)
        for k in ("cg_current_kib", "cg_anon_kib", "cg_shmem_kib", "cg_file_kib"):
            sample[k] = cgf.get(k)
        emit("sample", **sample)
        wait = 0.25 if helpers else 1.0
        end = time.monotonic() + wait
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([sub] if sub else [], [], [], left)
            if not r:
                continue
            try:
                data = sub.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                sub.close()
                sub = None
                continue
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("event") in ("didScroll", "didZoom"):
                    continue
                if "event" not in e and "images" not in e:
                    continue  # subscribe's reply
                emit("event", at=round(time.monotonic() - t0, 2), event=e)
    # The end: the figures first, while it still runs.
    st = proc_status(pid) or {}
    status_reply = None
    if ended is None:
        try:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.settimeout(30)
            c.connect(sock_path)
            c.sendall(b"status\n")
            status_reply = json.loads(c.makefile("rb").readline())
            c.close()
        except (OSError, ValueError) as e:
            status_reply = {"error": str(e)}
    figures = {"pid": pid, "alive_at_end": ended is None, "exit": ended, "hwm_kib": st.get("VmHWM"),
               "rss_kib": st.get("VmRSS"), "helper_peaks_kib": sorted(helper_peaks.values(), reverse=True),
               "seconds": round(time.monotonic() - t0, 1), "interrupted": stop, "status": status_reply,
               "oom_kill": oom_kills()}
    figures.update(cg_figures(cg))
    if ended is None:
        os.kill(pid, signal.SIGTERM)
        for _ in range(150):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                figures["stop"] = exit_text(status)
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
            figures["stop"] = "needed SIGKILL: " + exit_text(os.waitpid(pid, 0)[1])
    emit("end", **figures)


def render(timeout, jobs, argv):
    for job in jobs:
        if stop:
            break
        label, ini, path = job.split(":", 2)
        # The file's and the binary's page cache come in here, charged to
        # the runner's cgroup, not the render's.
        for p in (path, argv[0]):
            with open(p, "rb") as f:
                while f.read(1 << 20):
                    pass
        cg = cgroup("small-board-render")
        t0 = time.monotonic()
        out = "/tmp/render-%s.png" % label
        pid = start(argv + ["--config", ini, "--out", out], cg, "/tmp/render-%s.log" % label)
        sum_rss = own_hwm = helper_hwm = 0
        result = None
        while result is None:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                result = {"exit": exit_text(status), "ru_maxrss_kib": usage.ru_maxrss}
                break
            if stop or time.monotonic() - t0 > timeout:
                os.kill(pid, signal.SIGKILL)
                for c in children(pid):
                    os.kill(c, signal.SIGKILL)
                _, status, usage = os.wait4(pid, 0)
                result = {"exit": "stopped after %.0f s (%s)" % (time.monotonic() - t0, "interrupted" if stop else "time-out"),
                          "ru_maxrss_kib": usage.ru_maxrss}
                break
            st = proc_status(pid) or {}
            total = st.get("VmRSS") or 0
            own_hwm = max(own_hwm, st.get("VmHWM") or 0)
            for c in children(pid):
                cs = proc_status(c) or {}
                total += cs.get("VmRSS") or 0
                helper_hwm = max(helper_hwm, cs.get("VmHWM") or 0)
            sum_rss = max(sum_rss, total)
            time.sleep(0.05)
        result.update(label=label, file=path, seconds=round(time.monotonic() - t0, 2), sum_rss_kib=sum_rss,
                      own_hwm_seen_kib=own_hwm, helper_hwm_seen_kib=helper_hwm, log=read("/tmp/render-%s.log" % label),
                      png=os.path.exists(out), oom_kill=oom_kills())
        result.update(cg_figures(cg))
        if os.path.exists(out):
            os.unlink(out)
        # Let go of the file's page cache: the next render starts as this one did.
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3")
        emit("render", **result)
        if cg:
            try:
                os.rmdir(cg)
            except OSError:
                pass


if __name__ == "__main__":
    mode = sys.argv[1]
    sep = sys.argv.index("--")
    if mode == "daemon":
        daemon(float(sys.argv[2]), sys.argv[3], sys.argv[sep + 1:], sys.argv[4])
    else:
        render(float(sys.argv[2]), sys.argv[3:sep], sys.argv[sep + 1:])
'''


# -- on the host -----------------------------------------------------------------

def carouseld_ini(images, interval, extra_images):
    """The configuration of the run and of every render: autoplay every
    `interval` s (a slide between), debug log, the socket the runner
    subscribes to, and `images` ([images] lines: the folder, or one file)."""
    return "\n".join([
        "[images]", *images, "resume = false", *extra_images,
        "[autoplay]", "enabled = true", "interval = %g" % interval,
        "[control]", "socket = " + SOCKET,
        "[log]", "level = debug", ""])


class Shared:
    """--wait-for FILE: the VM may run only while FILE exists."""

    def __init__(self, path):
        self.path = path

    def free(self):
        return self.path is None or os.path.exists(self.path)

    def wait(self):
        if not self.free():
            log("waiting for %s before booting" % self.path)
            while not self.free():
                time.sleep(10)


OOM_RX = re.compile(r"out of memory|killed process|oom-kill|invoked oom-killer|oom_reaper", re.I)
SKIP_RX = re.compile(r"skipping (/\S+?): (.*)$")


def follow(vm, job, shared, timeout, on_line=None):
    """Reads the runner's JSON lines until it exits; SIGTERM to it when
    `shared` stops being free (it then ends within seconds) or at timeout."""
    pos, items, signalled, killed_at = 0, [], None, float("inf")
    deadline = time.monotonic() + timeout
    while True:
        try:
            job.wait(5)
        except VMError:
            if not vm.alive():
                raise
        while b"\n" in job.stdout[pos:]:
            end = job.stdout.index(b"\n", pos)
            line = job.stdout[pos:end].decode("utf-8", "replace")
            pos = end + 1
            try:
                item = json.loads(line)
            except ValueError:
                item = {"kind": "noise", "text": line}
            items.append(item)
            if on_line:
                on_line(item)
        if job.exited:
            return items, signalled
        if signalled is None and not shared.free():
            signalled = "%s went away" % shared.path
            log("%s: stopping" % signalled)
            job.signal(signal.SIGTERM, group=False)
            killed_at = time.monotonic() + 30
        elif signalled is None and time.monotonic() > deadline:
            signalled = "time-out"
            job.signal(signal.SIGTERM, group=False)
            killed_at = time.monotonic() + 30
        elif signalled is not None and time.monotonic() > killed_at:
            # The runner stops carouseld within 15 s of its SIGTERM; past
            # that, its whole group goes (the daemon and renders with it).
            job.signal(signal.SIGKILL)
            killed_at = float("inf")


def mib(kib):
    return None if kib is None else round(kib / 1024, 1)


def fmt_mib(kib):
    return "-" if kib is None else "%.1f" % (kib / 1024)


def summarize_run(items, daemon_log):
    samples = [i for i in items if i["kind"] == "sample"]
    end = next((i for i in items if i["kind"] == "end"), {})
    started = next((i for i in items if i["kind"] == "started"), {})
    shown = {}
    changes = 0
    first = None
    for i in items:
        if i["kind"] != "event":
            continue
        e = i["event"]
        if "event" not in e:
            if first is None:  # the status reply: the picture on screen at the start
                first = e.get("images") or []
                for p in first:
                    shown[os.path.basename(p)] = shown.get(os.path.basename(p), 0) + 1
            continue
        if e.get("event") == "currentItemIndexDidChange":
            changes += 1
            for p in e.get("images") or []:
                shown[os.path.basename(p)] = shown.get(os.path.basename(p), 0) + 1
    skips = []
    for line in daemon_log.splitlines():
        m = SKIP_RX.search(line)
        if m:
            skips.append({"file": os.path.basename(m.group(1)), "reason": m.group(2),
                          "budget": "decode budget" in line, "line": line})
    budget_lines = [l for l in daemon_log.splitlines() if "decode budget" in l and not SKIP_RX.search(l)]
    helper_rss = [h["rss_kib"] for s in samples for h in s["helpers"] if h.get("rss_kib")]
    tree = [(s["rss_kib"] or 0) + sum(h.get("rss_kib") or 0 for h in s["helpers"]) for s in samples]
    avail = [s["avail_kib"] for s in samples if s.get("avail_kib") is not None]
    return {
        "seconds": end.get("seconds"),
        "samples": len(samples),
        "pid": started.get("pid"),
        "alive_at_end": end.get("alive_at_end"),
        "exit": end.get("exit"),
        "stop": end.get("stop"),
        "interrupted": end.get("interrupted"),
        "max_rss_kib": max((s["rss_kib"] or 0 for s in samples), default=None),
        "hwm_kib": end.get("hwm_kib"),
        "max_helper_rss_kib": max(helper_rss, default=None),
        "helper_peaks_kib": end.get("helper_peaks_kib"),
        "max_rss_with_helpers_kib": max(tree, default=None),
        "cg_peak_kib": end.get("cg_peak_kib"),
        # The cgroup's anonymous memory and memory files (the helper's
        # pixels) at once, without the page cache of the pictures read.
        "max_cg_anon_shmem_kib": max(((s.get("cg_anon_kib") or 0) + (s.get("cg_shmem_kib") or 0) for s in samples),
                                     default=None),
        "cg_events": end.get("cg_events"),
        "mem_total_kib": started.get("total_kib"),
        "min_avail_kib": min(avail, default=None),
        "avail_at_start_kib": started.get("avail_kib"),
        "index_changes": changes,
        "pictures_shown": changes + (1 if first else 0),
        "shown": shown,
        "skips": skips,
        "budget_lines": budget_lines,
        "helper_pids": sorted({h["pid"] for s in samples for h in s["helpers"]}),
        "status": end.get("status"),
        "oom_kill_vmstat": (end.get("oom_kill") or 0) - (started.get("oom_kill") or 0)
        if end.get("oom_kill") is not None else None,
    }


def outcome(name, run, oom_in_run):
    """shown N times / skipped: reason / budget: reason / not shown, for the
    table. A helper's SIGKILL while the kernel OOM-killed one of the run's
    helpers is said to be that (the skip line alone says "crashed")."""
    skip = next((s for s in run["skips"] if s["file"] == name), None) if run else None
    if skip:
        oom = " [the kernel's OOM killer]" if "SIGKILL" in skip["reason"] and oom_in_run else ""
        return ("budget: " if skip["budget"] else "skipped: ") + skip["reason"] + oom
    if run and run["shown"].get(name):
        return "shown %dx" % run["shown"][name]
    return "not shown" if run else "-"


def table(rows):
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    lines.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    return "\n".join(lines)


def kernel_oom_lines(vm):
    return [l for l in vm.run("dmesg", timeout=60).out.splitlines() if OOM_RX.search(l)]


def oom_victims(lines):
    """[{pid, comm, anon_rss_kib, cgroup, uptime_s}] of the kernel's "Killed
    process" lines, each with the cgroup of the oom-kill line before it (the
    daemon's run or a render: the runner puts each in its own)."""
    victims, memcg = [], None
    for line in lines:
        m = re.search(r"task_memcg=(\S+?),", line)
        if m:
            memcg = m.group(1)
        m = re.search(r"\[\s*([\d.]+)\] Out of memory: Killed process (\d+) \((.*?)\).*?anon-rss:(\d+)kB", line)
        if m:
            victims.append({"uptime_s": float(m.group(1)), "pid": int(m.group(2)), "comm": m.group(3),
                            "anon_rss_kib": int(m.group(4)), "cgroup": memcg})
    return victims


def who(victim, run_pid, helper_pids):
    """What an OOM victim was, in words."""
    if victim["pid"] == run_pid:
        return "carouseld itself"
    if victim["pid"] in helper_pids:
        return "a decode helper of the run (carouseld decode-picture)"
    if victim["cgroup"] == "/small-board-render":
        return "a render or its decode helper"
    if victim["cgroup"] == "/small-board-daemon":
        return "a process of the run"
    return "a process outside carouseld (%s)" % victim["cgroup"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--carouseld", default=os.path.join(REPO, ".build-static/release/carouseld"),
                    help="statically linked carouseld (default: %(default)s)")
    ap.add_argument("--minutes", type=float, default=10, help="length of the autoplay run (0: renders only)")
    ap.add_argument("--interval", type=float, default=5, help="[autoplay] interval, seconds")
    ap.add_argument("--images-key", action="append", default=[], metavar="'KEY = VALUE'",
                    help="an extra [images] line, e.g. 'decode_mb = auto' or 'max_pixels = 100000000' (repeatable)")
    ap.add_argument("--skip-renders", action="store_true", help="no per-file renders after the run")
    ap.add_argument("--render-timeout", type=float, default=900, help="seconds a render may take")
    ap.add_argument("--memory-mb", type=int, default=MEMORY_MB, help="the guest's memory (default %(default)s)")
    ap.add_argument("--wait-for", metavar="FILE",
                    help="boot only while FILE exists; stop within a minute when it goes away")
    ap.add_argument("--assets", default=None, help="the tests' image (default .build-vm/out)")
    ap.add_argument("--out", default=os.path.join(REPO, "out/small-board"))
    ap.add_argument("--files", default=os.path.join(REPO, "out/small-board/files"),
                    help="where the pictures are made and kept (default %(default)s)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    binary = os.path.abspath(args.carouseld)
    if not os.path.exists(binary):
        raise SystemExit("small-board: no %s: build it with swift build -c release --static-swift-stdlib "
                         "--scratch-path .build-static (or pass --carouseld)" % binary)
    shared = Shared(args.wait_for)
    if os.geteuid() == 0:
        subprocess.run(["bash", os.path.join(machine.FOLDER, "build-assets.sh")], check=True)

    files_dir = os.path.abspath(args.files)
    work = os.path.join(os.path.dirname(files_dir), "work")  # the baseline, and the sources while making
    t0 = time.monotonic()
    made = make_pictures(files_dir, work)
    making_s = round(time.monotonic() - t0, 1)
    log("pictures ready in %.0f s (%s)" % (making_s, ", ".join("%s %.0f s" % kv for kv in made.items()) or "all cached"))
    described = describe_files(files_dir, work)
    # The pictures go on a disk of their own, as on a board's SD card: an
    # ext4 image made here (the root image has no room for 270 MB, and a copy
    # over 9p takes minutes under TCG). The share has a copy of the binary
    # this run owns (a rebuild meanwhile must not change it).
    stage = os.path.join(args.out, "stage")
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(os.path.join(stage, "disk", "pics"))
    names = [n for n, _ in LARGE] + [n[0] for n in ORDINARY]
    for n in names:
        os.link(os.path.join(files_dir, n), os.path.join(stage, "disk", "pics", n))
    os.link(os.path.join(work, BASELINE), os.path.join(stage, "disk", BASELINE))
    disk = os.path.join(args.out, "pictures.ext4")
    size_mb = sum(v["bytes"] for v in described.values()) // (1 << 20) * 11 // 10 + 32
    if os.path.exists(disk):
        os.unlink(disk)
    run_tool(["mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-L", "pictures", "-d", os.path.join(stage, "disk"),
              disk, "%dM" % size_mb])
    shutil.rmtree(os.path.join(stage, "disk"))
    shutil.copy(binary, os.path.join(stage, "carouseld"))
    for f in os.listdir(args.out):
        if re.match(r"(render-.*\.log|daemon\.log|end\.png|samples\.csv|results\.json)$", f):
            os.unlink(os.path.join(args.out, f))

    carouseld = GUEST_DIR + "/carouseld"
    seconds = args.minutes * 60
    results = {"setup": None, "args": vars(args), "files": described, "making_s": making_s, "made": made,
               "run": None, "renders": [], "kernel_oom": [], "notes": []}
    items = []
    shared.wait()
    t_vm = time.monotonic()
    with VM(assets=args.assets, share=stage, xres=W, yres=H, memory_mb=args.memory_mb, cpus=1,
            boot_timeout=600, verbose=args.verbose,
            qemu_args=["-drive", "file=%s,if=virtio,format=raw,snapshot=on,cache=unsafe" % disk]) as vm:
        log("guest ready after %.1f s; copying to its root disk" % vm.timings["ready"])
        t_copy = time.monotonic()
        vm.run("mkdir -p %s && mount -o ro /dev/vdb %s && install -m 755 /mnt/host/carouseld %s"
               % (DISK, DISK, carouseld), check=True, timeout=900)
        vm.put(GUEST_DIR + "/runner.py", RUNNER)
        vm.put(GUEST_DIR + "/run.ini", carouseld_ini(["path = " + PICS], args.interval, args.images_key))
        renders = [(BASELINE, DISK + "/" + BASELINE)] + [(n, PICS + "/" + n) for n in names]
        for label, path in renders:
            vm.put("%s/render-%s.ini" % (GUEST_DIR, label),
                   carouseld_ini(["files = " + path], args.interval, args.images_key))
        vm.run([carouseld, "check-config", GUEST_DIR + "/run.ini"], check=True)
        vm.run("umount /mnt/host; sync; echo 3 >/proc/sys/vm/drop_caches", check=True, timeout=300)
        log("copied in %.0f s" % (time.monotonic() - t_copy))
        version = vm.run([carouseld, "--version"]).out.strip()
        mem_total = vm.run("grep MemTotal /proc/meminfo").out.split()[1]
        results["setup"] = ("%dx%d bochs, 1 TCG vCPU, -m %d (MemTotal %s KiB), guest kernel %s, carouseld %s, %s" % (
            W, H, args.memory_mb, mem_total, vm.ready_info.get("kernel"), version, time.strftime("%Y-%m-%d %H:%M")))
        log(results["setup"])
        before = kernel_oom_lines(vm)
        if before:
            results["notes"].append("OOM lines in the kernel log before the run: %s" % before)

        if seconds > 0 and shared.free():
            log("carouseld run for %g min, a picture every %g s" % (args.minutes, args.interval))
            next_shot = [60.0]
            t_run = time.monotonic()

            def on_line(item):
                if item["kind"] == "sample":
                    if item["t"] >= next_shot[0]:
                        next_shot[0] += 60
                        vm.screendump(os.path.join(args.out, "end.png"))
                        log("%3.0f s: RSS %s MiB (+ helpers %s), MemAvailable %s MiB" % (
                            item["t"], fmt_mib(item["rss_kib"]),
                            fmt_mib(sum(h.get("rss_kib") or 0 for h in item["helpers"])), fmt_mib(item["avail_kib"])))
                elif item["kind"] in ("note", "started", "end", "noise"):
                    log("runner: %s" % json.dumps(item)[:300])
            job = vm.spawn(["python3", GUEST_DIR + "/runner.py", "daemon", str(seconds), GUEST_DIR + "/daemon.log",
                            SOCKET, "--", carouseld, "run", "--config", GUEST_DIR + "/run.ini"])
            items, stopped = follow(vm, job, shared, seconds + 180, on_line)
            if job.err.strip():
                results["notes"].append("runner stderr: " + job.err.strip()[-2000:])
            if stopped:
                results["notes"].append("the run was stopped early: " + stopped)
            daemon_log = vm.get(GUEST_DIR + "/daemon.log").decode("utf-8", "replace")
            with open(os.path.join(args.out, "daemon.log"), "w") as f:
                f.write(daemon_log)
            results["run"] = summarize_run(items, daemon_log)
            results["run"]["wall_s"] = round(time.monotonic() - t_run, 1)
            results["kernel_oom"] = kernel_oom_lines(vm)
            log("run done in %.0f s" % (time.monotonic() - t_run))

        if not args.skip_renders and shared.free():
            log("renders, one file at a time")

            def on_render(item):
                if item["kind"] == "render":
                    log("render %s: %s in %.1f s, cgroup peak %s MiB, max RSS %s MiB" % (
                        item["label"], item["exit"], item["seconds"], fmt_mib(item.get("cg_peak_kib")),
                        fmt_mib(item["ru_maxrss_kib"])))
                elif item["kind"] in ("note", "noise"):
                    log("runner: %s" % json.dumps(item)[:300])
            job = vm.spawn(["python3", GUEST_DIR + "/runner.py", "render", str(args.render_timeout)]
                           + ["%s:%s/render-%s.ini:%s" % (label, GUEST_DIR, label, path) for label, path in renders]
                           + ["--", carouseld, "render", "--size", "%dx%d" % (W, H)])
            ritems, stopped = follow(vm, job, shared, len(renders) * (args.render_timeout + 60), on_render)
            if stopped:
                results["notes"].append("the renders were stopped early: " + stopped)
            results["renders"] = [i for i in ritems if i["kind"] == "render"]
            for r in results["renders"]:
                with open(os.path.join(args.out, "render-%s.log" % r["label"]), "w") as f:
                    f.write(r.get("log") or "")
            results["kernel_oom"] = kernel_oom_lines(vm)
        if not shared.free() and not any("went away" in n for n in results["notes"]):
            results["notes"].append("stopped: %s went away" % args.wait_for)
    results["vm_s"] = round(time.monotonic() - t_vm, 1)
    report(results, items, args)
    return 0


def report(results, items, args):
    run = results["run"]
    base = next((r for r in results["renders"] if r["label"] == BASELINE), None)

    def minus(r, key):
        if not base or r.get(key) is None or base.get(key) is None:
            return "-"
        return "%+.1f" % ((r[key] - base[key]) / 1024)

    victims = oom_victims(results["kernel_oom"])
    helper_pids = set(run["helper_pids"]) if run else set()
    for v in victims:
        v["what"] = who(v, run and run["pid"], helper_pids)
    results["oom_victims"] = victims
    oom_in_run = any(v["pid"] in helper_pids for v in victims)
    rows = [["file", "size", "MB", "in the %g min run" % args.minutes, "render", "cgroup peak MiB", "- baseline",
             "max RSS MiB", "- baseline", "sum RSS MiB", "render s"]]
    what = dict([(n, w) for n, w in LARGE] + [(n[0], n[1]) for n in ORDINARY] + [(BASELINE, "64x64 JPEG (baseline)")])
    for name in [n for n, _ in LARGE] + [n[0] for n in ORDINARY] + [BASELINE]:
        r = next((x for x in results["renders"] if x["label"] == name), {})
        render_says = "-"
        if r:
            skip = [l for l in (r.get("log") or "").splitlines() if "skipping" in l]
            render_oom = " [the kernel's OOM killer]" if r.get("cg_events", {}).get("oom_kill") else ""
            render_says = r["exit"] + render_oom + ("; " + "; ".join(SKIP_RX.search(l).group(2) if SKIP_RX.search(l) else l
                                                           for l in skip) if skip else "")
        rows.append([name, what[name], "%.1f" % (results["files"][name]["bytes"] / 1e6),
                     "-" if name == BASELINE else outcome(name, run, oom_in_run), render_says,
                     fmt_mib(r.get("cg_peak_kib")), minus(r, "cg_peak_kib"),
                     fmt_mib(r.get("ru_maxrss_kib")), minus(r, "ru_maxrss_kib"),
                     fmt_mib(r.get("sum_rss_kib")), "%.1f" % r["seconds"] if r else "-"])
    print("small-board: " + (results["setup"] or "no VM"))
    print()
    print(table(rows))
    print()
    if run:
        print("run: %.0f s, %d samples; carouseld %s (pid %s)%s" % (
            run["seconds"] or 0, run["samples"], "still running at the end" if run["alive_at_end"]
            else "DIED: %s" % run["exit"], run["pid"], ", stopped: %s" % run["stop"] if run.get("stop") else ""))
        print("  carouseld max RSS %s MiB (VmHWM %s MiB); helpers max RSS %s MiB (peaks %s); "
              "carouseld + helpers at once, sampled: %s MiB; their cgroup: peak %s MiB with the page cache of "
              "the pictures read, anon + shmem %s MiB at most (sampled)" % (
                  fmt_mib(run["max_rss_kib"]), fmt_mib(run["hwm_kib"]), fmt_mib(run["max_helper_rss_kib"]),
                  ", ".join(fmt_mib(k) for k in run["helper_peaks_kib"] or []) or "none",
                  fmt_mib(run["max_rss_with_helpers_kib"]), fmt_mib(run["cg_peak_kib"]),
                  fmt_mib(run["max_cg_anon_shmem_kib"])))
        print("  MemTotal %s MiB, MemAvailable %s MiB at the start, %s MiB at the least" % (
            fmt_mib(run["mem_total_kib"]), fmt_mib(run["avail_at_start_kib"]), fmt_mib(run["min_avail_kib"])))
        print("  pictures shown: %d (the first, then %d changes of picture); by name: %s" % (
            run["pictures_shown"], run["index_changes"], ", ".join("%s %d" % kv for kv in sorted(run["shown"].items())) or "none"))
        print("  skip lines: %d (%d by the decode budget)" % (len(run["skips"]), len([s for s in run["skips"] if s["budget"]])))
        for s in run["skips"]:
            print("    " + s["line"])
        for l in run["budget_lines"]:
            print("  budget: " + l)
    oom = results["kernel_oom"]
    print("OOM kill: %s" % ("YES" if oom else "none (kernel log)")
          + ("; the run's cgroup: oom_kill %s" % run["cg_events"].get("oom_kill") if run and run.get("cg_events") else ""))
    for v in victims:
        print("  %.1f s after boot: pid %d (%s), %s, anon RSS %s MiB" % (
            v["uptime_s"], v["pid"], v["comm"], v["what"], fmt_mib(v["anon_rss_kib"])))
    for l in oom:
        print("  kernel: " + l.strip())
    for n in results["notes"]:
        print("note: " + n)
    print("figures: cgroup peak = the render and its decode helper together at their most (memory.peak); "
          "max RSS = wait4's ru_maxrss, the larger of the render's and the helper's own peaks, not their sum; "
          "sum RSS = their VmRSS added, sampled every 50 ms")
    print("small-board: pictures made in %.0f s, VM %.0f s; everything in %s" % (
        results["making_s"], results["vm_s"], args.out))
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "samples.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t", "rss_kib", "hwm_kib", "anon_kib", "file_kib", "helpers", "helpers_rss_kib", "helpers_hwm_kib",
                    "avail_kib", "free_kib", "shmem_kib", "cg_current_kib", "cg_anon_kib", "cg_shmem_kib", "cg_file_kib"])
        for s in (i for i in items if i["kind"] == "sample"):
            w.writerow([s["t"], s["rss_kib"], s["hwm_kib"], s["anon_kib"], s["file_kib"], len(s["helpers"]),
                        sum(h.get("rss_kib") or 0 for h in s["helpers"]),
                        max((h.get("hwm_kib") or 0 for h in s["helpers"]), default=0),
                        s["avail_kib"], s["free_kib"], s["shmem_kib"], s["cg_current_kib"], s.get("cg_anon_kib"),
                        s.get("cg_shmem_kib"), s.get("cg_file_kib")])


if __name__ == "__main__":
    sys.exit(main())
