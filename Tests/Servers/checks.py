"""What the suites beside real servers (mqtt_e2e.py, ha_e2e.py, sync_e2e.py) share:
where the repository and the demo pictures are, a failure, a free port, a
wait with a deadline, a suite that runs checks one after another (each
failure kept and the rest still run, each check's cleanups run after it),
and carouseld on the offscreen display."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time

# This file is Tests/Servers/checks.py.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGES = os.path.join(REPO, "scripts/demo/images")


class Failure(Exception):
    pass


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def until(what, check, timeout=30, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class CheckSuite:
    def __init__(self, binary, prefix):
        self.binary = binary
        self.folder = tempfile.mkdtemp(prefix=prefix)
        self.passed, self.failed, self.figures = [], [], {}
        self.cleanup = []

    def check(self, name, fn):
        t0 = time.monotonic()
        try:
            detail = fn()
        except Exception as e:  # one failed check must not stop the others
            self.failed.append((name, repr(e)))
            print(f"FAIL {name}: {e}", flush=True)
        else:
            self.passed.append(name)
            print(f"ok   {name} ({time.monotonic() - t0:.1f} s){': ' + detail if detail else ''}", flush=True)
        finally:
            for f in reversed(self.cleanup):
                try:
                    f()
                except Exception:
                    pass
            self.cleanup = []


class OffscreenDaemon:
    """carouseld run on the offscreen display (`run --display offscreen:320x200`)
    with the INI at `ini` and `folder` as its state directory; its log kept,
    its control socket asked. Waits until its log says `ready`."""

    def __init__(self, binary, ini, folder, socket_path, ready, what):
        self.socket = socket_path
        self.ini = ini
        self.err = b""
        self.started = time.monotonic()
        self.proc = subprocess.Popen([binary, "run", "--config", ini, "--display", "offscreen:320x200"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env={**os.environ, "STATE_DIRECTORY": folder})
        threading.Thread(target=self._read, daemon=True).start()
        until(what, lambda: ready in self.log, timeout=60)

    def _read(self):
        for chunk in iter(lambda: self.proc.stderr.read1(4096), b""):
            self.err += chunk

    @property
    def log(self):
        return self.err.decode(errors="replace")

    def ask(self, line):
        c = socket.socket(socket.AF_UNIX)
        c.settimeout(10)
        c.connect(self.socket)
        c.sendall(line.encode() + b"\n")
        reply = c.makefile().readline()
        c.close()
        return json.loads(reply)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
