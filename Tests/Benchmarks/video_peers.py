#!/usr/bin/env python3
"""The video peer benchmark (issue 29): the same H.264 clip played by
`mpv --vo=drm` and by carouseld on the same QEMU machine as peers.py (the
peers image, 1920x1080 bochs, one TCG vCPU), side by side, as ratios
carouseld/mpv. Run by hand; not part of the test suite.

Usage: Tests/Benchmarks/video_peers.py [--carouseld BINARY] [--runs 3] [--only mpv,carouseld]
                                       [--clips 640x360,1280x720] [--seconds 10] [--fps 30] [--out out/video-peers]

The clips are made on the host with ffmpeg (testsrc2, H.264 High, yuv420p,
--fps, --seconds; fixed encoder settings, so the same bytes every time) and
copied with the binary onto the guest's root disk (a 9p share pages in
slowly under TCG). Each run, one program and one clip at a time, round-robin
(clips inside programs inside runs) so a drift in the host's load touches
all alike, from a cold page cache (--warm keeps it):

* **mpv**: `mpv --no-config --vo=drm --no-audio --hwdec=no --keep-open=yes
  --input-ipc-server=...` (no OSD, scripts or terminal; `--keep-open` holds
  the last frame at the end instead of exiting, so the process can still be
  read). A small watcher in the guest starts it, follows its IPC events:
  playback starts at `playback-restart`, ends at `eof-reached`; then reads
  `frame-drop-count` (frames the VO dropped to keep time),
  `decoder-frame-drop-count` (frames the decoder skipped) and
  `vo-delayed-frame-count`, and asks it to quit.
* **carouseld**: `carouseld run` on a folder that is empty at start, with
  autoplay and the page dots off and `[video] loop = false`; the watcher
  subscribes on the control socket, then moves the clip into the folder (a
  rename: no half-written file), so the daemon's start-up is out of the
  playback window and no event can be missed. Playback starts at
  `didStartVideo`, ends at `didEndVideo` (its `frames`, `dropped`); `status`
  then gives `video` (state, frames, dropped), which must agree.

For both, at the start and at the end of playback the watcher reads
utime + stime (+ the children waited for, + live child processes) from
/proc/PID/stat; **CPU per second of video** is the playback window's CPU
over the clip's duration, **CPU per frame shown** the same over the
frames the program says it showed, and **CPU from exec** the whole process's CPU at
the end over the same duration (start-up included). **Peak RSS** is VmHWM
at the end (the drawing process; live children's apart in the raw data).
**Dropped** is each program's own count of frames not shown. The playback
window's wall time is in the raw data (a program that falls behind without
dropping takes longer than the clip), never judged.

Before each run the script waits (at most --wait-quiet s) for the host's
other processes to calm down, and marks a run *disturbed* when they kept
more than --max-other-load cores busy meanwhile (peers.py's rule); disturbed
runs are kept in the raw data and repeated (--retries). Medians are over
the undisturbed runs.

Prints a table (figures, and the ratios carouseld/mpv when both ran);
writes out/video-peers/results.json, runs.csv, and per run the program's
log and its last frame (the screen at the end of playback, before the
program is stopped). No exit code depends on the figures; exit 1 if a
program gave none.
"""
import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import machine
from vmlib import REPO, VM, VMError
import peers  # its host-load rule, /proc readers and stop()

W, H = peers.W, peers.H           # the panel peers.py measures on: 1920x1080
# carouseld-baseline: another carouseld build (--baseline) on the same
# clips in the same VM run, e.g. the in-process player before clips moved
# to the decoding helper, for ratios carouseld/baseline.
PROGRAMS = ("mpv", "carouseld", "carouseld-baseline")
GUEST_DIR = "/opt/video-peers"
CLIPS = GUEST_DIR + "/clips"      # the clips on the root disk
ALBUM = GUEST_DIR + "/album"      # carouseld's folder: empty until the watcher moves a clip in
SOCKET = "/run/video-peers.sock"  # carouseld's control socket
MPV_IPC = "/run/video-peers-mpv.sock"
WATCHER = GUEST_DIR + "/watch.py"


def log(msg):
    print("[video-peers %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


# -- clips -------------------------------------------------------------------------

def clip_name(size, fps, seconds):
    return "testsrc2-%s-%gfps-%gs.mp4" % (size, fps, seconds)


def make_clip(folder, size, fps, seconds):
    """An H.264 clip of ffmpeg's testsrc2 (moving patterns and a frame
    counter: every frame differs), made once. Fixed encoder settings and
    one encoder thread, bitexact muxing: the same file on every host with
    the same ffmpeg."""
    path = os.path.join(folder, clip_name(size, fps, seconds))
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        tmp = path + ".tmp.mp4"
        subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                        "-f", "lavfi", "-i", "testsrc2=size=%s:rate=%g:duration=%g" % (size, fps, seconds),
                        "-c:v", "libx264", "-profile:v", "high", "-preset", "medium", "-crf", "23",
                        "-g", "%d" % round(fps * 2), "-pix_fmt", "yuv420p", "-threads", "1",
                        "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:v", "+bitexact",
                        "-movflags", "+faststart", tmp], check=True)
        os.replace(tmp, path)
    probe = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames",
         "-show_entries", "stream=width,height,codec_name,nb_read_frames,r_frame_rate:format=duration",
         "-of", "json", path], check=True, capture_output=True, text=True).stdout)
    st = probe["streams"][0]
    return {"file": os.path.basename(path), "size": size, "width": st["width"], "height": st["height"],
            "codec": st["codec_name"], "frames": int(st["nb_read_frames"]),
            "duration": float(probe["format"]["duration"]), "bytes": os.path.getsize(path)}


# -- the guest side ------------------------------------------------------------------

# Runs in the guest (python3, standard library): starts the program, follows
# it over its socket, reads /proc at the start and end of playback, prints one
# JSON line. In the guest, so the moments are the guest's own and no host
# round trip sits between an event and its reading; it sleeps on its socket
# meanwhile (no polling while the clip plays).
WATCH = r'''
import json, os, signal, socket, subprocess, sys, time
spec = json.loads(sys.argv[1])
HZ = os.sysconf("SC_CLK_TCK")
res = {"notes": []}


def procs():
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # fields[1] ppid; [11..14] utime stime cutime cstime
            out[int(d)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))
    return out


def tree(pid, table):
    keep, grew = {pid}, True
    while grew:
        more = {p for p, v in table.items() if v[0] in keep} - keep
        grew = bool(more)
        keep |= more
    return keep


def cpu(pid):
    """CPU seconds of pid, its waited-for children and its live descendants."""
    table = procs()
    return sum(table[p][1] for p in tree(pid, table) if p in table) / HZ


def hwm(pid):
    """VmHWM (KiB) of pid, and of each live descendant."""
    def one(p):
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            return None
    table = procs()
    return one(pid), {p: one(p) for p in tree(pid, table) - {pid}}


def threads(pid):
    """[name, user s, system s] per live thread of pid, busiest first: where
    the CPU went (decoding, scaling, the display)."""
    out = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                text = f.read()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        out.append([name, round(int(fields[11]) / HZ, 2), round(int(fields[12]) / HZ, 2)])
    return sorted(out, key=lambda t: -(t[1] + t[2]))


def give_up(error):
    res["error"] = error
    if proc.poll() is None:
        proc.kill()
    res["rc"] = proc.wait()
    print(json.dumps(res))
    sys.exit(0)


def connect(path, proc, deadline):
    while True:
        if proc.poll() is not None:
            give_up("the program exited (rc %s) before its socket opened" % proc.returncode)
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                give_up("no socket %s after %g s" % (path, spec["timeout"]))
            time.sleep(0.02)


def readline(f):
    """The next line, or socket.timeout once the run's deadline is past
    (other events may keep the socket busy)."""
    if time.monotonic() > deadline:
        raise socket.timeout()
    return f.readline()


def own_cpu(pid):
    """CPU seconds of pid itself (utime + stime): carouseld's display
    process without the helpers that decode its clips."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / HZ


def mark(name, pid):
    res[name] = {"t": round(time.monotonic() - t0, 3), "cpu": cpu(pid), "own": own_cpu(pid)}


def capture():
    if spec.get("capture"):
        subprocess.run(["vm-request", "capture", spec["capture"]], stdout=subprocess.DEVNULL, timeout=60)


logf = open(spec["log"], "w")
deadline = time.monotonic() + spec["timeout"]
t0 = time.monotonic()
proc = subprocess.Popen(spec["argv"], stdin=subprocess.DEVNULL, stdout=logf, stderr=logf)
res["pid"] = proc.pid
try:
    if spec["program"] == "mpv":
        s = connect(spec["ipc"], proc, deadline)
        s.settimeout(max(1, deadline - time.monotonic()))
        f = s.makefile("rwb")
        f.write(b'{"command": ["observe_property", 1, "eof-reached"]}\n'); f.flush()
        started = False
        while True:
            line = readline(f)
            if not line:
                res["error"] = "mpv closed its IPC socket before the end of the clip"
                break
            ev = json.loads(line)
            if ev.get("event") == "playback-restart" and not started:
                mark("start", proc.pid); started = True
            elif ev.get("event") == "property-change" and ev.get("name") == "eof-reached" and ev.get("data") is True:
                mark("end", proc.pid)
                res["hwm_kib"], res["children_hwm_kib"] = hwm(proc.pid)
                res["threads"] = threads(proc.pid)
                break
            elif ev.get("event") == "end-file":
                res["error"] = "mpv ended the file: %s" % line.decode().strip()
                break
        if not started:
            res["notes"].append("no playback-restart event seen")
        props = {}
        for i, name in enumerate(spec["properties"], 100):
            f.write(json.dumps({"command": ["get_property", name], "request_id": i}).encode() + b"\n"); f.flush()
            while True:
                reply = json.loads(readline(f))
                if reply.get("request_id") == i:
                    props[name] = reply.get("data") if reply.get("error") == "success" else None
                    break
        res["mpv"] = props
        capture()
        f.write(b'{"command": ["quit"]}\n'); f.flush()
    else:
        s = connect(spec["socket"], proc, deadline)
        s.settimeout(max(1, deadline - time.monotonic()))
        f = s.makefile("rwb")
        f.write(b"subscribe\n"); f.flush()
        # Subscribed: now the clip comes into the folder.
        os.rename(spec["stage"], spec["clip"])
        res["events"] = []
        while True:
            line = readline(f)
            if not line:
                res["error"] = "carouseld closed the control socket before didEndVideo"
                break
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            name = ev.get("event")
            if name in ("didStartVideo", "didEndVideo"):
                res["events"].append(ev)
            if name == "didStartVideo" and "start" not in res:
                mark("start", proc.pid)
            elif name == "didEndVideo":
                mark("end", proc.pid)
                res["hwm_kib"], res["children_hwm_kib"] = hwm(proc.pid)
                res["threads"] = threads(proc.pid)
                break
        q = socket.socket(socket.AF_UNIX)
        q.connect(spec["socket"])
        q.sendall(b"status\n")
        try:
            res["status_video"] = json.loads(q.makefile().readline()).get("video")
        except ValueError as e:
            res["notes"].append("status: %s" % e)
        q.close()
        capture()
        proc.send_signal(signal.SIGTERM)
except socket.timeout:
    res["error"] = "no end of playback within %g s" % spec["timeout"]
    res["hwm_kib"], res["children_hwm_kib"] = hwm(proc.pid)
    capture()
    proc.send_signal(signal.SIGTERM)
try:
    res["rc"] = proc.wait(10)
except subprocess.TimeoutExpired:
    proc.kill()
    res["rc"] = proc.wait()
    res["notes"].append("needed SIGKILL")
print(json.dumps(res))
'''

# What mpv says about its own frames at the end (get_property; a property
# this mpv does not have reads as null).
MPV_PROPERTIES = ["frame-drop-count", "decoder-frame-drop-count", "vo-delayed-frame-count",
                  "mistimed-frame-count", "estimated-frame-count", "estimated-frame-number",
                  "duration", "container-fps", "width", "height", "video-codec", "hwdec-current",
                  "current-vo", "video-sync"]


MPV_EXTRA = []   # --mpv-option, for experiments (not in the default comparison)


def mpv_argv(clip):
    # A player and nothing else: no audio, OSD, on-screen controller,
    # scripts or terminal input; software decoding (the VM has no video
    # decoder); --keep-open so the process is still there to be read at the
    # end. Frame dropping is mpv's default (--framedrop=vo).
    return ["mpv", "--no-config", "--vo=drm", "--no-audio", "--hwdec=no", "--keep-open=yes",
            "--osd-level=0", "--no-osc", "--load-scripts=no", "--ytdl=no", "--no-terminal",
            "--input-ipc-server=" + MPV_IPC] + MPV_EXTRA + [clip]


def carouseld_ini():
    # One clip and nothing else on screen: autoplay off (it would move on
    # at the clip's end), page dots off (mpv shows no OSD), the clip played
    # once. A folder, not `files`: the clip is moved in after subscribing.
    return "\n".join([
        "[images]", "path = " + ALBUM,
        "[autoplay]", "enabled = false",
        "[indicator]", "enabled = false",
        "[video]", "enabled = true", "loop = false",
        "[control]", "socket = " + SOCKET,
        "[log]", "level = info", ""])


CAROUSELD_ARGV = [GUEST_DIR + "/carouseld", "run", "--config", GUEST_DIR + "/carouseld.ini"]


def carouseld_argv(program):
    return [GUEST_DIR + "/" + program] + CAROUSELD_ARGV[1:]


# -- one run ---------------------------------------------------------------------------

class VideoBench(peers.Bench):
    """peers.Bench's host-load rule (wait_quiet, HostLoad) on the video runs."""

    def __init__(self, vm, args):  # noqa: super().__init__ needs the pictures' references
        self.vm, self.args = vm, args
        self.hz = int(vm.run(["getconf", "CLK_TCK"], check=True).out.strip())
        self.load = peers.HostLoad(vm.proc.pid)

    def run_once(self, program, clip, label):
        a = self.args
        waited = self.wait_quiet()
        guest_clip = "%s/%s" % (CLIPS, clip["file"])
        if program.startswith("carouseld"):
            # The folder empty, the clip staged beside it on the same file
            # system (the watcher renames it in).
            self.vm.run("rm -rf %s && mkdir -p %s && cp %s %s/stage.mp4"
                        % (ALBUM, ALBUM, guest_clip, GUEST_DIR), check=True, timeout=120)
            self.vm.run(["rm", "-f", SOCKET], check=True)
        else:
            self.vm.run(["rm", "-f", MPV_IPC], check=True)
        if not a.warm:
            self.vm.run("sync; echo 3 >/proc/sys/vm/drop_caches", check=True)
        timeout = clip["duration"] * 8 + 120
        spec = {"program": program, "timeout": timeout, "log": "/tmp/%s.log" % label, "capture": label + "-end",
                "argv": mpv_argv(guest_clip) if program == "mpv" else carouseld_argv(program),
                "ipc": MPV_IPC, "properties": MPV_PROPERTIES,
                "socket": SOCKET, "stage": GUEST_DIR + "/stage.mp4", "clip": "%s/%s" % (ALBUM, clip["file"])}
        self.load.start()
        r = self.vm.run(["python3", WATCHER, json.dumps(spec)], timeout=timeout + 60)
        other, qemu = self.load.other_cores()
        run = {"program": program, "clip": clip["size"], "label": label, "waited_s": waited,
               "host_other_cores": round(other, 2), "qemu_cores": round(qemu, 2),
               "disturbed": other > a.max_other_load, "notes": [],
               "dropped": None, "frames_shown": None, "cpu_per_s": None, "cpu_exec_per_s": None,
               "hwm_kib": None, "playback_wall_s": None}
        try:
            w = json.loads(r.out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            w = {"error": "the watcher printed no result (rc %s): %s %s" % (r.rc, r.out[-500:], r.err[-1500:])}
        run["watch"] = w
        run["notes"] += w.get("notes", [])
        text = self.vm.run(["cat", spec["log"]]).out
        with open(os.path.join(a.out, label + ".log"), "w") as f:
            f.write("$ %s\n%s" % (" ".join(spec["argv"]), text))
        if w.get("error"):
            run["notes"].append(w["error"])
            if program.startswith("carouseld"):
                run["notes"].append("its log ends: " + text.strip()[-800:])
        if "start" in w and "end" in w:
            d = clip["duration"]
            run["cpu_per_s"] = round((w["end"]["cpu"] - w["start"]["cpu"]) / d, 3)
            run["cpu_exec_per_s"] = round(w["end"]["cpu"] / d, 3)
            run["playback_wall_s"] = round(w["end"]["t"] - w["start"]["t"], 2)
            run["start_s"] = w["start"]["t"]
            if w["end"].get("own") is not None and w["start"].get("own") is not None:
                run["cpu_own_s"] = round(w["end"]["own"] - w["start"]["own"], 3)
                run["cpu_children_s"] = round(w["end"]["cpu"] - w["start"]["cpu"] - run["cpu_own_s"], 3)
        run["hwm_kib"] = w.get("hwm_kib")
        run["threads"] = w.get("threads")
        if program == "mpv" and w.get("mpv"):
            p = w["mpv"]
            counts = [p.get("frame-drop-count"), p.get("decoder-frame-drop-count")]
            if None not in counts:
                run["dropped"] = sum(counts)
                run["frames_shown"] = clip["frames"] - run["dropped"]
            else:
                run["notes"].append("mpv gave no drop counts: %s" % p)
        elif program.startswith("carouseld"):
            end = [e for e in w.get("events", []) if e.get("event") == "didEndVideo"]
            if end:
                run["dropped"], run["frames_shown"] = end[0].get("dropped"), end[0].get("frames")
                sv = w.get("status_video") or {}
                if (sv.get("dropped"), sv.get("frames")) != (run["dropped"], run["frames_shown"]):
                    run["notes"].append("status video %s disagrees with didEndVideo %s" % (sv, end[0]))
                if sv.get("state") != "ended":
                    run["notes"].append("status video state %r after didEndVideo, not 'ended'" % sv.get("state"))
            m = re.search(r"this board shows ([\d.]+) of ([\d.]+) frames a second", text)
            if m:
                run["decoding_fps"] = float(m.group(1))
                run["notes"].append("carouseld said: this board shows %s of %s frames a second" % m.groups())
            m = re.search(r"video: ended \d+ \(.*\) after (\d+) frames, (\d+) dropped", text)
            if m and run["frames_shown"] is not None and (int(m.group(1)), int(m.group(2))) != (run["frames_shown"], run["dropped"]):
                run["notes"].append("its log line says %s frames, %s dropped" % m.groups())
        return run


# -- report ------------------------------------------------------------------------------

KEYS = ("dropped", "cpu_per_s", "cpu_per_frame_ms", "cpu_exec_per_s", "hwm_kib", "playback_wall_s")


def cpu_per_frame_ms(r):
    """Playback CPU per frame shown, ms: what a frame on screen costs, which
    compares programs that drop differently (one that drops more to keep
    time spends less per second of video, not per frame)."""
    w = r.get("watch") or {}
    if "start" not in w or "end" not in w or not r.get("frames_shown"):
        return None
    return round((w["end"]["cpu"] - w["start"]["cpu"]) / r["frames_shown"] * 1000, 1)


def summarize(runs, programs, clips):
    for r in runs:
        r["cpu_per_frame_ms"] = cpu_per_frame_ms(r)
    med = {}
    for p in programs:
        for c in clips:
            mine = [r for r in runs if r["program"] == p and r["clip"] == c["size"]]
            good = [r for r in mine if not r["disturbed"]]
            m = {"runs": len(good), "disturbed": len(mine) - len(good), "from_disturbed": not good and bool(mine)}
            if not good:
                # On a host that was never quiet, the disturbed runs' figures
                # (marked as such in the table) rather than none.
                good = mine
            for key in KEYS:
                vals = [r[key] for r in good if r[key] is not None]
                m[key] = statistics.median(vals) if vals else None
                m[key + "_all"] = vals
            med["%s %s" % (p, c["size"])] = m
    return med


def table(med, programs, clips, versions):
    def cell(m, key, scale, digits, unit):
        v = m[key]
        if v is None:
            return "-"
        vals = m[key + "_all"]
        spread = "" if len(vals) < 2 else " (%.*f-%.*f)" % (digits, min(vals) / scale, digits, max(vals) / scale)
        return "%.*f%s%s" % (digits, v / scale, unit, spread)

    head = ["program", "clip", "frames dropped", "CPU s per s of video (playback)", "CPU per frame shown",
            "CPU s per s (from exec)",
            "peak RSS (VmHWM)", "playback wall time", "runs"]
    rows = []
    names = {"mpv": "mpv %s --vo=drm" % versions.get("mpv", "?"), "carouseld": "carouseld",
             "carouseld-baseline": "carouseld baseline %s" % versions.get("carouseld-baseline", "?")}
    for c in clips:
        for p in programs:
            m = med["%s %s" % (p, c["size"])]
            rows.append([names[p], "%s, %d frames, %.1f s" % (c["size"], c["frames"], c["duration"]),
                         cell(m, "dropped", 1, 0, ""), cell(m, "cpu_per_s", 1, 3, " s"),
                         cell(m, "cpu_per_frame_ms", 1, 0, " ms"), cell(m, "cpu_exec_per_s", 1, 3, " s"), cell(m, "hwm_kib", 1024, 1, " MiB"),
                         cell(m, "playback_wall_s", 1, 2, " s"),
                         "%d%s" % (m["runs"], " (+%d disturbed%s)" % (
                             m["disturbed"], ", figures from those" if m["from_disturbed"] else "")
                             if m["disturbed"] else "")])
        for other in ("mpv", "carouseld-baseline"):
            if "carouseld" not in programs or other not in programs:
                continue
            a, b = med["carouseld %s" % c["size"]], med["%s %s" % (other, c["size"])]

            def ratio(key):
                if a[key] is None or b[key] is None:
                    return "-"
                if b[key] == 0:
                    return "%s vs 0" % a[key] if a[key] else "1.00x (0 and 0)"
                return "%.2fx" % (a[key] / b[key])
            rows.append(["carouseld/" + ("mpv" if other == "mpv" else "baseline"), c["size"], ratio("dropped"), ratio("cpu_per_s"), ratio("cpu_per_frame_ms"),
                         ratio("cpu_exec_per_s"),
                         ratio("hwm_kib"), ratio("playback_wall_s"), ""])
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    lines = ["| " + " | ".join(cell.ljust(w) for cell, w in zip(r, widths)) + " |" for r in [head] + rows]
    lines.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--carouseld", default=os.path.join(REPO, ".build-static/release/carouseld"),
                    help="statically linked carouseld to measure (default: %(default)s)")
    ap.add_argument("--baseline", help="another statically linked carouseld, run as carouseld-baseline")
    ap.add_argument("--runs", type=int, default=3, help="runs per program and clip (default 3)")
    ap.add_argument("--only", default="mpv,carouseld", help="comma-separated: mpv,carouseld,carouseld-baseline")
    ap.add_argument("--clips", default="640x360,1280x720", help="clip sizes, comma-separated WxH")
    ap.add_argument("--seconds", type=float, default=10, help="clip length")
    ap.add_argument("--fps", type=float, default=30, help="clip frame rate")
    ap.add_argument("--warm", action="store_true", help="keep the guest's page cache between runs")
    ap.add_argument("--max-other-load", type=float, default=0.5,
                    help="host cores busy with other processes above which a run is repeated")
    ap.add_argument("--retries", type=int, default=2, help="repeats of disturbed runs per program and clip")
    ap.add_argument("--wait-quiet", type=float, default=120,
                    help="seconds to wait before a run for the host to be below --max-other-load")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the vCPU thread to its own host core")
    ap.add_argument("--assets", default=peers.PEERS_ASSETS, help="peers image (build-assets.sh --peers)")
    ap.add_argument("--out", default=os.path.join(REPO, "out/video-peers"))
    ap.add_argument("--mpv-option", action="append", default=[], metavar="--OPTION=VALUE",
                    help="an extra mpv option for an experiment, e.g. --mpv-option=--sws-scaler=fast-bilinear "
                         "(repeatable; the comparison proper uses none)")
    ap.add_argument("--report", metavar="RESULTS_JSON",
                    help="print the table of an earlier run's results.json again (no VM)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.report:
        saved = json.load(open(args.report))
        progs = [p for p in PROGRAMS if any(r["program"] == p for r in saved["runs"])]
        print("video-peers: " + saved["setup"])
        print(table(summarize(saved["runs"], progs, saved["clips"]), progs, saved["clips"], saved["versions"]))
        return 0
    MPV_EXTRA.extend(args.mpv_option)
    programs = [p for p in PROGRAMS if p in args.only.split(",")]
    unknown = set(args.only.split(",")) - set(PROGRAMS)
    if unknown or not programs:
        ap.error("--only takes mpv, carouseld, carouseld-baseline (comma-separated), not %s" % ",".join(sorted(unknown)))
    sizes = args.clips.split(",")
    if not all(re.fullmatch(r"\d+x\d+", s) for s in sizes):
        ap.error("--clips takes sizes such as 640x360,1280x720")
    binary = os.path.abspath(args.carouseld)
    if "carouseld" in programs and not os.path.exists(binary):
        raise SystemExit("video-peers: no %s: build it with swift build -c release --static-swift-stdlib "
                         "--scratch-path .build-static (or pass --carouseld)" % binary)
    if "carouseld-baseline" in programs and not (args.baseline and os.path.exists(args.baseline)):
        ap.error("carouseld-baseline needs --baseline BINARY")
    for tool in ("ffmpeg", "ffprobe"):
        if shutil.which(tool) is None:
            raise SystemExit("video-peers: %s is needed on the host to make the clips (apt-get install ffmpeg)" % tool)

    if os.geteuid() == 0:
        subprocess.run(["bash", os.path.join(machine.FOLDER, "build-assets.sh"), "--peers"], check=True)
    elif not os.path.exists(os.path.join(args.assets, "manifest.json")):
        raise SystemExit("video-peers: no peers image in %s: run scripts/vm/build-assets.sh --peers as root" % args.assets)

    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.out):
        if re.match(r"(mpv|carouseld)-.*\.(png|log)$", f):
            os.unlink(os.path.join(args.out, f))
    stage = os.path.join(args.out, "stage")
    log("clips")
    clips = [make_clip(os.path.join(stage, "clips"), s, args.fps, args.seconds) for s in sizes]
    for c in clips:
        log("%s: %dx%d %s, %d frames, %.2f s, %d bytes" % (c["file"], c["width"], c["height"], c["codec"],
                                                          c["frames"], c["duration"], c["bytes"]))
    with open(os.path.join(stage, "watch.py"), "w") as f:
        f.write(WATCH)
    if "carouseld" in programs:
        shutil.copy(binary, os.path.join(stage, "carouseld"))
    if "carouseld-baseline" in programs:
        shutil.copy(os.path.abspath(args.baseline), os.path.join(stage, "carouseld-baseline"))

    t_start = time.monotonic()
    runs = []
    with VM(assets=args.assets, share=stage, xres=W, yres=H, cpus=1, pin_vcpu=not args.no_pin,
            boot_timeout=600, capture_dir=args.out, verbose=args.verbose) as vm:
        log("guest ready after %.1f s; copying to its root disk" % vm.timings["ready"])
        vm.run("mkdir -p %s && cp /mnt/host/clips/*.mp4 %s/ && cp /mnt/host/watch.py %s && sync"
               % (CLIPS, CLIPS, WATCHER), check=True, timeout=300)
        versions = {"kernel": vm.ready_info.get("kernel")}
        if "carouseld" in programs:
            vm.run("install -m 755 /mnt/host/carouseld %s/carouseld" % GUEST_DIR, check=True, timeout=300)
            vm.put(GUEST_DIR + "/carouseld.ini", carouseld_ini())
            r = vm.run([GUEST_DIR + "/carouseld", "check-config", GUEST_DIR + "/carouseld.ini"])
            if r.rc != 0:
                raise SystemExit("video-peers: carouseld refuses the benchmark's configuration (does it play "
                                 "clips yet? issue 29):\n%s%s%s" % (carouseld_ini(), r.out, r.err))
            versions["carouseld"] = vm.run([GUEST_DIR + "/carouseld", "--version"]).out.strip()
        if "carouseld-baseline" in programs:
            vm.run("install -m 755 /mnt/host/carouseld-baseline %s/carouseld-baseline" % GUEST_DIR, check=True, timeout=300)
            versions["carouseld-baseline"] = vm.run([GUEST_DIR + "/carouseld-baseline", "--version"]).out.strip()
        if "mpv" in programs:
            versions["mpv"] = vm.run(["dpkg-query", "-W", "-f", "${Version}", "mpv"]).out.strip() or "?"
        versions["libavcodec"] = vm.run(["dpkg-query", "-W", "-f", "${Version}", "libavcodec59"]).out.strip() or "?"
        vm.run("umount /mnt/host")
        bench = VideoBench(vm, args)
        counts, retries = {}, {}
        todo = [(p, c) for _ in range(args.runs) for p in programs for c in clips]
        while todo:
            p, c = todo.pop(0)
            key = "%s-%s" % (p, c["size"])
            counts[key] = counts.get(key, 0) + 1
            label = "%s-%d" % (key, counts[key])
            log("%s: %s" % (label, " ".join(mpv_argv(c["file"]) if p == "mpv" else carouseld_argv(p))))
            r = bench.run_once(p, c, label)
            runs.append(r)
            with open(os.path.join(args.out, "runs-partial.json"), "w") as f:
                json.dump(runs, f, indent=1)
            log("%s: dropped %s of %s shown, CPU %s s/s (from exec %s; playback: the process %s s, its helpers %s s), "
                "VmHWM %s, playback %s s, host other %.2f cores%s%s" % (
                label, r["dropped"], r["frames_shown"], r["cpu_per_s"], r["cpu_exec_per_s"], r.get("cpu_own_s"),
                r.get("cpu_children_s"),
                peers.fmt(r["hwm_kib"] and r["hwm_kib"] / 1024, "MiB", 1), r["playback_wall_s"],
                r["host_other_cores"], " DISTURBED" if r["disturbed"] else "", "".join("; " + n for n in r["notes"])))
            if r.get("threads"):
                log("%s: busiest threads (user, system s): %s" % (
                    label, ", ".join("%s %.1f+%.1f" % tuple(t) for t in r["threads"][:4])))
            if r["disturbed"] and retries.get(key, 0) < args.retries:
                retries[key] = retries.get(key, 0) + 1
                todo.append((p, c))
    elapsed = time.monotonic() - t_start

    med = summarize(runs, programs, clips)
    text = table(med, programs, clips, versions)
    setup = ("%dx%d bochs, 1 TCG vCPU, H.264 testsrc2 clips %s at %g fps, %g s, %d run(s) each, medians, "
             "%s page cache; guest kernel %s, libavcodec %s; %s" % (
                 W, H, ", ".join(sizes), args.fps, args.seconds, args.runs, "warm" if args.warm else "cold",
                 versions.get("kernel"), versions.get("libavcodec"), time.strftime("%Y-%m-%d")))
    print("video-peers: " + setup)
    print(text)
    for r in runs:
        for n in r["notes"]:
            print("note: %s: %s" % (r["label"], n))
    print("video-peers: %d runs in %.0f s; raw figures in %s" % (len(runs), elapsed, args.out))
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"setup": setup, "args": vars(args), "versions": versions, "clips": clips,
                   "medians": med, "runs": runs, "seconds_total": round(elapsed, 1)}, f, indent=1)
    with open(os.path.join(args.out, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["label", "program", "clip", "dropped", "frames_shown", "cpu_per_s", "cpu_per_frame_ms", "cpu_exec_per_s",
                    "hwm_kib", "playback_wall_s", "host_other_cores", "qemu_cores", "disturbed", "notes"])
        for r in runs:
            w.writerow([r["label"], r["program"], r["clip"], r["dropped"], r["frames_shown"], r["cpu_per_s"],
                        r["cpu_per_frame_ms"], r["cpu_exec_per_s"], r["hwm_kib"], r["playback_wall_s"], r["host_other_cores"],
                        r["qemu_cores"], r["disturbed"], "; ".join(r["notes"])])
    missing = [k for k, m in med.items() if m["cpu_per_s"] is None]
    if missing:
        print("video-peers: no figures for %s (see the notes and %s/*.log)" % (", ".join(missing), args.out))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
