"""What the suites beside real servers (mqtt_e2e.py, ha_e2e.py, sync_e2e.py) share:
where the repository and the demo pictures are, a failure, a free port, a
wait with a deadline, a suite that runs checks one after another (each
failure kept and the rest still run, each check's cleanups run after it),
and carouseld on the offscreen display."""
import hashlib
import json
import os
import shutil
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


# Debian's own Python (scripts/setup.sh installs python3-venv), not whatever
# python3 comes first on the PATH.
DEBIAN_PYTHON = "/usr/bin/python3"


def pinned_venv(requirements, cache, program, pip_options=(), timeout=1500):
    """A virtual environment of Debian's Python with `requirements`
    installed (--no-deps: the file pins everything), made in `cache`/venv
    unless the one the requirements and this Python make is there; returns
    the path of its bin/`program` and whether it was made now."""
    if not os.access(DEBIAN_PYTHON, os.X_OK):
        raise Failure(f"{DEBIAN_PYTHON} is missing (scripts/setup.sh)")
    version = subprocess.run([DEBIAN_PYTHON, "-c", "import sys; print(sys.version)"], capture_output=True, text=True,
                             check=True).stdout
    with open(requirements, "rb") as f:
        want = hashlib.sha256(f.read() + version.encode()).hexdigest()
    folder = os.path.join(cache, "venv")
    stamp = os.path.join(cache, "stamp")
    path = os.path.join(folder, "bin", program)
    if os.path.exists(path) and os.path.exists(stamp) and open(stamp).read().strip() == want:
        return path, False
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(cache, exist_ok=True)
    made = subprocess.run([DEBIAN_PYTHON, "-m", "venv", folder], capture_output=True, text=True)
    if made.returncode != 0:
        raise Failure(f"{DEBIAN_PYTHON} -m venv failed (scripts/setup.sh installs python3-venv): {made.stderr.strip()[-300:]}")
    installed = subprocess.run([os.path.join(folder, "bin", "pip"), "install", "--quiet", "--no-deps", *pip_options,
                                "--disable-pip-version-check", "-r", requirements],
                               capture_output=True, text=True, timeout=timeout)
    if installed.returncode != 0:
        raise Failure(f"pip install -r {requirements} failed: {installed.stderr.strip()[-1500:]}")
    with open(stamp, "w") as f:
        f.write(want + "\n")
    return path, True


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


# The offscreen display the daemons run on (the figures scripts take a panel's size).
OFFSCREEN = "offscreen:320x200"


class OffscreenDaemon:
    """carouseld run on the offscreen display (`run --display offscreen:320x200`)
    with the INI at `ini` and `folder` as its state directory; its log kept,
    its control socket asked. Waits until its log says `ready`."""

    def __init__(self, binary, ini, folder, socket_path, ready, what):
        self.socket = socket_path
        self.ini = ini
        self.err = b""
        self.started = time.monotonic()
        self.proc = subprocess.Popen([binary, "run", "--config", ini, "--display", OFFSCREEN],
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
