#!/usr/bin/env python3
"""The web page's figures, by hand (not in the gate: they are times):

* upload throughput against `cp` of the same files on the same disk;
* carouseld-web's memory idle and during a 1 GiB upload (it must stay flat:
  the body is streamed to disk, never held);
* the daemon's CPU over the same seconds of autoplay with no page open and
  with one open (the live view: `subscribe changes`, a screenshot per change);
* HTTPS against HTTP: the same 1 GiB streamed, and carouseld-web's memory
  through it.

Usage: web_figures.py CAROUSELD CAROUSELD_WEB [WIDTHxHEIGHT]   (the release builds;
the display 1280x800 unless given)
"""
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Servers"))
import checks  # noqa: E402
from checks import CheckSuite  # noqa: E402
from web_e2e import PASSWORD, Frame  # noqa: E402

import web_e2e  # noqa: E402
import web_https  # noqa: E402


def rss_kib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def upload_file(frame, cookie, path, name, page=None):
    """One file per request, streamed from disk, as the page's script sends
    it (over HTTPS to `page`, a web_https.Https, when given)."""
    boundary = "----figures"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    size = os.path.getsize(path)
    if page:
        c = http.client.HTTPSConnection("127.0.0.1", page.port, timeout=600, context=page.context)
    else:
        c = http.client.HTTPConnection("127.0.0.1", frame.port, timeout=600)
    c.putrequest("POST", "/photos")
    c.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
    c.putheader("Content-Length", str(len(head) + size + len(tail)))
    c.putheader("Origin", page.origin if page else frame.origin)
    c.putheader("Cookie", cookie)
    c.putheader("Accept", "application/json")
    c.endheaders()
    c.send(head)
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 20)
            if not block:
                break
            c.send(block)
    c.send(tail)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    # The live view's cost in the daemon grows with the panel: a panel's size, not the tests' 320x200.
    checks.OFFSCREEN = "offscreen:" + (sys.argv[3] if len(sys.argv) == 4 else "1280x800")
    web_e2e.MAX_UPLOAD_MB = 2048
    suite = CheckSuite(os.path.abspath(sys.argv[1]), "carouseld-web-figures-")
    suite.web = os.path.abspath(sys.argv[2])
    suite.cleanup_frames = []
    figures = {}
    frame = Frame(suite, "frame")
    try:
        frame.set_password()
        cookie = frame.login()
        # Pictures of a phone's size: 12 MP noise at quality 92 (about 6 MB each, slow to decode, as photos are).
        source = os.path.join(suite.folder, "camera-roll")
        os.makedirs(source)
        subprocess.run(["convert", "-size", "4000x3000", "xc:", "+noise", "Random", "-quality", "92",
                        os.path.join(source, "p0.jpg")], check=True)
        for n in range(1, 6):
            shutil.copy(os.path.join(source, "p0.jpg"), os.path.join(source, f"p{n}.jpg"))
        files = sorted(os.listdir(source))
        total = sum(os.path.getsize(os.path.join(source, n)) for n in files)
        # cp, synced, onto the same disk.
        target = os.path.join(suite.folder, "cp-target")
        os.makedirs(target)
        t0 = time.monotonic()
        subprocess.run(["cp"] + [os.path.join(source, n) for n in files] + [target], check=True)
        subprocess.run(["sync", "-f", target], check=True)
        cp_s = time.monotonic() - t0
        idle = rss_kib(frame.web.pid)
        t0 = time.monotonic()
        for n in files:
            status, body = upload_file(frame, cookie, os.path.join(source, n), n)
            assert status == 200 and json.loads(body)["files"][0]["ok"], body
        up_s = time.monotonic() - t0
        figures["upload: files, MB"] = f"{len(files)}, {total / 1e6:.1f}"
        figures["cp (synced) s / upload (checked by decoding) s"] = f"{cp_s:.2f} / {up_s:.2f}"
        figures["upload throughput MB/s, cp MB/s, ratio upload/cp time"] = \
            f"{total / 1e6 / up_s:.1f}, {total / 1e6 / cp_s:.1f}, {up_s / cp_s:.1f}x"

        # 1 GiB, sampled every 50 ms: the body goes to disk as it comes.
        big = os.path.join(suite.folder, "big.mp4")
        with open(big, "wb") as f:
            block = b"\0" * (1 << 20)
            for _ in range(1024):
                f.write(block)
        t0 = time.monotonic()
        subprocess.run(["cp", "--sparse=never", big, os.path.join(target, "big.mp4")], check=True)
        subprocess.run(["sync", "-f", target], check=True)
        big_cp_s = time.monotonic() - t0
        os.unlink(os.path.join(target, "big.mp4"))
        peak = [0]

        def streamed(frame, cookie, page=None):
            """Seconds to upload the 1 GiB, the answer's status, the peak RSS in KiB."""
            peak = [0]
            done = threading.Event()

            def sample():
                while not done.is_set():
                    peak[0] = max(peak[0], rss_kib(frame.web.pid))
                    time.sleep(0.05)
            sampler = threading.Thread(target=sample)
            sampler.start()
            t0 = time.monotonic()
            status, _ = upload_file(frame, cookie, big, "big.mp4", page)
            seconds = time.monotonic() - t0
            done.set()
            sampler.join()
            return seconds, status, peak[0]
        big_s, status, peak[0] = streamed(frame, cookie)
        figures["carouseld-web RSS idle (after the photos) / peak during a 1 GiB upload, MiB"] = \
            f"{idle / 1024:.1f} / {peak[0] / 1024:.1f} (the 1 GiB answered {status}: a file of zeros is no clip)"
        figures["1 GiB streamed to disk (no decode), upload MB/s / cp MB/s"] = \
            f"{(1 << 30) / 1e6 / big_s:.0f} / {(1 << 30) / 1e6 / big_cp_s:.0f} ({big_s / big_cp_s:.1f}x cp's time)"
        expect_left = [n for n in os.listdir(frame.album) if n.startswith(".")]
        figures["temporary files left after the refused 1 GiB"] = len(expect_left)

        # The same 1 GiB over HTTPS (TLS 1.3, the test CA's P-256 certificate).
        tls, page = web_https.https_frame(suite, lambda name, idle, extra: Frame(suite, name, idle_timeout=30,
                                                                                 extra=extra), PASSWORD)
        status, headers, _, version = page.request("POST", "/login", body=f"password={PASSWORD.replace(' ', '+')}",
                                                   headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 303, status
        tls_idle = rss_kib(tls.web.pid)
        tls_s, tls_status, tls_peak = streamed(tls, headers["set-cookie"].split(";")[0], page)
        figures["1 GiB over HTTPS / over HTTP, s (time ratio)"] = \
            f"{tls_s:.2f} / {big_s:.2f} ({tls_s / big_s:.2f}x), {version}, answered {tls_status}"
        figures["carouseld-web RSS over HTTPS idle / peak during the 1 GiB, MiB"] = \
            f"{tls_idle / 1024:.1f} / {tls_peak / 1024:.1f}"
        tls.stop()

        # The daemon's CPU: 20 s of autoplay (2 s interval), no page, then one page open.
        frame.daemon.ask("set autoplay.enabled true")
        frame.daemon.ask("set autoplay.interval 2")
        pid = frame.daemon.proc.pid
        # Every picture decoded once first, so that both windows page through a warm cache.
        time.sleep(2 * len(frame.listed()) + 4)
        c0 = cpu_seconds(pid)
        time.sleep(20)
        without = cpu_seconds(pid) - c0
        s, head = web_e2e.open_live(frame, cookie)
        pictures = [0]
        stop = threading.Event()

        def page():
            buffer = head.split(b"\r\n\r\n", 1)[1]
            s.settimeout(0.5)
            while not stop.is_set():
                try:
                    data = s.recv(4096)
                except socket.timeout:
                    continue
                if not data:
                    break
                buffer += data
                while len(buffer) >= 2 and len(buffer) >= 2 + (buffer[1] & 0x7F):
                    length = buffer[1] & 0x7F
                    buffer = buffer[2 + length:]
                    # What the page does on a change: the picture again.
                    frame.request("GET", "/now.png", cookie=cookie)
                    pictures[0] += 1
        reader = threading.Thread(target=page)
        reader.start()
        time.sleep(2)
        c0 = cpu_seconds(pid)
        p0 = pictures[0]
        time.sleep(20)
        with_page = cpu_seconds(pid) - c0
        stop.set()
        reader.join()
        s.close()
        figures["daemon CPU s over 20 s of autoplay (2 s), no page / one page open (pictures fetched)"] = \
            f"{without:.2f} / {with_page:.2f} ({pictures[0] - p0})"
        frame.daemon.ask("set autoplay.enabled false")
        time.sleep(1)
        c0 = cpu_seconds(pid)
        s, head = web_e2e.open_live(frame, cookie)
        time.sleep(20)
        s.close()
        figures["daemon CPU s over 20 s at rest with a page open"] = f"{cpu_seconds(pid) - c0:.2f}"
    finally:
        frame.stop()
        shutil.rmtree(suite.folder, ignore_errors=True)
    for name, value in figures.items():
        print(f"figure: {name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
