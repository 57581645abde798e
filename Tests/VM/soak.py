#!/usr/bin/env python3
"""A soak of carouseld on a real kernel (QEMU, bochs DRM): fast autoplay,
a pictures folder that keeps changing, and socket traffic from several
clients, for --minutes; the daemon's RSS and open descriptors are sampled
into a CSV and judged at the end.

Usage: Tests/VM/soak.py BINARY [--minutes 60] [--every 10] [--out DIR]
BINARY is a statically linked carouseld (swift build -c release
--static-swift-stdlib); it is copied onto the guest's root disk (a binary on
the 9p share pages in slowly) and run from there.

The load runs inside the guest (two small Python programs: one churns the
folder, one is a crowd of socket clients), so the host's round trips do not
pace it. Every `--every` seconds the host reads /proc/PID/status (VmRSS,
VmHWM, threads) and counts /proc/PID/fd. At the end:

* first, last and max RSS and descriptors, and a least-squares trend per
  hour over the samples after the warm-up (the first --warmup minutes:
  caches fill, the allocator grows to its working set);
* pass when descriptors at the end are within --fd-slack of the first
  sample after the warm-up (clients come and go: a few may be open at the
  sampling instant), and RSS grew by less than --rss-bound-mib after the
  warm-up; the daemon must still be running and answer `status`.

The verdict is on growth, never on time; the figures are for the notes.
The last line is `soak: pass ...` or `soak: FAIL ...`.
"""
import argparse
import csv
import json
import os
import sys
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import REPO, VM

W, H = 1280, 800
PICS = "/srv/soak/pics"
SOCKET = "/run/carouseld-soak.sock"

# The folder churn, in the guest: adds, removes, renames, corrupts and
# truncates files in a loop, on the pictures folder. Counts what it did.
CHURN = r'''
import os, random, shutil, signal, sys, time, json
pics, seeds, stats_path = sys.argv[1], sys.argv[2], sys.argv[3]
random.seed(1)
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
seed_files = sorted(os.listdir(seeds))
counts = {"add": 0, "remove": 0, "rename": 0, "corrupt": 0, "truncate": 0, "rewrite": 0, "loops": 0}
n = 0
def ours():
    return [f for f in os.listdir(pics) if f.startswith("churn-")]
while not stop:
    counts["loops"] += 1
    op = random.choice(["add", "add", "remove", "rename", "corrupt", "truncate", "rewrite"])
    mine = ours()
    n += 1
    try:
        if op == "add" or not mine:
            if len(mine) > 12:
                op = "remove"
            else:
                src = random.choice(seed_files)
                ext = os.path.splitext(src)[1]
                tmp = os.path.join(pics, ".tmp-%d%s" % (n, ext))
                shutil.copyfile(os.path.join(seeds, src), tmp)
                os.rename(tmp, os.path.join(pics, "churn-%06d%s" % (n, ext)))
                op = "add"
        if op == "remove":
            os.unlink(os.path.join(pics, random.choice(mine)))
        elif op == "rename":
            old = random.choice(mine)
            os.rename(os.path.join(pics, old), os.path.join(pics, "churn-%06d%s" % (n, os.path.splitext(old)[1])))
        elif op == "corrupt":
            with open(os.path.join(pics, "churn-%06d.jpg" % n), "wb") as f:
                f.write(b"\xff\xd8\xff\xe0" + os.urandom(random.randint(0, 4000)))
        elif op == "truncate":
            src = random.choice(seed_files)
            data = open(os.path.join(seeds, src), "rb").read()
            with open(os.path.join(pics, "churn-%06d%s" % (n, os.path.splitext(src)[1])), "wb") as f:
                f.write(data[:random.randint(1, len(data) - 1)])
        elif op == "rewrite" and mine:
            # A file replaced in place with other contents (same name).
            victim = os.path.join(pics, random.choice(mine))
            src = random.choice(seed_files)
            shutil.copyfile(os.path.join(seeds, src), victim)
        counts[op] += 1
    except FileNotFoundError:
        pass
    time.sleep(random.uniform(0.05, 0.4))
with open(stats_path, "w") as f:
    json.dump(counts, f)
'''

# The socket crowd, in the guest: THREADS clients; some keep a connection,
# some connect per request; good requests, bad ones, oversized ones, and
# clients that leave without reading. Counts requests and replies.
TRAFFIC = r'''
import json, os, random, signal, socket, sys, threading, time
path, stats_path, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
lock = threading.Lock()
counts = {"requests": 0, "ok": 0, "error": 0, "connects": 0, "abandoned": 0, "failures": 0}
GOOD = ["status", "next", "prev", "list", "version", "goto 0", "goto 2 150", "pause", "resume",
        "set autoplay.interval 0.3", "set autoplay.transition 0.1", "set indicator.size 12", "help"]
BAD = ["", "nonsense", "goto", "goto -1", "goto x", "set", "set no.such 1", "set autoplay.interval soon",
       "next please", "\x00\x01\x02", "screenshot relative.png", "goto 99999999999999999999", "\xff\xfe"]
def add(k, v=1):
    with lock:
        counts[k] += v
def one(f, s, line):
    s.sendall(line.encode("utf-8", "surrogateescape") + b"\n")
    add("requests")
    reply = f.readline()
    if not reply:
        raise OSError("closed")
    r = json.loads(reply)
    add("ok" if r.get("ok") else "error")
def client(k):
    rnd = random.Random(k)
    while not stop.is_set():
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(30)
            s.connect(path)
            add("connects")
            f = s.makefile("rb")
            for _ in range(rnd.choice([1, 1, 5, 50])):
                if stop.is_set():
                    break
                r = rnd.random()
                if r < 0.65:
                    one(f, s, rnd.choice(GOOD))
                elif r < 0.95:
                    one(f, s, rnd.choice(BAD))
                elif r < 0.98:
                    one(f, s, "set carousel.spacing " + "9" * rnd.randint(1, 3000))
                else:
                    s.sendall(b"status\n")  # and leave without reading the reply
                    add("requests")
                    add("abandoned")
                    break
                time.sleep(rnd.uniform(0, 0.05))
            s.close()
        except (OSError, ValueError):
            add("failures")
            time.sleep(0.2)
ts = [threading.Thread(target=client, args=(k,)) for k in range(threads)]
for t in ts:
    t.start()
while not stop.is_set():
    stop.wait(1)
for t in ts:
    t.join(60)
with open(stats_path, "w") as f:
    json.dump(counts, f)
'''


def trend_per_hour(points):
    """Least-squares slope of (seconds, value) points, per hour."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    if sxx == 0:
        return 0.0
    return sum((p[0] - mx) * (p[1] - my) for p in points) / sxx * 3600


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", help="carouseld, statically linked")
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--every", type=float, default=10, help="seconds between samples")
    ap.add_argument("--warmup", type=float, default=None, help="minutes before the baseline (default: 10%% of the run, 1 to 5)")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--interval", default="0.3", help="autoplay interval, seconds")
    ap.add_argument("--transition", default="0.1", help="autoplay transition, seconds")
    ap.add_argument("--rss-bound-mib", type=float, default=16, help="RSS growth allowed after the warm-up")
    ap.add_argument("--fd-slack", type=int, default=6, help="descriptors end vs. baseline, +-")
    ap.add_argument("--out", default=os.path.join(REPO, "out/soak"))
    args = ap.parse_args()
    warmup = args.warmup if args.warmup is not None else min(5.0, max(1.0, args.minutes * 0.1))
    os.makedirs(args.out, exist_ok=True)
    csv_path = os.path.join(args.out, "samples.csv")
    binary = os.path.abspath(args.binary)
    # The guest reads the binary over 9p once, from a copy this run owns
    # (a rebuild meanwhile must not change it under the soak).
    stage = os.path.join(args.out, "bin")
    os.makedirs(stage, exist_ok=True)
    with open(binary, "rb") as src, open(os.path.join(stage, "carouseld"), "wb") as dst:
        dst.write(src.read())
    stage_guest = "/mnt/host/" + os.path.relpath(stage, REPO)

    with VM(share=REPO, xres=W, yres=H, boot_timeout=600) as vm:
        vm.run(f"install -m 755 {stage_guest}/carouseld /usr/local/bin/carouseld", check=True, timeout=300)
        vm.run(f"mkdir -p /srv/soak/seeds {PICS} && cp /mnt/host/scripts/demo/images/* /srv/soak/seeds/ "
               f"&& cp /srv/soak/seeds/* {PICS}/", check=True)
        vm.put("/srv/soak/churn.py", CHURN)
        vm.put("/srv/soak/traffic.py", TRAFFIC)
        vm.put("/srv/soak/soak.ini", "\n".join([
            "[images]", f"path = {PICS}",
            "[autoplay]", "enabled = true", f"interval = {args.interval}", f"transition = {args.transition}",
            "resume_delay = 0.5",
            "[control]", f"socket = {SOCKET}",
            "[log]", "level = info", ""]))
        d = vm.spawn(["/usr/local/bin/carouseld", "run", "--config", "/srv/soak/soak.ini"])
        d.wait_output(r"first frame on screen", timeout=300, stream="stderr")
        d.wait_output(r"control socket: ", timeout=60, stream="stderr")
        pid = d.pid  # the daemon is the job's process (argv, no shell)
        churn = vm.spawn(["python3", "/srv/soak/churn.py", PICS, "/srv/soak/seeds", "/srv/soak/churn.json"])
        traffic = vm.spawn(["python3", "/srv/soak/traffic.py", SOCKET, "/srv/soak/traffic.json", str(args.clients)])

        samples = []
        t0 = time.monotonic()
        end = t0 + args.minutes * 60
        with open(csv_path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["seconds", "rss_kib", "hwm_kib", "fds", "threads", "cpu_ticks"])
            while True:
                now = time.monotonic()
                if d.exited:
                    break
                r = vm.run(f"cat /proc/{pid}/status; echo fds $(ls /proc/{pid}/fd | wc -l); "
                           f"echo stat $(cat /proc/{pid}/stat)", timeout=120)
                if r.rc == 0:
                    fields = dict(line.split(":", 1) for line in r.out.splitlines() if ":" in line)
                    fds = int(next(l.split()[1] for l in r.out.splitlines() if l.startswith("fds ")))
                    stat = next(l for l in r.out.splitlines() if l.startswith("stat ")).rsplit(")", 1)[1].split()
                    row = [round(now - t0, 1), int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0]),
                           fds, int(fields["Threads"]), int(stat[11]) + int(stat[12])]
                    samples.append(row)
                    w.writerow(row)
                    f.flush()
                    print("soak %6.0f s: RSS %d KiB, fds %d, threads %d" % (row[0], row[1], row[3], row[4]), flush=True)
                if now >= end:
                    break
                time.sleep(max(0.0, min(args.every - (time.monotonic() - now), end - time.monotonic())))

        churn.signal(15)
        traffic.signal(15)
        churn.wait(120)
        traffic.wait(180)
        stats = {}
        for name in ("churn", "traffic"):
            r = vm.run(f"cat /srv/soak/{name}.json", timeout=60)
            stats[name] = json.loads(r.out) if r.rc == 0 and r.out.strip() else None
        alive = not d.exited
        probe = vm.run(["python3", "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
                        "s.sendall(b'status\\n'); print(s.makefile().readline())", SOCKET], timeout=120)
        answered = probe.rc == 0 and '"ok":true' in probe.out.replace(" ", "")
        lines = d.err.splitlines()
        if alive:
            d.terminate(60)

    if not samples:
        print("soak: FAIL no samples")
        return 1
    base_i = next((i for i, s in enumerate(samples) if s[0] >= warmup * 60), len(samples) - 1)
    after = samples[base_i:]
    rss = [s[1] for s in samples]
    fds = [s[3] for s in samples]
    summary = {
        "minutes": round(samples[-1][0] / 60, 1), "samples": len(samples), "warmup_minutes": warmup,
        "rss_kib": {"first": rss[0], "baseline": after[0][1], "last": rss[-1], "max": max(rss), "min": min(rss),
                    "trend_kib_per_hour_after_warmup": round(trend_per_hour([(s[0], s[1]) for s in after]))},
        "hwm_kib_last": samples[-1][2],
        "fds": {"first": fds[0], "baseline": after[0][3], "last": fds[-1], "max": max(fds), "min": min(fds),
                "trend_per_hour_after_warmup": round(trend_per_hour([(s[0], s[3]) for s in after]), 2)},
        "threads_last": samples[-1][4],
        "cpu_seconds": round((samples[-1][5] - samples[0][5]) / 100, 1),
        "churn": stats.get("churn"), "traffic": stats.get("traffic"),
        "daemon_log_lines": len(lines),
        "log_lines_by_priority": {p: sum(1 for l in lines if l.startswith(p)) for p in ("<3>", "<4>", "<6>")},
        "alive_at_end": alive, "status_answered_at_end": answered,
    }
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(args.out, "daemon.log"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(json.dumps(summary, indent=1))
    problems = []
    rss_growth_mib = (rss[-1] - after[0][1]) / 1024
    if not alive:
        problems.append("the daemon exited")
    if not answered:
        problems.append("status not answered at the end")
    if abs(fds[-1] - after[0][3]) > args.fd_slack:
        problems.append(f"descriptors {after[0][3]} -> {fds[-1]} (slack {args.fd_slack})")
    if rss_growth_mib > args.rss_bound_mib:
        problems.append(f"RSS grew {rss_growth_mib:.1f} MiB after the warm-up (bound {args.rss_bound_mib})")
    verdict = "pass" if not problems else "FAIL " + "; ".join(problems)
    print(f"soak: {verdict} ({summary['minutes']} min, {len(samples)} samples, RSS {after[0][1]} -> {rss[-1]} KiB, "
          f"max {max(rss)}; fds {after[0][3]} -> {fds[-1]}, max {max(fds)}; CSV {csv_path})")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
