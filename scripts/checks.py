"""What the host-side end-to-end scripts (mqtt_e2e.py, sync_e2e.py) share:
a failure, a free port, a wait with a deadline, and a suite that runs
checks one after another, each failure kept and the rest still run, each
check's cleanups run after it."""
import os
import socket
import tempfile
import time


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
