"""Host side of the carouseld QEMU test VM, for Python test drivers.

    import sys; sys.path.insert(0, "scripts/vm")
    from vmlib import VM

    with VM(share="/work/main") as vm:          # boots, waits for the agent
        r = vm.run("cat /sys/class/drm/card0-Virtual-1/status")
        assert r.rc == 0 and r.out.strip() == "connected"
        daemon = vm.spawn(["/mnt/host/.build/release/carouseld"])
        touch = vm.touchscreen()                 # uinput device in the guest
        touch.swipe(1000, 400, 200, 400, 300)
        vm.screendump("/tmp/after-swipe.png")
    # leaving the block powers the guest off; QEMU is killed whatever happens

The VM boots the assets of scripts/vm/build-assets.sh (vmlinux through
qboot's PVH entry, a busybox initramfs, the ext4 root image as a snapshot:
nothing a test does persists) under TCG. Two QEMU chardevs are unix sockets
on which this module listens *before* QEMU starts (QEMU connects as the
client, so no connection race): QMP, and a virtio-serial port to the guest
agent (guest/vm-agent.py), which runs commands and forwards guest programs'
requests (`vm-request capture NAME`) to handlers here.

QEMU is started with PR_SET_PDEATHSIG=SIGKILL, so it dies with the Python
process that started it, even if that one is killed; every error path and
timeout kills it too.
"""

import atexit
import base64
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_ASSETS = os.path.join(REPO, ".build-vm", "out")
AGENT_PORT = "org.carousel.agent"

__all__ = ["VM", "VMError", "CommandResult", "Job", "Touchscreen",
           "ppm_to_rgb", "write_png", "DEFAULT_ASSETS"]


class VMError(Exception):
    pass


def _log(vm, msg):
    if vm.verbose:
        print("[vm %7.2f] %s" % (time.monotonic() - vm.t_start, msg), file=sys.stderr, flush=True)


# -- images -------------------------------------------------------------------

def ppm_to_rgb(data):
    """(width, height, rgb bytes) of a binary PPM (P6, maxval 255), which is
    what QEMU's screendump writes."""
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or fields[3] != b"255":
        raise VMError("unsupported PPM header %r" % fields)
    w, h = int(fields[1]), int(fields[2])
    pos += 1  # the single whitespace after maxval
    rgb = data[pos:pos + w * h * 3]
    if len(rgb) != w * h * 3:
        raise VMError("truncated PPM")
    return w, h, rgb


def write_png(path, width, height, rgb, level=6):
    """Writes 8-bit RGB pixels as a PNG (standard library only)."""
    stride = width * 3
    raw = b"".join(b"\0" + rgb[y * stride:(y + 1) * stride] for y in range(height))

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff))

    png = (b"\x89PNG\r\n\x1a\n"
           + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, level))
           + chunk(b"IEND", b""))
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(png)
    os.replace(tmp, path)
    return path


# -- results and jobs -----------------------------------------------------------

class CommandResult:
    """What vm.run() returns: rc (None if killed by a signal it is negative,
    as in subprocess), stdout/stderr bytes, out/err text, timed_out."""

    def __init__(self, cmd, msg):
        self.cmd = cmd
        self.rc = msg["rc"]
        self.stdout = base64.b64decode(msg["stdout"])
        self.stderr = base64.b64decode(msg["stderr"])
        self.timed_out = msg.get("timed_out", False)
        self.duration = msg.get("duration")

    @property
    def out(self):
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self):
        return self.stderr.decode("utf-8", "replace")

    @property
    def ok(self):
        return self.rc == 0 and not self.timed_out

    def check(self):
        if not self.ok:
            raise VMError("guest command %r %s\n--- stdout\n%s--- stderr\n%s" % (
                self.cmd, "timed out" if self.timed_out else "exited %s" % self.rc,
                self.out, self.err))
        return self

    def __repr__(self):
        return "CommandResult(rc=%r, timed_out=%r, stdout=%r, stderr=%r)" % (
            self.rc, self.timed_out, self.stdout[:200], self.stderr[:200])


class Job:
    """A process started in the guest with vm.spawn(); its output streams to
    the host as it comes (stdout/stderr bytes so far)."""

    def __init__(self, vm, cmd, job_id, pid):
        self.vm, self.cmd, self.id, self.pid = vm, cmd, job_id, pid
        self.stdout = b""
        self.stderr = b""
        self.rc = None
        self.exited = False
        self._read_pos = 0  # readline() cursor in stdout

    @property
    def out(self):
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self):
        return self.stderr.decode("utf-8", "replace")

    def wait(self, timeout=120):
        """Exit code, once the process has exited; VMError on timeout."""
        self.vm._wait(lambda: self.exited, timeout, "job %r to exit" % (self.cmd,))
        return self.rc

    def wait_output(self, pattern, timeout=120, stream="stdout"):
        """Waits until stdout (or stderr) matches the regex pattern (str or
        bytes); returns the match object."""
        if isinstance(pattern, str):
            pattern = pattern.encode()
        rx = re.compile(pattern)
        found = []

        def matched():
            m = rx.search(getattr(self, stream))
            if m:
                found.append(m)
                return True
            if self.exited:
                raise VMError("job %r exited (rc %s) before printing %r\n--- stdout\n%s--- stderr\n%s"
                              % (self.cmd, self.rc, pattern, self.out, self.err))
            return False

        self.vm._wait(matched, timeout, "job %r to print %r" % (self.cmd, pattern))
        return found[0]

    def readline(self, timeout=120):
        """Next complete stdout line (text, without the newline)."""
        def has_line():
            if b"\n" in self.stdout[self._read_pos:]:
                return True
            if self.exited:
                raise VMError("job %r exited (rc %s), no more lines\n--- stderr\n%s"
                              % (self.cmd, self.rc, self.err))
            return False

        self.vm._wait(has_line, timeout, "a line from job %r" % (self.cmd,))
        end = self.stdout.index(b"\n", self._read_pos)
        line = self.stdout[self._read_pos:end]
        self._read_pos = end + 1
        return line.decode("utf-8", "replace")

    def write(self, data):
        """Writes to the job's stdin (spawn(..., stdin=True))."""
        if isinstance(data, str):
            data = data.encode()
        self.vm._call({"t": "write", "job": self.id, "data": base64.b64encode(data).decode()})

    def close_stdin(self):
        self.vm._call({"t": "close", "job": self.id})

    def signal(self, sig=signal.SIGTERM, group=True):
        """Sends sig to the job's process group (or to the process only)."""
        if not self.exited:
            try:
                self.vm._call({"t": "signal", "job": self.id, "sig": int(sig), "group": group})
            except VMError:
                if not self.exited:
                    raise

    def terminate(self, timeout=30):
        """SIGTERM, then SIGKILL if still running after timeout; exit code."""
        self.signal(signal.SIGTERM)
        try:
            return self.wait(timeout)
        except VMError:
            self.signal(signal.SIGKILL)
            return self.wait(30)


# DecodingProcess.TestFault.marker: with CAROUSELD_TEST_DECODE_FAULT set in
# the daemon's environment, its decoding helper dies on a picture holding it.
TEST_FAULT_MARKER = b"carouseld test: the decoding helper dies on this picture"


def marked_for_test_fault(heif):
    """`heif` (bytes) with a top-level free box holding TEST_FAULT_MARKER, as
    DecodingProcess.TestFault.marked makes it: libheif skips the box."""
    return bytes(heif) + struct.pack(">I", 8 + len(TEST_FAULT_MARKER)) + b"free" + TEST_FAULT_MARKER


# drag_past_half: how far along the screen (the half-way rule's margin,
# whatever the touch slop and the drag's first frame take off), and how long
# still before the lift (past the stop rule for panels down to 10 Hz).
PAST_HALF = 0.65
STILL_MS = 300


class Touchscreen:
    """uinput_touch.py in server mode in the guest: one touchscreen device
    for the whole session. Coordinates are screen pixels; each call returns
    when the gesture has been played. size_mm "WxH" or "auto" (the
    display's size from its EDID, as DRM reports it)."""

    def __init__(self, vm, width, height, size_mm="auto", rate=100, timeout=60):
        self.vm = vm
        self.width, self.height = width, height
        self.job = vm.spawn(["python3", "/usr/local/bin/uinput_touch.py",
                             "--width", str(width), "--height", str(height),
                             "--size-mm", size_mm, "--rate", str(rate), "serve"], stdin=True)
        line = self.job.readline(timeout)
        if not line.startswith("ready "):
            raise VMError("uinput_touch.py: %s\n%s" % (line, self.job.err))
        self.devnode = line.split()[1]

    def command(self, *words, timeout=120):
        text = " ".join(str(w) for w in words)
        self.job.write(text + "\n")
        reply = self.job.readline(timeout)
        if not reply.startswith("ok"):
            raise VMError("uinput_touch.py %r: %s" % (text, reply))
        return reply

    def swipe(self, x0, y0, x1, y1, ms, hold_ms=0):
        """Plays the swipe; returns the kernel's timing of it
        (uinput_touch.Touchscreen.timing: "as_asked" is False when the
        injector was starved and the kernel saw another swipe)."""
        reply = self.command("swipe", x0, y0, x1, y1, ms, hold_ms)
        _, _, timing = reply.partition(" timing ")
        return json.loads(timing) if timing else None

    def drag_past_half(self, x0, y0, x1, y1, ms=250):
        """A drag that pages whatever the injector's timing: along one axis,
        at least PAST_HALF of the screen's extent, then held still for
        STILL_MS before the lift. However late its frames came, the lift then
        follows a pause longer than the stop rule's (SPEC 7: 40 ms, or 2.5
        sample intervals), so its velocity is zero and the half-way rule
        alone decides: the next page along the drag. A fast swipe of the same
        length leaves it to the release velocity, which a starved injector
        makes anything (its events stretched, the lift with none, or a
        least-squares fit over a stall that points backwards)."""
        extent = self.width if abs(x1 - x0) >= abs(y1 - y0) else self.height
        along = max(abs(x1 - x0), abs(y1 - y0))
        if along < PAST_HALF * extent:
            raise ValueError("drag_past_half: %d px of %d is not past %.0f %%" % (along, extent, PAST_HALF * 100))
        return self.swipe(x0, y0, x1, y1, ms, hold_ms=STILL_MS)

    def tap(self, x, y, ms=50):
        self.command("tap", x, y, ms)

    def hold(self, x, y, ms):
        self.command("hold", x, y, ms)

    def down(self, x, y, slot=0):
        self.command("down", x, y, slot)

    def move(self, x, y, slot=0):
        self.command("move", x, y, slot)

    def up(self, slot=0):
        self.command("up", slot)

    def close(self):
        if not self.job.exited:
            try:
                self.command("quit")
                self.job.wait(30)
            except VMError:
                self.job.signal(signal.SIGKILL)


# -- QMP -------------------------------------------------------------------------

class QMP:
    def __init__(self, sock):
        self.sock = sock
        self.file = sock.makefile("rb")
        self.lock = threading.Lock()
        self.events = []
        self._read()  # greeting
        self.execute("qmp_capabilities")

    def _read(self):
        line = self.file.readline()
        if not line:
            raise VMError("QMP connection closed (QEMU exited?)")
        return json.loads(line)

    def execute(self, command, **arguments):
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        with self.lock:
            self.sock.sendall(json.dumps(msg).encode() + b"\n")
            while True:
                reply = self._read()
                if "event" in reply:
                    self.events.append(reply)
                    continue
                if "error" in reply:
                    raise VMError("QMP %s: %s" % (command, reply["error"].get("desc", reply["error"])))
                return reply.get("return")


def _pdeathsig():
    # In the child, before exec: die with the parent (Linux prctl PR_SET_PDEATHSIG).
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except Exception:
        pass


_live_vms = weakref.WeakSet()


@atexit.register
def _kill_live_vms():
    # A driver that forgot shutdown()/close() must not leave QEMU behind.
    for vm in list(_live_vms):
        vm.kill()


# -- the VM ------------------------------------------------------------------------

class VM:
    """One QEMU guest. Arguments:

    assets      folder with manifest.json (build-assets.sh's CACHE/out)
    share       host folder shared read-write over 9p (None: no share)
    share_path  where the guest mounts it (/mnt/host)
    display     "bochs" (-device bochs-display), "vga" (-vga std), "virtio-gpu"
                or None; resolution xres x yres is the EDID's preferred mode
    vgamem_mb   video memory (64: two 1920x1080 buffers plus fbdev fit)
    pointer     None, "virtio" (virtio-tablet-pci) or "usb" (qemu-xhci + usb-tablet)
    memory_mb, cpus
    workdir     where sockets, logs and captures go (default: a new temp dir,
                removed by close() unless keep_workdir)
    capture_dir where `vm-request capture NAME` screendumps go (workdir/captures)
    boot_timeout seconds from QEMU start to the agent's "ready"
    pin_vcpu    pin the vCPU thread to its own host core and the rest of QEMU
                to the others (TCG's single vCPU thread is what runs the guest;
                keeps screendumps off its core). Off by default: on a busy
                host a pinned vCPU cannot move to a free core.
    login       also start a root login on the serial console (see console)
    console     serial console on this process's stdin/stdout instead of a log
    cmdline     extra kernel command line
    qemu_args   extra QEMU arguments
    verbose     progress on stderr
    """

    def __init__(self, assets=None, share=REPO, share_path="/mnt/host", display="bochs",
                 xres=1280, yres=800, vgamem_mb=64, pointer=None, memory_mb=1024, cpus=1,
                 workdir=None, keep_workdir=False, capture_dir=None, boot_timeout=300,
                 pin_vcpu=False, login=False, console=False, cmdline="", qemu_args=(),
                 qemu="qemu-system-x86_64", verbose=False):
        # realpath: CACHE/out is a symlink that a rebuild switches; take all
        # files from the version the manifest was read from.
        self.assets = os.path.realpath(assets or DEFAULT_ASSETS)
        manifest_path = os.path.join(self.assets, "manifest.json")
        if not os.path.exists(manifest_path):
            raise VMError("no %s: run scripts/vm/build-assets.sh first" % manifest_path)
        with open(manifest_path) as f:
            self.manifest = json.load(f)
        self.share, self.share_path = share, share_path
        self.display, self.xres, self.yres, self.vgamem_mb = display, xres, yres, vgamem_mb
        self.pointer, self.memory_mb, self.cpus = pointer, memory_mb, cpus
        self._own_workdir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="carousel-vm-")
        os.makedirs(self.workdir, exist_ok=True)
        self.keep_workdir = keep_workdir
        self.capture_dir = capture_dir or os.path.join(self.workdir, "captures")
        self.boot_timeout, self.pin_vcpu = boot_timeout, pin_vcpu
        self.login, self.console = login, console
        self.extra_cmdline, self.qemu_args, self.qemu = cmdline, list(qemu_args), qemu
        self.verbose = verbose
        self.serial_log = os.path.join(self.workdir, "serial.log")

        self.proc = None
        self.qmp_conn = None
        self.agent = None
        self.ready_info = None
        self.timings = {}
        self.t_start = time.monotonic()
        self._cond = threading.Condition()
        self._next_id = 1
        self._results = {}
        self._jobs = {}
        self._spawning = {}        # request id -> command, for spawn results
        self._send_lock = threading.Lock()
        self._dead = None          # reason QEMU or the channel went away
        self.requests = []         # every request body guest programs sent
        self.reports = {}          # vm-request report KEY VALUE
        self._handlers = {"capture": self._handle_capture, "report": self._handle_report}

    # -- lifecycle -------------------------------------------------------------

    def qemu_command(self, agent_sock, qmp_sock):
        a, m = self.assets, self.manifest
        cmdline = m["cmdline"]
        if self.share:
            cmdline += " vm.share=host:%s" % self.share_path
        if self.login:
            # vm-login@ is a copy of serial-getty@ with autologin (the real one
            # is masked so that it does not start on every boot).
            cmdline += " systemd.wants=vm-login@ttyS0.service"
        if self.extra_cmdline:
            cmdline += " " + self.extra_cmdline
        args = [
            self.qemu, "-nodefaults", "-no-user-config", "-no-reboot",
            "-machine", "pc", "-accel", "tcg", "-m", str(self.memory_mb), "-smp", str(self.cpus),
            # qboot + the ELF vmlinux: QEMU loads the kernel itself and enters
            # it through the PVH note; no SeaBIOS, no bzImage decompression.
            "-bios", m["firmware"], "-kernel", os.path.join(a, m["kernel"]),
            "-initrd", os.path.join(a, m["initrd"]), "-append", cmdline,
            # snapshot=on: writes go to a temporary overlay, the image stays
            # pristine for the next run (and for parallel VMs).
            "-drive", "file=%s,if=virtio,format=raw,snapshot=on,cache=unsafe"
                      % os.path.join(a, m["rootfs"]),
            # Entropy from the host at once (virtio_rng is in the initramfs):
            # otherwise early getrandom() callers stall for seconds under TCG.
            "-device", "virtio-rng-pci",
            "-display", "none",
            "-chardev", "socket,id=qmp,path=%s" % qmp_sock, "-mon", "chardev=qmp,mode=control",
            "-device", "virtio-serial-pci,id=vser",
            "-chardev", "socket,id=agent,path=%s" % agent_sock,
            "-device", "virtserialport,bus=vser.0,chardev=agent,name=%s" % AGENT_PORT,
        ]
        if self.console:
            args += ["-serial", "mon:stdio"]
        else:
            args += ["-chardev", "file,id=serial,path=%s" % self.serial_log, "-serial", "chardev:serial"]
        # romfile= (none): qboot runs no option ROMs, and it saves a lookup.
        if self.display == "bochs":
            args += ["-device", "bochs-display,vgamem=%dM,xres=%d,yres=%d,romfile="
                     % (self.vgamem_mb, self.xres, self.yres)]
        elif self.display == "vga":
            args += ["-device", "VGA,vgamem_mb=%d,xres=%d,yres=%d,romfile="
                     % (self.vgamem_mb, self.xres, self.yres)]
        elif self.display == "virtio-gpu":
            args += ["-device", "virtio-gpu-pci,xres=%d,yres=%d" % (self.xres, self.yres)]
        elif self.display is not None:
            raise VMError("unknown display %r" % self.display)
        if self.pointer == "virtio":
            args += ["-device", "virtio-tablet-pci"]
        elif self.pointer == "usb":
            args += ["-device", "qemu-xhci", "-device", "usb-tablet"]
        elif self.pointer is not None:
            raise VMError("unknown pointer %r" % self.pointer)
        if self.share:
            args += ["-virtfs", "local,path=%s,mount_tag=host,security_model=none,id=host"
                     % os.path.abspath(self.share)]
        return args + self.qemu_args

    def start(self):
        """Starts QEMU and waits until the guest agent is ready. Returns the
        agent's ready message (kernel, connectors, uptime...). On any failure
        QEMU is killed and VMError raised (with the serial log's tail)."""
        try:
            self._start()
        except BaseException as e:
            tail = self.serial_tail()
            self.kill()
            if isinstance(e, VMError):
                raise VMError("%s\n--- serial console (tail)\n%s" % (e, tail)) from None
            raise
        return self.ready_info

    def _start(self):
        self.t_start = time.monotonic()
        listeners = {}
        for name in ("qmp", "agent"):
            path = os.path.join(self.workdir, name + ".sock")
            if os.path.exists(path):
                os.unlink(path)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(path)
            s.listen(1)
            listeners[name] = (s, path)
        args = self.qemu_command(listeners["agent"][1], listeners["qmp"][1])
        _log(self, " ".join(args))
        self.qemu_log = open(os.path.join(self.workdir, "qemu.log"), "wb")
        self.proc = subprocess.Popen(
            args, stdin=None if self.console else subprocess.DEVNULL,
            stdout=None if self.console else self.qemu_log, stderr=self.qemu_log,
            preexec_fn=_pdeathsig)
        _live_vms.add(self)
        threading.Thread(target=self._watch_qemu, daemon=True).start()
        # QEMU connects to both sockets while it sets up its devices.
        conns = {}
        for name, (s, path) in listeners.items():
            s.settimeout(0.2)
            deadline = time.monotonic() + 60
            while name not in conns:
                try:
                    conns[name], _ = s.accept()
                except socket.timeout:
                    if self.proc.poll() is not None:
                        raise VMError("QEMU exited (%s) at start-up: %s" % (self.proc.returncode, self.qemu_stderr()))
                    if time.monotonic() > deadline:
                        raise VMError("QEMU did not connect to %s" % path)
            s.close()
            conns[name].settimeout(None)
        self.qmp_conn = QMP(conns["qmp"])
        self.agent = conns["agent"]
        threading.Thread(target=self._agent_reader, daemon=True).start()
        if self.pin_vcpu:
            self._pin_threads()
        self.timings["qemu_started"] = time.monotonic() - self.t_start
        _log(self, "QEMU up, waiting for the guest agent")
        self._wait(lambda: self.ready_info is not None, self.boot_timeout, "the guest to boot")
        self.timings["ready"] = time.monotonic() - self.t_start
        _log(self, "guest ready: %s" % self.ready_info)
        if self.display and not self.ready_info.get("drm"):
            raise VMError("guest has no /dev/dri/card0")
        if self.share and "host" not in self.ready_info.get("shares", {}):
            raise VMError("guest could not mount the shared folder")

    def _pin_threads(self):
        ncpu = os.cpu_count() or 1
        if ncpu < 2 or self.cpus != 1:
            return
        try:
            vcpus = {c["thread-id"] for c in self.qmp_conn.execute("query-cpus-fast")}
            own, rest = {ncpu - 1}, set(range(ncpu - 1))
            for tid in os.listdir("/proc/%d/task" % self.proc.pid):
                os.sched_setaffinity(int(tid), own if int(tid) in vcpus else rest)
        except (OSError, VMError) as e:
            _log(self, "could not pin QEMU threads: %s" % e)

    def _watch_qemu(self):
        rc = self.proc.wait()
        with self._cond:
            if self._dead is None:
                self._dead = "QEMU exited with status %s" % rc
            self._cond.notify_all()

    def qemu_stderr(self):
        try:
            with open(os.path.join(self.workdir, "qemu.log"), "rb") as f:
                return f.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def serial_tail(self, lines=40):
        """The last lines of the guest's serial console (kernel, systemd)."""
        try:
            with open(self.serial_log, "rb") as f:
                return "\n".join(f.read().decode("utf-8", "replace").splitlines()[-lines:])
        except OSError:
            return ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None and self._dead is None

    def shutdown(self, timeout=60):
        """Clean power-off through systemd in the guest; QEMU is killed if it
        has not exited within timeout seconds. Returns True if it was clean."""
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            return self.proc is not None and self.proc.returncode == 0
        clean = False
        t0 = time.monotonic()
        try:
            if self.agent is not None and self._dead is None:
                self._call({"t": "poweroff"}, timeout=30)
                self.proc.wait(timeout)
                clean = self.proc.returncode == 0
        except (VMError, subprocess.TimeoutExpired) as e:
            _log(self, "clean shutdown failed: %s" % e)
        self.timings["shutdown"] = time.monotonic() - t0
        self.close()
        return clean

    def kill(self):
        """Kills QEMU at once (safe to call more than once)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        for s in (self.agent, self.qmp_conn.sock if self.qmp_conn else None):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass

    def close(self):
        self.kill()
        if self._own_workdir and not self.keep_workdir:
            # Keep the captures if they were asked to go elsewhere only.
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.shutdown()
        else:
            if self.verbose:
                print("--- serial console (tail)\n" + self.serial_tail(), file=sys.stderr)
            self.close()
        return False

    # -- the agent channel -----------------------------------------------------------

    def _agent_reader(self):
        buf = b""
        reason = "guest agent channel closed"
        try:
            while True:
                chunk = self.agent.recv(65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        self._dispatch(json.loads(line))
        except (OSError, ValueError) as e:
            reason = "guest agent channel: %s" % e
        with self._cond:
            if self._dead is None:
                self._dead = reason
            self._cond.notify_all()

    def _dispatch(self, msg):
        kind = msg.get("t")
        with self._cond:
            if kind == "ready":
                self.ready_info = msg
            elif kind == "result":
                self._results[msg["id"]] = msg
                if "job" in msg and msg["id"] in self._spawning:
                    # Register a spawned job here, before its first output
                    # message (which follows right behind) is dispatched.
                    cmd = self._spawning.pop(msg["id"])
                    self._jobs[msg["job"]] = Job(self, cmd, msg["job"], msg["pid"])
            elif kind == "out":
                job = self._jobs.get(msg["job"])
                if job is not None:
                    data = base64.b64decode(msg["data"])
                    if msg["fd"] == 1:
                        job.stdout += data
                    else:
                        job.stderr += data
            elif kind == "exit":
                job = self._jobs.get(msg["job"])
                if job is not None:
                    job.rc, job.exited = msg["rc"], True
            self._cond.notify_all()
        if kind == "req":
            threading.Thread(target=self._serve_request, args=(msg,), daemon=True).start()

    def _send(self, msg):
        data = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
        with self._send_lock:
            try:
                self.agent.sendall(data)
            except OSError as e:
                raise VMError("cannot talk to the guest agent: %s" % e)

    def _wait(self, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if predicate():
                    return
                if self._dead is not None:
                    raise VMError("%s while waiting for %s" % (self._dead, what))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise VMError("timed out after %.0f s waiting for %s" % (timeout, what))
                self._cond.wait(min(left, 1.0))

    def _call(self, msg, timeout=60, spawn_cmd=None):
        with self._cond:
            rid = self._next_id
            self._next_id += 1
            if spawn_cmd is not None:
                self._spawning[rid] = spawn_cmd
        msg["id"] = rid
        self._send(msg)
        self._wait(lambda: rid in self._results, timeout, "the agent to answer %s" % msg["t"])
        with self._cond:
            result = self._results.pop(rid)
        if "error" in result:
            raise VMError("guest agent: %s" % result["error"])
        return result

    # -- commands ------------------------------------------------------------------

    @staticmethod
    def _command_fields(cmd):
        return {"sh": cmd} if isinstance(cmd, str) else {"argv": [str(a) for a in cmd]}

    def run(self, cmd, timeout=120, check=False, stdin=None, env=None, cwd=None):
        """Runs cmd in the guest as root and waits: a string goes to /bin/sh -c,
        a list is an argv. Killed (process group) after timeout seconds in the
        guest (result.timed_out). Returns a CommandResult; check=True raises
        VMError unless it exited 0."""
        msg = {"t": "run", "timeout": timeout, "env": env or {}, "cwd": cwd}
        msg.update(self._command_fields(cmd))
        if stdin is not None:
            msg["stdin"] = base64.b64encode(stdin.encode() if isinstance(stdin, str) else stdin).decode()
        result = CommandResult(cmd, self._call(msg, timeout=timeout + 60))
        _log(self, "run %r -> %s" % (cmd, result.rc))
        return result.check() if check else result

    def spawn(self, cmd, env=None, cwd=None, stdin=False):
        """Starts cmd in the guest in the background (own session) and returns
        a Job at once; stdin=True gives it a pipe for Job.write()."""
        msg = {"t": "spawn", "env": env or {}, "cwd": cwd, "stdin": bool(stdin)}
        msg.update(self._command_fields(cmd))
        result = self._call(msg, spawn_cmd=cmd)
        job = self._jobs[result["job"]]
        _log(self, "spawn %r -> job %d pid %d" % (cmd, job.id, job.pid))
        return job

    def put(self, path, data, mode=None):
        """Writes data (bytes or str) to a file in the guest."""
        self.run(["sh", "-c", 'mkdir -p "$(dirname "$1")" && cat >"$1"', "put", path],
                 stdin=data, check=True)
        if mode is not None:
            self.run(["chmod", "%o" % mode, path], check=True)

    def get(self, path):
        """Contents (bytes) of a file in the guest."""
        return self.run(["cat", path], check=True).stdout

    def hotplug(self, connected, connector="card0-Virtual-1"):
        """Simulates unplugging (False) or replugging (True) the monitor:
        guest/vm-hotplug forces the DRM connector's state and sends a change
        uevent with HOTPLUG=1. Returns the connector's new status."""
        return self.run(["vm-hotplug", "on" if connected else "off", connector],
                        check=True).out.strip()

    def ping(self):
        return self._call({"t": "ping"})

    def touchscreen(self, width=None, height=None, **kw):
        """A uinput touchscreen in the guest (Touchscreen), by default the size
        of the display."""
        return Touchscreen(self, width or self.xres, height or self.yres, **kw)

    # -- guest requests ------------------------------------------------------------

    def on_request(self, op, handler):
        """handler(body) -> reply dict, for `vm-request OP ...` in the guest.
        Runs on its own thread; exceptions become {"error": ...} replies."""
        self._handlers[op] = handler

    def wait_request(self, op, timeout=120, count=1):
        """Waits until guest programs have sent count requests with this op;
        returns their bodies."""
        def enough():
            return len([r for r in self.requests if r.get("op") == op]) >= count
        self._wait(enough, timeout, "%d %r request(s) from the guest" % (count, op))
        return [r for r in self.requests if r.get("op") == op]

    def _serve_request(self, msg):
        body = msg.get("body") or {}
        handler = self._handlers.get(body.get("op"))
        try:
            if handler is None:
                raise VMError("the host has no handler for op %r" % body.get("op"))
            reply = handler(body) or {}
        except Exception as e:
            reply = {"error": "%s: %s" % (type(e).__name__, e)}
        with self._cond:
            self.requests.append(body)
            self._cond.notify_all()
        try:
            self._send({"t": "reply", "id": msg["id"], "body": reply})
        except VMError:
            pass

    def _handle_capture(self, body):
        name = re.sub(r"[^A-Za-z0-9._-]", "_", str(body.get("name", "capture")))
        os.makedirs(self.capture_dir, exist_ok=True)
        path = self.screendump(os.path.join(self.capture_dir, name + ".png"))
        return {"path": path}

    def _handle_report(self, body):
        with self._cond:
            self.reports[body.get("key")] = body.get("value")
        return {}

    # -- screen and pointer ------------------------------------------------------------

    def qmp(self, command, **arguments):
        """Any QMP command; returns its "return" value."""
        if self.qmp_conn is None:
            raise VMError("QEMU is not running")
        return self.qmp_conn.execute(command, **arguments)

    def screen_rgb(self):
        """(width, height, rgb bytes) of what the display scans out now.
        QEMU 7.2 writes PPM; the file goes to /dev/shm when it can, since QEMU
        holds its global lock (stopping the vCPU) while it writes."""
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else self.workdir
        fd, tmp = tempfile.mkstemp(prefix="carousel-vm-", suffix=".ppm", dir=shm)
        os.close(fd)
        try:
            self.qmp("screendump", filename=tmp)
            with open(tmp, "rb") as f:
                return ppm_to_rgb(f.read())
        finally:
            os.unlink(tmp)

    def screendump(self, path):
        """Saves the screen as a PNG at path; returns path."""
        w, h, rgb = self.screen_rgb()
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        return write_png(path, w, h, rgb)

    def wait_screen_stable(self, interval=0.25, stable_for=0.5, timeout=60):
        """Polls the screen every interval seconds (each capture briefly stops
        the guest: keep it >= 0.05) until it has not changed for stable_for
        seconds (and at least two captures in a row are identical); returns
        (width, height, rgb). VMError if it is still changing at timeout."""
        deadline = time.monotonic() + timeout
        last, since = None, None
        while True:
            t = time.monotonic()
            cur = self.screen_rgb()
            if cur != last:
                last, since = cur, t
            elif t - since >= stable_for:
                return cur
            if t > deadline:
                raise VMError("screen still changing after %.0f s" % timeout)
            time.sleep(max(0.0, interval - (time.monotonic() - t)))

    def send_key(self, *keys, hold_ms=100):
        """Presses keys together on the emulated PS/2 keyboard (QMP send-key;
        QEMU key codes such as "right", "pgdn", "home", "spc", "ctrl")."""
        self.qmp("send-key", keys=[{"type": "qcode", "data": k} for k in keys], **{"hold-time": hold_ms})

    def pointer_move(self, x, y):
        """Moves the absolute pointer (pointer="virtio"/"usb") to screen pixel (x, y)."""
        scale = 0x7fff
        self.qmp("input-send-event", events=[
            {"type": "abs", "data": {"axis": "x", "value": int(x * scale / max(1, self.xres - 1))}},
            {"type": "abs", "data": {"axis": "y", "value": int(y * scale / max(1, self.yres - 1))}}])

    def pointer_button(self, down, button="left"):
        self.qmp("input-send-event", events=[{"type": "btn", "data": {"button": button, "down": bool(down)}}])

    def pointer_drag(self, x0, y0, x1, y1, ms, rate=100, hold_ms=0):
        """Button down at (x0, y0), move to (x1, y1) over ms milliseconds,
        still for hold_ms after the last move (however late it came), button up."""
        steps = max(1, round(ms * rate / 1000.0))
        self.pointer_move(x0, y0)
        self.pointer_button(True)
        t0 = time.monotonic()
        for i in range(1, steps + 1):
            d = t0 + ms / 1000.0 * i / steps - time.monotonic()
            if d > 0:
                time.sleep(d)
            self.pointer_move(x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps)
        if hold_ms:
            time.sleep(hold_ms / 1000.0)
        self.pointer_button(False)
