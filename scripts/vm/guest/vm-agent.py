#!/usr/bin/python3
"""Guest agent of the carouseld test VM.

Talks to the host (scripts/vm/vmlib.py) over the virtio-serial port named
org.carousel.agent, one JSON object per line, and to programs in the guest
over the unix socket /run/carousel-vm/agent.sock.

host -> guest  {"t": "run", "id": N, "argv": [...] | "sh": "...", "stdin": b64,
                "timeout": s, "env": {...}, "cwd": "..."}
               {"t": "spawn", "id": N, "argv"/"sh", "env", "cwd", "stdin": bool}
               {"t": "write", "id": N, "job": J, "data": b64}
               {"t": "close", "id": N, "job": J}          (close the job's stdin)
               {"t": "signal", "id": N, "job": J, "sig": 15}
               {"t": "ping", "id": N}
               {"t": "poweroff", "id": N, "reboot": bool}
               {"t": "reply", "id": "gK", "body": {...}}  (answer to a guest request)
guest -> host  {"t": "ready", ...}                        (once, after boot)
               {"t": "result", "id": N, ...}              (one per host command)
               {"t": "out", "job": J, "fd": 1|2, "data": b64}
               {"t": "exit", "job": J, "rc": rc}
               {"t": "req", "id": "gK", "body": {...}}    (from a guest program)

Guest programs (e.g. `vm-request capture NAME`) send one JSON object a line
on the unix socket and get the host's reply body back, one line each: that
is how a test in the guest asks the host for a screen capture or reports a
result.
"""

import base64
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

PORT_NAME = "org.carousel.agent"
GUEST_SOCKET = "/run/carousel-vm/agent.sock"
BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
}


def log(msg):
    print("vm-agent: %s" % msg, file=sys.stderr, flush=True)


def b64(data):
    return base64.b64encode(data).decode("ascii")


def find_port(timeout=60.0):
    """The /dev node of the virtio-serial port named PORT_NAME."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name_file in glob.glob("/sys/class/virtio-ports/*/name"):
            try:
                with open(name_file) as f:
                    if f.read().strip() == PORT_NAME:
                        dev = "/dev/" + os.path.basename(os.path.dirname(name_file))
                        if os.path.exists(dev):
                            return dev
            except OSError:
                pass
        time.sleep(0.05)
    raise SystemExit("vm-agent: virtio port %s not found" % PORT_NAME)


class Channel:
    """The virtio-serial port: line-framed JSON, writes serialized."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR)
        self.lock = threading.Lock()

    def send(self, msg):
        data = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
        with self.lock:
            view = memoryview(data)
            while view:
                n = os.write(self.fd, view)
                view = view[n:]

    def messages(self):
        buf = b""
        while True:
            chunk = os.read(self.fd, 65536)
            if not chunk:
                # Host side not connected (or gone): the port reads EOF.
                time.sleep(0.1)
                continue
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.strip():
                    try:
                        yield json.loads(line)
                    except ValueError:
                        log("bad message from host: %r" % line[:200])


class Agent:
    def __init__(self, channel):
        self.ch = channel
        self.jobs = {}
        self.next_job = 1
        self.next_req = 1
        self.pending = {}  # guest request id -> [Event, reply body]
        self.lock = threading.Lock()

    # -- host commands -----------------------------------------------------

    def command_args(self, msg):
        if "sh" in msg:
            argv = ["/bin/sh", "-c", msg["sh"]]
        else:
            argv = [str(a) for a in msg["argv"]]
        env = dict(BASE_ENV)
        env.update({str(k): str(v) for k, v in (msg.get("env") or {}).items()})
        return argv, env, msg.get("cwd") or "/"

    def do_run(self, msg):
        argv, env, cwd = self.command_args(msg)
        stdin = base64.b64decode(msg["stdin"]) if msg.get("stdin") else b""
        timeout = msg.get("timeout")
        t0 = time.monotonic()
        # Own session, so that a timeout kills the whole process group.
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        timed_out = False
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = proc.communicate()
        return {"rc": proc.returncode, "stdout": b64(out), "stderr": b64(err),
                "timed_out": timed_out, "duration": time.monotonic() - t0}

    def do_spawn(self, msg):
        argv, env, cwd = self.command_args(msg)
        proc = subprocess.Popen(argv, env=env, cwd=cwd,
                                stdin=subprocess.PIPE if msg.get("stdin") else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        with self.lock:
            job = self.next_job
            self.next_job += 1
            self.jobs[job] = proc
        readers = [threading.Thread(target=self.pump, args=(job, fd, pipe), daemon=True)
                   for fd, pipe in ((1, proc.stdout), (2, proc.stderr))]
        for r in readers:
            r.start()

        def reap():
            rc = proc.wait()
            # Let the output reach the host before the exit notice; a child
            # that kept the pipes open must not hold the notice back forever.
            for r in readers:
                r.join(2.0)
            with self.lock:
                self.jobs.pop(job, None)
            self.ch.send({"t": "exit", "job": job, "rc": rc})

        threading.Thread(target=reap, daemon=True).start()
        return {"job": job, "pid": proc.pid}

    def pump(self, job, fd, pipe):
        while True:
            data = os.read(pipe.fileno(), 65536)
            if not data:
                return
            self.ch.send({"t": "out", "job": job, "fd": fd, "data": b64(data)})

    def job(self, msg):
        with self.lock:
            proc = self.jobs.get(msg["job"])
        if proc is None:
            raise KeyError("no running job %s" % msg["job"])
        return proc

    def do_write(self, msg):
        proc = self.job(msg)
        proc.stdin.write(base64.b64decode(msg["data"]))
        proc.stdin.flush()
        return {}

    def do_close(self, msg):
        self.job(msg).stdin.close()
        return {}

    def do_signal(self, msg):
        proc = self.job(msg)
        sig = int(msg.get("sig", signal.SIGTERM))
        if msg.get("group", True):
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        return {}

    def do_ping(self, msg):
        return {"uptime": uptime()}

    def do_poweroff(self, msg):
        # --no-block: answer first; systemd then stops everything cleanly.
        # A reboot ends QEMU too (-no-reboot) and does not depend on ACPI.
        verb = "reboot" if msg.get("reboot") else "poweroff"
        subprocess.Popen(["systemctl", verb, "--no-block"])
        return {}

    def handle(self, msg):
        kind = msg.get("t")
        if kind == "reply":
            with self.lock:
                slot = self.pending.get(msg.get("id"))
            if slot:
                slot[1] = msg.get("body") or {}
                slot[0].set()
            return
        handler = getattr(self, "do_" + str(kind), None)
        try:
            if handler is None:
                raise ValueError("unknown command %r" % kind)
            result = handler(msg)
        except Exception as e:  # report every failure to the host, keep serving
            result = {"error": "%s: %s" % (type(e).__name__, e)}
        result.update({"t": "result", "id": msg.get("id")})
        self.ch.send(result)

    def serve_host(self):
        for msg in self.ch.messages():
            # One thread per command: a long `run` must not block a `write`
            # to a spawned job or the reply to a guest request.
            threading.Thread(target=self.handle, args=(msg,), daemon=True).start()

    # -- guest programs ------------------------------------------------------

    def request(self, body, timeout=120.0):
        with self.lock:
            rid = "g%d" % self.next_req
            self.next_req += 1
            slot = self.pending[rid] = [threading.Event(), None]
        try:
            self.ch.send({"t": "req", "id": rid, "body": body})
            if not slot[0].wait(timeout):
                return {"error": "no reply from the host within %.0f s" % timeout}
            return slot[1]
        finally:
            with self.lock:
                self.pending.pop(rid, None)

    def serve_guest(self):
        os.makedirs(os.path.dirname(GUEST_SOCKET), exist_ok=True)
        try:
            os.unlink(GUEST_SOCKET)
        except FileNotFoundError:
            pass
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(GUEST_SOCKET)
        os.chmod(GUEST_SOCKET, 0o666)
        srv.listen(16)
        while True:
            conn, _ = srv.accept()
            threading.Thread(target=self.guest_client, args=(conn,), daemon=True).start()

    def guest_client(self, conn):
        with conn, conn.makefile("rwb") as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    body = json.loads(line)
                    if not isinstance(body, dict):
                        raise ValueError("a request is a JSON object")
                    reply = self.request(body, timeout=float(body.get("timeout", 120)))
                except ValueError as e:
                    reply = {"error": str(e)}
                f.write((json.dumps(reply) + "\n").encode())
                f.flush()


def uptime():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def cmdline_options():
    """vm.* options the host put on the kernel command line."""
    opts = {}
    with open("/proc/cmdline") as f:
        for arg in f.read().split():
            if arg.startswith("vm.") and "=" in arg:
                k, v = arg[3:].split("=", 1)
                opts[k] = v
    return opts


def wait_for(pred, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


def has_display_device():
    for cls in glob.glob("/sys/bus/pci/devices/*/class"):
        with open(cls) as f:
            if f.read().strip().startswith("0x03"):
                return True
    return False


def mount_shares(spec):
    """vm.share=TAG:PATH[,TAG:PATH...]: 9p folders the host shares."""
    mounted = {}
    for item in filter(None, spec.split(",")):
        tag, path = item.split(":", 1)

        def tag_present():
            for t in glob.glob("/sys/bus/virtio/drivers/9pnet_virtio/*/mount_tag"):
                with open(t, "rb") as f:
                    if f.read().rstrip(b"\0\n").decode() == tag:
                        return True
            return False

        if not wait_for(tag_present, 30):
            log("9p tag %s never appeared" % tag)
            continue
        os.makedirs(path, exist_ok=True)
        # msize: bigger messages make reading the project's binary faster
        # (512000 is the virtio transport's maximum in 6.1).
        r = subprocess.run(["mount", "-t", "9p", "-o",
                            "trans=virtio,version=9p2000.L,msize=512000,access=any", tag, path],
                           capture_output=True, text=True)
        if r.returncode == 0:
            mounted[tag] = path
        else:
            log("mount %s failed: %s" % (tag, r.stderr.strip()))
    return mounted


def main():
    t_start = uptime()
    opts = cmdline_options()
    ch = Channel(find_port())
    agent = Agent(ch)
    threading.Thread(target=agent.serve_guest, daemon=True).start()

    # What "ready" promises: the DRM device is there (if QEMU has a display),
    # udev has handled every coldplug event (so libinput sees tagged input
    # devices), and the shared folders are mounted.
    info = {"t": "ready", "phases": {"agent_start": t_start, "port": uptime()}}
    if has_display_device():
        info["drm"] = wait_for(lambda: os.path.exists("/dev/dri/card0"), 60)
        info["phases"]["drm"] = uptime()
    subprocess.run(["udevadm", "settle", "--timeout=60"])
    info["phases"]["udev_settled"] = uptime()
    info["shares"] = mount_shares(opts.get("share", ""))
    info["phases"]["shares"] = uptime()
    info["uptime"] = uptime()
    info["kernel"] = os.uname().release
    info["connectors"] = {}
    for status in glob.glob("/sys/class/drm/card*-*/status"):
        with open(status) as f:
            info["connectors"][os.path.basename(os.path.dirname(status))] = f.read().strip()
    ch.send(info)
    log("ready after %.2f s" % info["uptime"])
    agent.serve_host()


if __name__ == "__main__":
    main()
