#!/usr/bin/env python3
"""The shipped systemd service on a real kernel: install the `make dist`
bundle in the test VM the way README.md's "Install on a board" says, run it
with systemd (Debian 12's systemd 252), and check what a kiosk relies on:
READY=1 only with a frame on screen, the status line, carouselctl for root
and the carouseld group (and nobody else), reload with a good and a bad
file, restart after a crash and after a hung loop (watchdog), no restart
for a bad configuration, waiting without a display past the start time-out,
a clean stop, `systemd-analyze verify` and the `security` exposure.

Every step waits on state (systemctl show, journal lines, carouselctl
replies) with generous limits: TCG is slow. One line per check, then
`service: N passed, M failed`; exit status 1 if any failed.

Usage: Tests/VM/service_e2e.py BUNDLE [--out DIR]
BUNDLE is a dist tarball (carouseld-VERSION-ARCH.tar.gz, from `make dist`)
or a folder with statically linked carouseld and carouselctl (e.g.
.build-static/release), which is packed with scripts/dist.sh first.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import REPO, VM, marked_for_test_fault, write_png
from e2e_support import psnr, read_png_rgb
import service_web

W, H = 1280, 800
GUEST_REPO = "/mnt/host"
UNIT = "carouseld.service"
INI = "/etc/carouseld/carouseld.ini"
IMAGES = "/var/lib/carouseld/images"
# The most exposure `systemd-analyze security` may report for any unit
# before this test calls the hardening weakened (issue 44: at most 1.5;
# carouseld.service 1.2, carouseld-sync.service 1.3 before it).
MAX_EXPOSURE = 1.5
UNITS = ("carouseld.service", "carouseld-sync.service")
# The frame's page: its process and systemd's socket proxies (port 80's and
# 443's), which share the page's user (a proxy reaches the page's socket as
# it); all hardened.
HARDENED = UNITS + service_web.WEB_UNITS + (service_web.HTTPS_PROXY,)
# "Your pictures" for the README's pictures step: copies of demo pictures
# under other names (after the demo ones in name order).
EXTRA_PICTURES = [("02-sunset.jpg", "10-shop-window.jpg"), ("03-portrait.jpg", "11-menu.jpg")]


class Failure(Exception):
    pass


def readme_section(title):
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    m = re.search(r"^## " + re.escape(title) + r"\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not m:
        raise Failure(f"README.md has no '## {title}' section")
    return m.group(1)


def readme_commands(section):
    """The command lines of the section's ```sh blocks (comments stripped)."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


class Suite:
    def __init__(self, vm, out, host_binary):
        self.vm = vm
        self.out = out
        self.host_binary = host_binary
        self.passed, self.failed = [], []
        self.figures = {}
        # unit: (MemoryMax bytes, TasksMax), from units_limited.
        self.limits = {}
        self.console = None
        self.restore = []  # what undoes a failed check's changes: shell commands or callables

    def check(self, name, fn):
        start = time.monotonic()
        try:
            detail = fn()
        except Exception as e:  # one failed check must not hide the others
            # Undo what the check changed (a broken INI, a drop-in), so that
            # the next checks test their own thing rather than this failure.
            self.undo(strict=False)
            self.failed.append((name, repr(e)))
            print(f"FAIL {name}: {e}", flush=True)
            print(self.sh("systemctl status carouseld --no-pager -n 0; "
                          "journalctl -u carouseld -o short-monotonic --no-pager | tail -n 25").out, flush=True)
            return
        self.restore.clear()
        self.passed.append(name)
        extra = f": {detail}" if detail else ""
        print(f"ok   {name} ({time.monotonic() - start:.1f} s){extra}", flush=True)

    def undo(self, strict=True):
        """Undoes what a check changed (`restore`), newest first; `strict`:
        each step must succeed (a check that passed puts the unit back as
        shipped for the checks after it), else best effort (after a failure)."""
        for step in reversed(self.restore):
            if callable(step):
                step()
            elif strict:
                self.ok(step, timeout=120)
            else:
                self.sh(step)
        self.restore.clear()

    # -- guest helpers -----------------------------------------------------

    def sh(self, cmd, timeout=120, user=None):
        if user:
            cmd = f"runuser -u {user} -- sh -c {shlex.quote(cmd)}"
        return self.vm.run(["bash", "-c", cmd], timeout=timeout)

    def ok(self, cmd, timeout=120, user=None):
        r = self.sh(cmd, timeout, user)
        if r.rc != 0:
            raise Failure(f"`{cmd}`{' as ' + user if user else ''} exited {r.rc}: {(r.out + r.err).strip()[-1500:]}")
        return r.out

    def show(self):
        out = self.ok(f"systemctl show {UNIT} -p ActiveState,SubState,MainPID,NRestarts,StatusText,"
                      "Result,ExecMainStatus,ExecMainCode")
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def wait(self, what, predicate, timeout=90, interval=0.5):
        """Polls predicate() (a truthy value ends the wait) until timeout."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise Failure(f"timed out after {timeout} s waiting for {what} (last: {self.show()})")
            time.sleep(interval)

    def wait_active(self, timeout=90):
        def active():
            state = self.show()
            return state if (state["ActiveState"], state["SubState"]) == ("active", "running") else None
        return self.wait("the unit to be active/running", active, timeout)

    def journal(self, since_cursor=None, max_priority=7, unit="carouseld"):
        """The unit's journal messages (after the cursor), at max_priority
        (3 = err) or more urgent, one per line. Filtered here, not with
        `journalctl -p`: systemd 252's journalctl prints nothing for
        `--after-cursor` with `-p` when the cursor's entry is of a lower
        priority."""
        cmd = f"journalctl -u {unit} -o json --output-fields=MESSAGE,PRIORITY --no-pager"
        if since_cursor:
            cmd += f" --after-cursor={shlex.quote(since_cursor)}"
        lines = []
        for line in self.sh(cmd).out.splitlines():
            entry = json.loads(line)
            message = entry.get("MESSAGE")
            if isinstance(message, list):  # not valid UTF-8: bytes
                message = bytes(message).decode("utf-8", "replace")
            if int(entry.get("PRIORITY", 6)) <= max_priority and message is not None:
                lines.append(message)
        return "\n".join(lines)

    def cursor(self):
        out = self.ok("journalctl -u carouseld -n 1 --show-cursor -o cat --no-pager || true")
        m = re.search(r"-- cursor: (\S+)", out)
        return m.group(1) if m else None

    def wait_journal(self, pattern, cursor, timeout=60, max_priority=7, unit="carouseld"):
        return self.wait(f"journal line /{pattern}/ of {unit}",
                         lambda: re.search(pattern, self.journal(cursor, max_priority, unit), re.M), timeout)

    def ctl(self, args, user=None):
        """carouselctl ARGS --json as root or USER: the decoded reply."""
        out = self.ok(f"carouselctl {args} --json", user=user)
        return json.loads(out.strip().splitlines()[-1])

    def status(self, user=None):
        return self.ctl("status", user)

    def wait_index(self, what, index, timeout=30):
        """Waits for carouselctl status to show item `index` at rest; a
        time-out says what status last said."""
        last = {}

        def at_rest():
            last.update(self.status())
            return last["index"] == index and last["state"] == "idle"
        try:
            self.wait(what, at_rest, timeout)
        except Failure as e:
            raise Failure(f"{e}; last carouselctl status: {json.dumps(last)}") from None

    # -- screen ------------------------------------------------------------

    def reference(self, offset):
        """The frame `carouseld render` draws on the host at `offset` with the
        installed configuration: the shipped INI, the same pictures."""
        folder = os.path.join(self.out, "images")
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(os.path.join(REPO, "scripts/demo/images"), folder)
        for src, dst in EXTRA_PICTURES:
            shutil.copy(os.path.join(REPO, "scripts/demo/images", src), os.path.join(folder, dst))
        ini = open(os.path.join(REPO, "etc/carouseld/carouseld.ini")).read()
        ini = ini.replace(f"path = {IMAGES}", f"path = {folder}")
        path = os.path.join(self.out, "host.ini")
        open(path, "w").write(ini)
        png = os.path.join(self.out, f"ref-{offset}.png")
        subprocess.run([self.host_binary, "render", "--config", path, "--size", f"{W}x{H}",
                        f"--offset={offset}", "--out", png], check=True, capture_output=True)
        return read_png_rgb(png)[2]


def prepare_bundle(arg, out):
    """(tarball path inside the repo, bundle folder name, host carouseld for renders)."""
    arg = os.path.abspath(arg)
    tmp = os.path.join(out, "bundle")
    shutil.rmtree(tmp, ignore_errors=True)
    if os.path.isdir(arg):
        r = subprocess.run(["bash", os.path.join(REPO, "scripts/dist.sh"), "--bin-dir", arg, "--out", out],
                           check=True, capture_output=True, text=True)
        tarball = r.stdout.split()[0]
    else:
        tarball = arg
    if not os.path.abspath(tarball).startswith(REPO + os.sep):
        # The guest sees the repository only (9p at /mnt/host).
        shared = os.path.join(REPO, "out/service-e2e")
        os.makedirs(shared, exist_ok=True)
        shutil.copy(tarball, shared)
        tarball = os.path.join(shared, os.path.basename(tarball))
    with tarfile.open(tarball) as t:
        t.extractall(tmp)
    (name,) = os.listdir(tmp)
    return tarball, name, os.path.join(tmp, name, "bin", "carouseld")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", help="dist tarball, or a folder with carouseld and carouselctl")
    ap.add_argument("--out", default=os.path.join(REPO, "out/service-e2e"))
    ap.add_argument("--repeat", type=int, default=12,
                    help="rounds of the goto/next/prev sequence that once lost its place (issue 10, finding 8)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tarball, name, host_binary = prepare_bundle(args.bundle, args.out)
    bundle_guest = f"{GUEST_REPO}/{os.path.relpath(tarball, REPO)}"
    started = time.monotonic()
    web_port, https_port = service_web.free_port(), service_web.free_port()
    with VM(share=REPO, xres=W, yres=H, capture_dir=args.out,
            qemu_args=service_web.qemu_network(web_port, https_port)) as vm:
        s = Suite(vm, args.out, host_binary)
        s.figures["boot to agent ready s"] = round(time.monotonic() - started, 1)
        install_section = readme_section("Install on a board")
        commands = readme_commands(install_section)

        def readme(cmd):
            """A command as the README gives it (its bundle name may be of
            another version or architecture), for the guest, which runs it as
            root and has no sudo."""
            def norm(c):
                return re.sub(r"carouseld-\d+\.\d+\.\d+-[A-Za-z0-9_]+", "carouseld-VERSION-ARCH", c)
            if norm(cmd) not in map(norm, commands):
                raise Failure(f"README.md's install section no longer says `{norm(cmd)}`: "
                              "update the test and the README together")
            return re.sub(r"^sudo ", "", cmd)

        def cgroup_peak(unit):
            """The unit's cgroup's memory.peak (kernel 5.19+): the most it held since it started."""
            group = s.ok(f"systemctl show {unit} -p ControlGroup --value").strip()
            return int(s.ok(f"cat /sys/fs/cgroup{group}/memory.peak").strip())

        # -- install ---------------------------------------------------------

        def runtime_packages():
            # The apt-get line of the README must name the package of every
            # shared library the binaries load directly (the guest has no
            # network, so it cannot run apt-get; its image has the packages).
            apt = [c for c in commands if "apt-get install" in c]
            if len(apt) != 1:
                raise Failure(f"expected one apt-get install line in the README section, found {apt}")
            listed = set(apt[0].split("apt-get install", 1)[1].split()) - {"-y"}
            needed = set()
            for binary in ("carouseld", "carouselctl", "carouseld-web"):
                dyn = subprocess.run(["readelf", "-d", os.path.join(os.path.dirname(host_binary), binary)],
                                     check=True, capture_output=True, text=True).stdout
                needed |= set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dyn))
            # One dpkg -S for all (each call reads dpkg's whole file list: slow under TCG).
            owners = s.ok("dpkg -S " + " ".join(shlex.quote(f"*/{lib}") for lib in sorted(needed)))
            packages = {line.split(":")[0] for line in owners.splitlines() if ": " in line}
            found = {line.rsplit("/", 1)[-1] for line in owners.splitlines() if ": " in line}
            if needed - found:
                raise Failure(f"no Debian package in the guest has {sorted(needed - found)}")
            base = {"libc6", "libgcc-s1"}  # essential in every Debian
            missing = packages - listed - base
            if missing:
                raise Failure(f"the README's apt-get line lacks {sorted(missing)} (libraries: {sorted(needed)})")
            return f"{len(needed)} libraries from {sorted(packages)}"

        def install():
            # A board with a panel backlight (the VM's test module: the
            # kernel's backlight class), there before the install.
            s.ok("modprobe carousel_test_backlight")
            s.ok(f"mkdir -p /root/board && cp {bundle_guest} /root/board/")
            tar = readme(f"tar xf {os.path.basename(tarball)}")
            cd = readme(f"cd {name}")
            inst = readme("sudo ./install.sh")
            out = s.ok(f"cd /root/board && {tar} && {cd} && {inst}", timeout=300)
            print(out.rstrip(), flush=True)
            unit = s.ok(f"systemctl cat {UNIT}")
            if "ExecStart=/usr/local/bin/carouseld run" not in unit:
                raise Failure(f"installed unit does not start /usr/local/bin/carouseld: {unit}")
            s.ok("id carouseld && test -x /usr/local/bin/carouselctl && test -f " + INI)
            pics = s.ok(f"ls {IMAGES}").split()
            if len(pics) != 5:
                raise Failure(f"expected the 5 demo pictures in {IMAGES}, found {pics}")
            if "backlight: carousel-test" not in out:
                raise Failure("install.sh did not open the board's backlight to the service")
            return f"{len(pics)} demo pictures seeded"

        def reinstall_keeps_ini():
            # The README's "edit the configuration" step: slower autoplay, so
            # the screen checks below see one picture; then install again.
            s.ok(f"sed -i 's/^interval = 3.0$/interval = 20/' {INI} && grep -q '^interval = 20$' {INI}")
            s.ok(readme(f"carouseld check-config {INI}"))
            out = s.ok(f"cd /root/board/{name} && ./install.sh", timeout=300)
            if "carouseld.ini.new" not in out:
                raise Failure(f"install.sh did not say where the new defaults went: {out}")
            s.ok(f"grep -q '^interval = 20$' {INI} && test -f {INI}.new && ! grep -q '^interval = 20$' {INI}.new")
            pics = s.ok(f"ls {IMAGES}").split()
            if len(pics) != 5:
                raise Failure(f"the second install changed {IMAGES}: {pics}")

        def add_pictures():
            # The README's pictures step, with two pictures of "yours".
            s.ok("mkdir -p ~/Pictures && " + " && ".join(
                f"cp {GUEST_REPO}/scripts/demo/images/{src} ~/Pictures/{dst}" for src, dst in EXTRA_PICTURES))
            s.ok(readme(f"sudo cp ~/Pictures/*.jpg {IMAGES}/"))
            pics = s.ok(f"ls {IMAGES}").split()
            if len(pics) != 7:
                raise Failure(f"expected 7 pictures, found {pics}")
            return " ".join(pics)

        def analyze_verify():
            r = s.sh(f"systemd-analyze verify {UNIT}")
            if r.rc != 0 or (r.out + r.err).strip():
                raise Failure(f"systemd-analyze verify: rc {r.rc}: {(r.out + r.err).strip()}")

        def analyze_security():
            said = []
            for unit in HARDENED:
                r = s.sh(f"systemd-analyze security {unit} --no-pager")
                m = re.search(r"Overall exposure level for " + re.escape(unit) + r": ([\d.]+) (\S+)", r.out)
                if not m:
                    raise Failure(f"no exposure level for {unit} in: {r.out[-500:]} {r.err}")
                key = "systemd-analyze security exposure" + ("" if unit == UNIT else f" of {unit.split('.')[0]}")
                s.figures[key] = f"{m.group(1)} {m.group(2)}"
                print(f"{unit}:\n" + "\n".join(l for l in r.out.splitlines() if l.startswith("✗")), flush=True)
                if float(m.group(1)) > MAX_EXPOSURE:
                    raise Failure(f"{unit}: exposure {m.group(1)} > {MAX_EXPOSURE}: hardening was weakened")
                said.append(f"{unit} {m.group(1)} {m.group(2)}")
            return "exposure " + ", ".join(said)

        def units_limited():
            # Every unit caps its memory and its tasks, and writes nothing
            # others may read (issue 44): from systemd's own view of the
            # installed units, not from their text.
            default_tasks = s.ok("systemctl show -p DefaultTasksMax --value").strip()
            said = []
            for unit in HARDENED:
                props = dict(l.split("=", 1) for l in s.ok(f"systemctl show {unit} -p MemoryMax,TasksMax,UMask,User").splitlines() if "=" in l)
                if props.get("MemoryMax") in (None, "", "infinity"):
                    raise Failure(f"{unit} has no MemoryMax=: {props}")
                if props.get("TasksMax") in (None, "", "infinity", default_tasks):
                    raise Failure(f"{unit} has no TasksMax= of its own (systemd's default is {default_tasks}): {props}")
                if props.get("UMask") != "0027":
                    raise Failure(f"{unit}: UMask {props.get('UMask')}, not 0027")
                s.limits[unit] = (int(props["MemoryMax"]), int(props["TasksMax"]))
                said.append(f"{unit}: User={props['User']} MemoryMax={int(props['MemoryMax']) >> 20} MiB TasksMax={props['TasksMax']}")
            users = {s.ok(f"systemctl show {unit} -p User --value").strip() for unit in UNITS + service_web.WEB_UNITS[:1]}
            if len(users) != len(UNITS) + 1:
                raise Failure(f"the units share a user: {users}")
            for unit in (service_web.WEB_UNITS[1], service_web.HTTPS_PROXY):
                proxy = s.ok(f"systemctl show {unit} -p User --value").strip()
                if proxy != "carouseld-web":
                    raise Failure(f"the page's proxy {unit} runs as {proxy!r}, not the page's user")
            return "; ".join(said)

        # -- running ---------------------------------------------------------

        def enable_now():
            s.console = vm.screen_rgb()[2]
            start = s.cursor()
            t0 = time.monotonic()
            # Type=notify: this returns once the daemon said READY=1.
            s.ok(readme("sudo systemctl enable --now carouseld"), timeout=180)
            s.figures["systemctl enable --now s"] = round(time.monotonic() - t0, 1)
            w, h, at_ready = vm.screen_rgb()
            write_png(os.path.join(s.out, "01-at-ready.png"), w, h, at_ready)
            state = s.show()
            if (state["ActiveState"], state["SubState"]) != ("active", "running"):
                raise Failure(f"not active after enable --now: {state}")
            journal = s.journal(start)
            if "first frame on screen" not in journal:
                raise Failure(f"active, but no 'first frame on screen' in the journal: {journal}")
            # The first frame may be the background and the page dots alone,
            # with the picture still decoding: a few hundred pixels.
            changed = sum(1 for i in range(0, len(at_ready), 3) if at_ready[i:i + 3] != s.console[i:i + 3])
            s.figures["pixels changed from the console at READY=1"] = changed
            if changed < 200:
                raise Failure(f"READY=1 came while the screen still showed the console ({changed} pixels differ)")
            _, _, rgb = vm.wait_screen_stable(interval=0.3, stable_for=1.0, timeout=90)
            vm.screendump(os.path.join(s.out, "02-first-picture.png"))
            value = psnr(rgb, s.reference(0))
            s.figures["PSNR first picture vs render dB"] = round(value, 1)
            if value < 30:
                raise Failure(f"screen is not the first picture: PSNR {value:.1f} dB")
            s.ok("test -L /etc/systemd/system/multi-user.target.wants/carouseld.service")
            # The README's "check" step.
            for cmd in ("systemctl status carouseld", "sudo carouselctl status", "sudo journalctl -u carouseld"):
                s.ok(readme(cmd))  # no terminal in the guest's commands: no pager either
            return f"PSNR {value:.1f} dB against render --offset 0"

        def status_text():
            st = s.wait("StatusText naming a picture",
                        lambda: (lambda t: t if re.search(r"\.(jpg|png|webp)", t) else None)(s.show()["StatusText"]), 30)
            return repr(st)

        def ctl_root():
            if s.ctl("version")["version"] != s.ok("carouseld --version").strip():
                raise Failure("carouselctl version differs from carouseld --version")
            listed = s.ctl("list")
            names = json.dumps(listed)
            if "01-mountains.jpg" not in names or "05-glow.webp" not in names:
                raise Failure(f"list: {listed}")
            # Autoplay would advance resume_delay (2 s) after each command
            # comes to rest, racing the checks: hold it first.
            s.ctl("pause")
            if "command" not in s.status()["autoplay"]["paused_by"]:
                raise Failure(f"pause did not show in status: {s.status()['autoplay']}")
            s.ctl("goto 3 0")
            s.wait_index("index 3 at rest", 3)
            s.ctl("next")
            s.wait_index("index 4 at rest after next", 4)
            s.wait("StatusText following the picture", lambda: "05-glow.webp" in s.show()["StatusText"], 30)
            s.ctl("prev")
            s.wait_index("index 3 at rest after prev", 3)
            s.ctl("resume")
            if "command" in s.status()["autoplay"]["paused_by"]:
                raise Failure(f"resume did not show in status: {s.status()['autoplay']}")
            s.ctl("screenshot /var/lib/carouseld/root-shot.png")
            head = s.ok("od -An -c -N4 /var/lib/carouseld/root-shot.png")
            if "P   N   G" not in head:
                raise Failure(f"screenshot is not a PNG: {head}")
            # carouselctl makes the file itself and sends it open: it lands in
            # root's /tmp, which the service's sandbox cannot even see.
            s.ok("carouselctl screenshot /tmp/mine.png && od -An -c -N4 /tmp/mine.png | grep -q 'P   N   G'")
            # A path sent on the socket is written by the daemon: outside its
            # writable paths it answers with an error, not a silent success.
            raw = s.sh("python3 -c 'import socket; c = socket.socket(socket.AF_UNIX); "
                       "c.connect(\"/run/carouseld/control.sock\"); c.sendall(b\"screenshot /tmp/lost.png\\n\"); "
                       "print(c.makefile().readline())'")
            if raw.rc != 0 or "Read-only file system" not in raw.out:
                raise Failure(f"screenshot PATH into the service's read-only /tmp: rc {raw.rc} {raw.out} {raw.err}")
            return "version list goto next prev pause resume screenshot"

        def ctl_repeated():
            # The sequence that was seen once to read index 0 after `next`,
            # with the unit's StatusText stuck: repeated on every run, from
            # every starting item, the daemon's PID and restart count watched.
            before = s.show()
            count = s.status()["count"]
            names = s.ctl("list")["images"]
            s.ctl("pause")
            rounds = 0
            for r in range(args.repeat):
                start = (3 + r) % count
                s.ctl(f"goto {start} 0")
                s.wait_index(f"round {r}: index {start} at rest", start)
                s.ctl("next")
                after_next = (start + 1) % count
                s.wait_index(f"round {r}: index {after_next} after next", after_next)
                shown = os.path.basename(names[after_next])
                s.wait(f"round {r}: StatusText naming {shown}", lambda: shown in s.show()["StatusText"], 30)
                s.ctl("prev")
                s.wait_index(f"round {r}: index {start} after prev", start)
                now = s.show()
                if (now["MainPID"], now["NRestarts"]) != (before["MainPID"], before["NRestarts"]):
                    raise Failure(f"round {r}: the daemon restarted: {before} -> {now}")
                rounds += 1
            s.ctl("resume")
            s.figures["goto/next/prev rounds"] = rounds
            return f"{rounds} rounds of goto, next, prev: index and StatusText followed, MainPID {before['MainPID']} kept"

        def touch_pages():
            # Input through the sandbox: DeviceAllow=char-input, the input
            # group, udev's database and netlink monitor (a new device).
            cur = s.cursor()
            touch = vm.touchscreen()
            try:
                s.wait_journal(r"^input device added: .*touch", cur, timeout=60)
                s.ctl("pause")
                s.wait("the carousel at rest", lambda: s.status()["state"] == "idle", 30)
                before = s.status()["index"]
                touch.drag_past_half(1100, 400, 200, 400)
                want = (before + 1) % s.status()["count"]
                s.wait_index(f"index {want} after a swipe", want, 60)
                s.ctl("resume")
            finally:
                touch.close()
            return f"swipe: {before} -> {want}"

        def heic_through_the_sandbox():
            # HEIF and AVIF are decoded by a helper process (the daemon's own
            # binary started again): it must start under the unit's sandbox,
            # and its death inside it costs one journal line, not the service
            # (MainPID and NRestarts unchanged). The HEIC libheif 1.15 aborted
            # on is refused by its security update, in whichever way: one line.
            # The death itself comes from the test fault (DecodingProcess.
            # TestFault), set for the unit by a drop-in under /run.
            dropin = "/run/systemd/system/carouseld.service.d/test-fault.conf"
            s.restore.append(f"rm -f {dropin}; systemctl daemon-reload")
            s.ok(f"mkdir -p {os.path.dirname(dropin)} && printf '[Service]\\nEnvironment=CAROUSELD_TEST_DECODE_FAULT=SIGSEGV\\n' "
                 f">{dropin} && systemctl daemon-reload && systemctl restart carouseld")
            s.wait_active(90)
            s.wait("the carousel at rest", lambda: s.status()["state"] == "idle", 60)
            cur = s.cursor()
            before = s.show()
            count = s.status()["count"]
            fixture = f"{GUEST_REPO}/Tests/CarouselImagingTests/Fixtures/quadrants.heic"
            s.ok(f"cp {fixture} {IMAGES}/20-phone.heic && "
                 f"cp {GUEST_REPO}/Fuzz/libheif-crashes/threads-per-tile.heic {IMAGES}/21-damaged.heic")
            with open(os.path.join(REPO, "Tests/CarouselImagingTests/Fixtures/quadrants.heic"), "rb") as f:
                vm.put(f"{IMAGES}/22-helper-dies.heic", marked_for_test_fault(f.read()))
            try:
                names = s.wait("the HEICs in the album", lambda: (lambda n: n if any(x.endswith("22-helper-dies.heic") for x in n)
                                                                  else None)(s.ctl("list")["images"]), 60)
                s.ctl("pause")
                index = [i for i, x in enumerate(names) if x.endswith("20-phone.heic")][0]
                s.ctl(f"goto {index} 0")
                s.wait_index(f"the HEIC at index {index}", index)
                if not s.status()["image"].endswith("20-phone.heic"):
                    raise Failure(f"status shows {s.status()['image']}, not the HEIC")
                # Its neighbours: decoded ahead, in helpers that refuse or die.
                s.wait_journal(r"skipping \S*21-damaged\.heic: .*", cur, timeout=120)
                line = s.wait_journal(r"skipping \S*22-helper-dies\.heic: corrupt HEIF data: libheif crashed on it \(SIGSEGV.*",
                                      cur, timeout=120).group(0)
                s.wait("the broken HEICs out of the album", lambda: s.status()["count"] == count + 1, 60)
                for name in ("21-damaged.heic", "22-helper-dies.heic"):
                    lines = [l for l in s.journal(cur).splitlines() if name in l]
                    if len(lines) != 1:
                        raise Failure(f"{name} was reported {len(lines)} times: {lines}")
                now = s.show()
                if (now["MainPID"], now["NRestarts"]) != (before["MainPID"], before["NRestarts"]):
                    raise Failure(f"the daemon restarted: {before} -> {now}")
            finally:
                s.ok(f"rm -f {IMAGES}/20-phone.heic {IMAGES}/21-damaged.heic {IMAGES}/22-helper-dies.heic")
                s.ctl("resume")
            s.wait("the album as before", lambda: s.status()["count"] == count, 60)
            s.ok(f"rm -f {dropin} && systemctl daemon-reload")
            return f"the HEIC shown; {line.strip()[-120:]}"

        def backlight_through_the_sandbox():
            # The unit's /sys is read-only (ProtectKernelTunables=) and the
            # kernel's files root's: install.sh's udev rule and drop-in are
            # what let the service write the backlight.
            dev = "/sys/class/backlight/carousel-test"

            def level():
                return int(s.ok(f"cat {dev}/actual_brightness").strip())
            if s.status()["display"]["backlight"] != "carousel-test":
                raise Failure(f"the service found no backlight: {s.status()['display']}")
            s.ctl("brightness 40")
            s.wait("brightness 40 % of 1023 in sysfs", lambda: level() == 409, 30)
            cur = s.cursor()
            s.ctl("display off")
            try:
                s.wait("the backlight powered down", lambda: s.ok(f"cat {dev}/bl_power").strip() == "4" and level() == 0, 30)
            except Failure as e:
                raise Failure(f"{e}; {s.ok(f'ls -l {dev}/ {dev}/')}; journal: {s.journal(cur)[-1500:]}")
            s.ctl("display on")
            s.wait("lit again at 40 %", lambda: s.ok(f"cat {dev}/bl_power").strip() == "0" and level() == 409, 30)
            kept = s.ok("cat /var/lib/carouseld/brightness").strip()
            if kept != "40":
                raise Failure(f"the level kept in the state directory reads {kept!r}")
            return "brightness 40, display off/on through the hardened unit"

        def mqtt_through_the_sandbox():
            # The unit allows no IP; `install.sh --mqtt` opens it to the broker
            # only. A Mosquitto in the guest (on its loopback) is the broker.
            s.ok("mosquitto -d -p 1883")
            s.restore.append("pkill -x mosquitto || true")
            s.restore.append(f"sed -i 's|^broker = mqtt://127.0.0.1:1883$|broker =|; s|^client_id = vm$|client_id =|' {INI}; "
                             "rm -f /etc/systemd/system/carouseld.service.d/mqtt.conf; systemctl daemon-reload; "
                             "systemctl restart carouseld")
            s.ok(f"sed -i 's|^broker =$|broker = mqtt://127.0.0.1:1883|; s|^client_id =$|client_id = vm|' {INI}"
                 f" && grep -q '^broker = mqtt://127.0.0.1:1883$' {INI}")
            cur = s.cursor()
            s.ok("systemctl restart carouseld", timeout=120)
            # Refused by the sandbox: a warning naming the broker. Whether libmosquitto
            # reports it from the connect call ("cannot reach ...") or once the
            # connection fails ("connection to ... failed") is its own choice.
            closed = s.wait_journal(r"mqtt: [^\n]*mqtt://127\.0\.0\.1:1883[^\n]*: .*", cur, timeout=60, max_priority=4)
            out = s.ok(f"cd /root/board/{name} && ./install.sh --mqtt", timeout=300)
            if "mqtt: IP opened to localhost 127.0.0.1" not in out:
                raise Failure(f"install.sh --mqtt: {out[-500:]}")
            r = s.sh(f"systemd-analyze security {UNIT} --no-pager")
            m = re.search(r"Overall exposure level for carouseld\.service: ([\d.]+)", r.out)
            if not m or float(m.group(1)) > MAX_EXPOSURE:
                raise Failure(f"exposure with the MQTT drop-in: {m.group(1) if m else r.out[-300:]}")
            s.figures["systemd-analyze security exposure with MQTT"] = m.group(1)
            cur = s.cursor()
            s.ok("systemctl restart carouseld", timeout=120)
            s.wait_journal(r"mqtt: connected to mqtt://127.0.0.1:1883", cur, timeout=60)
            online = s.ok("mosquitto_sub -h 127.0.0.1 -t carouseld/vm/availability -C 1 -W 30").strip()
            if online != "online":
                raise Failure(f"availability reads {online!r}")
            s.ctl("pause")
            s.ok("mosquitto_pub -h 127.0.0.1 -t carouseld/vm/command -m 'goto 2 0'")
            s.wait_index("index 2 from an MQTT command", 2)
            s.ctl("resume")
            # This board has a backlight: Home Assistant gets a Brightness number, and it works.
            config = json.loads(s.ok("mosquitto_sub -h 127.0.0.1 -t homeassistant/number/vm/brightness/config -C 1 -W 30"))
            command = config["command_template"].replace("{{ value }}", "30")
            s.ok(f"mosquitto_pub -h 127.0.0.1 -t {shlex.quote(config['command_topic'])} -m {shlex.quote(command)}")
            s.wait("brightness 30 % from Home Assistant's number", lambda: s.ok(
                "cat /sys/class/backlight/carousel-test/brightness").strip() == "307", 30)
            if s.status()["display"]["brightness"] != 30 or "display.brightness" not in config["value_template"]:
                raise Failure(f"the brightness number's state: {config['value_template']}, status {s.status()['display']}")
            # Back to the unit as shipped for the checks after this one.
            s.undo()
            s.wait_active(90)
            return f"closed without the drop-in ({closed.group(0)[:90]}); exposure {m.group(1)} with it; goto over MQTT"

        def fbdev_through_the_sandbox():
            # [display] backend = fbdev: the unit's device list holds DRM and
            # input only; systemd/carouseld-fbdev.conf adds the framebuffer.
            dropin = "/etc/systemd/system/carouseld.service.d/fbdev.conf"
            s.restore.append(f"sed -i 's|^backend = fbdev$|backend = drm|' {INI}; rm -f {dropin}; "
                             "systemctl daemon-reload; systemctl reset-failed carouseld; systemctl restart carouseld")
            s.ok(f"sed -i 's|^backend = drm$|backend = fbdev|' {INI} && grep -q '^backend = fbdev$' {INI}")
            cur = s.cursor()
            s.sh("systemctl restart carouseld", timeout=120)
            refused = s.wait_journal(r"display: cannot open /dev/fb0: .*", cur, timeout=60)
            s.ok(f"mkdir -p {os.path.dirname(dropin)} && cp /root/board/{name}/systemd/carouseld-fbdev.conf {dropin}"
                 " && systemctl daemon-reload && systemctl reset-failed carouseld")
            cur = s.cursor()
            s.ok("systemctl restart carouseld", timeout=120)
            s.wait_active(90)
            s.wait_journal(r"^display: fbdev /dev/fb0 .*32 bpp", cur, timeout=60)
            s.ctl("pause")
            s.ctl("goto 0 0")
            s.wait_index("index 0 on the framebuffer", 0)
            _, _, rgb = vm.wait_screen_stable(interval=0.3, stable_for=1.0, timeout=90)
            vm.screendump(os.path.join(s.out, "30-fbdev-service.png"))
            value = psnr(rgb, s.reference(0))
            s.figures["PSNR fbdev under systemd vs render dB"] = round(value, 1)
            if value < 30:
                raise Failure(f"the framebuffer does not show the first picture: PSNR {value:.1f} dB")
            s.ctl("resume")
            s.undo()
            s.wait_active(90)
            return f"without the drop-in: {refused.group(0)[:80]}; with it PSNR {value:.1f} dB"

        def gpio_through_the_sandbox():
            # [power] presence = gpio:...: the unit's device list holds DRM
            # and input only, and Debian's /dev/gpiochip* are root's;
            # systemd/carouseld-gpio.conf adds GPIO chips and the gpio group,
            # with the udev rule it describes. The chip is gpio-sim's.
            sim = "/sys/kernel/config/gpio-sim/svc"
            dropin = "/etc/systemd/system/carouseld.service.d/gpio.conf"
            rule = "/etc/udev/rules.d/70-gpiochip.rules"
            s.ok("modprobe gpio-sim && (mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config)"
                 f" && mkdir -p {sim}/bank0/line5 && echo 8 > {sim}/bank0/num_lines"
                 f" && echo pir > {sim}/bank0/line5/name && echo 1 > {sim}/live")
            chip = s.ok(f"cat {sim}/bank0/chip_name").strip()
            pull = f"/sys/devices/platform/{s.ok(f'cat {sim}/dev_name').strip()}/{chip}/sim_gpio5/pull"
            s.restore.append(f"sed -i 's|^presence = gpio:.*$|presence =|' {INI}; rm -f {dropin} {rule}; "
                             "udevadm control --reload; systemctl daemon-reload; systemctl reset-failed carouseld; "
                             f"systemctl restart carouseld; echo 0 > {sim}/live; rmdir {sim}/bank0/line5 {sim}/bank0 {sim}")
            s.ok(f"sed -i 's|^presence =$|presence = gpio:{chip}:pir|' {INI} && grep -q '^presence = gpio:' {INI}")
            cur = s.cursor()
            s.sh("systemctl restart carouseld", timeout=120)
            s.wait_active(90)
            refused = s.wait_journal(r"presence: cannot open GPIO chip .*", cur, timeout=60)
            # The drop-in, the gpio group and the udev rule, as carouseld-gpio.conf says.
            s.ok(f"mkdir -p {os.path.dirname(dropin)} && cp /root/board/{name}/systemd/carouseld-gpio.conf {dropin}"
                 " && (getent group gpio || groupadd --system gpio)"
                 f" && echo 'SUBSYSTEM==\"gpio\", KERNEL==\"gpiochip[0-9]*\", GROUP=\"gpio\", MODE=\"0660\"' > {rule}"
                 " && udevadm control --reload && udevadm trigger --subsystem-match=gpio --action=add --settle"
                 f" && test \"$(stat -c %G /dev/{chip})\" = gpio"
                 " && systemctl daemon-reload && systemctl reset-failed carouseld")
            cur = s.cursor()
            s.ok("systemctl restart carouseld", timeout=120)
            s.wait_active(90)
            s.wait_journal(rf"presence: {chip} line 5 \(pir\)", cur, timeout=60)
            s.ok(f"echo pull-up > {pull}")
            s.wait_journal(r"presence: someone is there", cur, timeout=60)
            if s.status()["presence"]["present"] is not True:
                raise Failure(f"status after the line went up: {s.status()['presence']}")
            r = s.sh(f"systemd-analyze security {UNIT} --no-pager")
            m = re.search(r"Overall exposure level for carouseld\.service: ([\d.]+) (\S+)", r.out)
            if not m or float(m.group(1)) > MAX_EXPOSURE:
                raise Failure(f"exposure with the gpio drop-in: {m.group(1) if m else r.out[-300:]}")
            s.figures["systemd-analyze security exposure with carouseld-gpio.conf"] = f"{m.group(1)} {m.group(2)}"
            s.ok(f"echo pull-down > {pull}")
            s.undo()
            s.wait_active(90)
            return f"without the drop-in: {refused.group(0)[:90]}; with it presence seen, exposure {m.group(1)}"

        def sync_through_the_sandbox():
            # carouseld-sync.service, as install.sh --sync sets it up: IP to
            # its server only, write access to the pictures folder and its
            # state only. The server is Immich's stand-in in the guest, on
            # 127.0.0.1 (allowed: the server's address alone, not the whole
            # loopback) and 127.0.0.2 (the same server, another address: refused).
            lib = "/root/immich"
            library = {"assets": [{"id": f"{i:07x}5-0000-4000-8000-{i:012d}", "type": "IMAGE", "file": f"{i}.jpg",
                                   "originalFileName": f"IMG_{i}.JPG", "fileCreatedAt": f"2024-0{i}-01T12:00:00.000Z",
                                   "exifInfo": {"description": f"Synced {i}", "dateTimeOriginal": f"2024-0{i}-01T12:00:00.000Z"}}
                                  for i in (1, 2)],
                       "albums": [{"id": "aaaaaaa5-0000-4000-8000-000000000001", "albumName": "Frame",
                                   "assetIds": [f"{i:07x}5-0000-4000-8000-{i:012d}" for i in (1, 2)]}]}
            s.ok(f"mkdir -p {lib} && cp {GUEST_REPO}/scripts/demo/images/01-mountains.jpg {lib}/1.jpg"
                 f" && cp {GUEST_REPO}/scripts/demo/images/02-sunset.jpg {lib}/2.jpg"
                 f" && echo {shlex.quote(json.dumps(library))} > {lib}/library.json"
                 # As the README of earlier versions said: root's, readable by the carouseld group.
                 f" && echo sync-test-key > /etc/carouseld/immich.key && chgrp carouseld /etc/carouseld/immich.key"
                 f" && chmod 0640 /etc/carouseld/immich.key")
            s.ok(f"(python3 {GUEST_REPO}/Tests/Servers/immich_server.py --host 0.0.0.0 --port 2283 --library {lib}"
                 f" --api-key sync-test-key --port-file {lib}/port >{lib}/server.log 2>&1 &)"
                 f" && for i in $(seq 100); do [ -s {lib}/port ] && break; sleep 0.1; done; cat {lib}/port")
            before = s.status()["count"]
            s.restore.append("pkill -f '[i]mmich_server.py' || true")
            s.restore.append(f"systemctl stop carouseld-sync; rm -rf /etc/systemd/system/carouseld-sync.service.d; "
                             f"sed -i '/^\\[sync\\]$/,$d' {INI}; cat /root/board/{name}/etc/carouseld.ini | sed -n '/^\\[sync\\]$/,$p' >> {INI}; "
                             "rm -f /var/lib/carouseld/images/2024-0* /var/lib/carouseld/images/.carouseld-sync.json; systemctl daemon-reload")
            s.ok(f"sed -i 's|^source =$|source = immich|; s|^server =$|server = http://127.0.0.1:2283|;"
                 f" s|^api_key_file =$|api_key_file = /etc/carouseld/immich.key|; s|^albums =$|albums = Frame|' {INI}")
            # A key its group may read is refused, with the chmod that fixes it.
            r = s.sh(f"carouseld check-config {INI}")
            fix = "fix it with: chmod 0600 /etc/carouseld/immich.key"
            if r.rc != 1 or "[sync] api_key_file /etc/carouseld/immich.key is readable by its group (mode 0640)" not in r.err \
                    or fix not in r.err:
                raise Failure(f"check-config with a 0640 key: rc {r.rc}, {r.err.strip()[-400:]}")
            refused_key = r.err.strip().splitlines()[-1]
            # The sync itself refuses to start with it: one error line, exit 2 (not restarted by systemd).
            r = s.sh(f"carouseld sync --once --config {INI} --state /root/sync-refused")
            if r.rc != 2 or not re.search(r"^<3>sync: cannot start: .*readable by its group.*" + re.escape(fix) + "$", r.err, re.M):
                raise Failure(f"carouseld sync with a 0640 key: rc {r.rc}, {r.err.strip()[-400:]}")
            # In that layout the daemon's user reads the key (what the check after the hand-over must
            # see refused):
            s.ok("setpriv --reuid=carouseld --regid=carouseld --init-groups cat /etc/carouseld/immich.key")
            # install.sh (board-setup) hands it to the sync's user, as an upgrade from one user for both does.
            out = s.ok(f"cd /root/board/{name} && ./install.sh --sync", timeout=300)
            if "sync: IP opened to 127.0.0.1 for 127.0.0.1" not in out:
                raise Failure(f"install.sh --sync: {out[-500:]}")
            if "secrets: [sync] api_key_file /etc/carouseld/immich.key now carouseld-sync:carouseld-sync 600" not in out:
                raise Failure(f"install.sh did not give the key to carouseld-sync: {out[-800:]}")
            s.ok(f"carouseld check-config {INI}")
            # The daemon's user cannot read the sync's key.
            r = s.sh("setpriv --reuid=carouseld --regid=carouseld --init-groups cat /etc/carouseld/immich.key")
            if r.rc == 0:
                raise Failure("the daemon's user can read the sync's key")
            r = s.sh("systemd-analyze security carouseld-sync.service --no-pager")
            m = re.search(r"Overall exposure level for carouseld-sync\.service: ([\d.]+) (\S+)", r.out)
            if not m or float(m.group(1)) > MAX_EXPOSURE:
                raise Failure(f"the sync unit's exposure: {m.group(1) if m else r.out[-300:]}")
            s.figures["systemd-analyze security exposure of carouseld-sync"] = f"{m.group(1)} {m.group(2)}"
            cur = s.cursor()
            s.ok("systemctl start carouseld-sync", timeout=120)
            s.wait_journal(r"sync: 2 pictures from Immich at http://127\.0\.0\.1:2283 in /var/lib/carouseld/images: 2 new", cur, timeout=90,
                           unit="carouseld-sync")
            s.wait(f"the carousel to show {before + 2} pictures", lambda: s.status()["count"] == before + 2, 60)
            # Its own user, the album's group: the daemon reads them through the group.
            owners = s.ok("stat -c '%U:%G %a' /var/lib/carouseld/images/2024-0*").split()
            if owners[:2] != ["carouseld-sync:carouseld", "640"]:
                raise Failure(f"synced files are {owners}")
            state = s.ok("stat -c '%U:%G %a' /var/lib/carouseld-sync /var/lib/carouseld-sync/manifest.json").split()
            if state[:2] != ["carouseld-sync:carouseld-sync", "750"] or state[2] != "carouseld-sync:carouseld-sync":
                raise Failure(f"the sync's state: {state}")
            # Two processes, two users (from the running processes, not the unit files).
            pids = {u: s.ok(f"systemctl show {u} -p MainPID --value").strip() for u in UNITS}
            uids = {u: s.ok(f"awk '/^Uid:/ {{ print $2 }}' /proc/{pids[u]}/status").strip() for u in UNITS}
            if uids["carouseld.service"] == uids["carouseld-sync.service"] \
                    or uids["carouseld-sync.service"] != s.ok("id -u carouseld-sync").strip():
                raise Failure(f"the daemon and the sync run as uids {uids}")
            # From inside the sync's own mount namespace, with its user and groups: no control
            # socket (its group carouseld would open it in the host's /run, checked first), and
            # no signal to the daemon.
            as_sync = "setpriv --reuid=carouseld-sync --regid=carouseld-sync --groups=carouseld-sync,carouseld"
            s.ok(f"{as_sync} carouselctl status")
            r = s.sh(f"nsenter -t {pids['carouseld-sync.service']} -m -- {as_sync} carouselctl status")
            if r.rc == 0:
                raise Failure(f"the sync can use the control socket: {r.out[-300:]}")
            r = s.sh(f"{as_sync} kill -0 {pids['carouseld.service']}")
            if r.rc == 0:
                raise Failure("the sync's user can signal the daemon")
            peak = cgroup_peak("carouseld-sync.service")
            s.figures["carouseld-sync memory.peak MiB (a pass of 2 pictures)"] = round(peak / 2**20, 1)
            limit = s.limits.get("carouseld-sync.service", (0, 0))[0]
            if limit and peak * 2 > limit:
                raise Failure(f"the sync's peak {peak >> 20} MiB leaves less than half its MemoryMax ({limit >> 20} MiB) free")
            # The same server at another address: outside IPAddressAllow=, refused by the sandbox.
            s.ok(f"python3 -c \"import urllib.request; urllib.request.urlopen('http://127.0.0.2:2283/api/server/ping', timeout=5)\"")
            s.ok(f"sed -i 's|^server = http://127.0.0.1:2283$|server = http://127.0.0.2:2283|' {INI}")
            cur = s.cursor()
            s.ok("systemctl restart carouseld-sync", timeout=120)
            refused = s.wait_journal(r"sync: Immich: http://127\.0\.0\.2:2283: .*", cur, timeout=90, unit="carouseld-sync")
            if s.status()["count"] != before + 2:
                raise Failure("the pictures must stay while the server cannot be reached")
            # Nowhere to write but its folder and its state, IP to its server only.
            props = s.ok("systemctl show carouseld-sync -p ReadWritePaths -p IPAddressAllow -p IPAddressDeny --no-pager")
            if "/var/lib/carouseld/images" not in props or "127.0.0.1" not in props:
                raise Failure(f"the unit's properties: {props}")
            s.undo()
            return (f"exposure {m.group(1)} {m.group(2)}; {refused_key[:80]}...; 2 pictures through the sandbox as carouseld-sync, "
                    f"uids {uids}; another address refused ({refused.group(0)[-70:]})")

        def daemon_under_load():
            # What a frame holds at its most: a 24 MP photo decoded for the
            # screen and an H.264 clip playing (made on the host, fixed
            # settings). The cgroup's own peak (the daemon, its decode
            # helpers and their page cache, as MemoryMax= counts them) and
            # the most tasks seen must stay under half of each limit.
            load = os.path.join(args.out, "load")
            os.makedirs(load, exist_ok=True)
            big, clip = os.path.join(load, "big.jpg"), os.path.join(load, "clip.mp4")
            if not os.path.exists(big):
                subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=6000x4000",
                                "-frames:v", "1", "-q:v", "3", big], check=True)
            if not os.path.exists(clip):
                subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=1280x720:r=30:d=6",
                                "-c:v", "libx264", "-preset", "medium", "-pix_fmt", "yuv420p", "-threads", "1",
                                "-fflags", "+bitexact", "-flags:v", "+bitexact", "-movflags", "+faststart", clip], check=True)
            guest = f"{GUEST_REPO}/{os.path.relpath(load, REPO)}"
            s.wait_active(60)
            before = s.status()["count"]
            s.restore.append(f"rm -f {IMAGES}/20-big.jpg {IMAGES}/21-clip.mp4")
            s.ok(f"cp {guest}/big.jpg {IMAGES}/20-big.jpg && cp {guest}/clip.mp4 {IMAGES}/21-clip.mp4")
            s.wait("the two files in the album", lambda: s.status()["count"] == before + 2, 60)
            images = s.ctl("list")["images"]
            index = {os.path.basename(p): i for i, p in enumerate(images)}
            tasks = []
            def sample():
                tasks.append(int(s.ok(f"systemctl show {UNIT} -p TasksCurrent --value").strip()))
            s.ctl("pause")
            cur = s.cursor()
            s.ctl(f"goto {index['20-big.jpg']} 0")
            s.wait_index("the 24 MP picture", index["20-big.jpg"], 60)
            s.wait("the 24 MP picture decoded", lambda: (sample(), s.status().get("image", "").endswith("20-big.jpg"))[1], 60)
            time.sleep(2)
            sample()
            s.ctl(f"goto {index['21-clip.mp4']} 0")
            playing = s.wait_journal(r"video: playing \d+ \(\S*/21-clip\.mp4\).*", cur, timeout=90)
            # Paused, the clip plays to its end and keeps its last frame; 10 s of it under TCG.
            for _ in range(20):
                sample()
                time.sleep(0.5)
            s.ctl("goto 0 0")
            s.ctl("resume")
            peak = cgroup_peak(UNIT)
            limit, max_tasks = s.limits.get(UNIT, (0, 0))
            s.figures["carouseld memory.peak MiB (24 MP picture, 720p clip)"] = round(peak / 2**20, 1)
            s.figures["carouseld TasksCurrent most seen"] = max(tasks)
            s.undo()
            if not limit or not max_tasks:
                raise Failure("no limits read (units_limited failed?)")
            if peak * 2 > limit:
                raise Failure(f"the daemon's peak {peak >> 20} MiB leaves less than half its MemoryMax ({limit >> 20} MiB) free")
            if max(tasks) * 2 > max_tasks:
                raise Failure(f"{max(tasks)} tasks leave less than half of TasksMax={max_tasks} free")
            return f"memory.peak {peak >> 20} MiB of {limit >> 20}, {max(tasks)} tasks at most of {max_tasks}; {playing.group(0)}"

        def ctl_group_member():
            s.ok("useradd -M alice && useradd -M bob")
            s.ok(readme("sudo usermod -aG carouseld alice"))
            st = s.status(user="alice")
            s.ctl(f"goto {(st['index'] + 1) % st['count']} 0", user="alice")
            # Written by carouselctl with alice's own rights, where she stands.
            s.ok("cd /tmp && carouselctl screenshot alice.png && test -O /tmp/alice.png && test -s /tmp/alice.png", user="alice")
            s.ctl("list", user="alice")
            return "status goto screenshot list as a member of group carouseld"

        def ctl_refused():
            r = s.sh("carouselctl status", user="bob")
            if r.rc != 3 or "Permission denied" not in r.err:
                raise Failure(f"user bob (not in carouseld): rc {r.rc}, {r.err.strip()} (expected exit 3, Permission denied)")
            mode = s.ok("stat -c '%A %U:%G' /run/carouseld /run/carouseld/control.sock").split("\n")
            return f"{r.err.strip()}; {'; '.join(m for m in mode if m)}"

        def reload_good():
            before = s.show()
            cur = s.cursor()
            s.ok(f"sed -i 's/^interval = 20$/interval = 25/' {INI}")
            s.ok(readme("sudo systemctl reload carouseld"))
            s.wait_journal(r"^configuration reloaded from " + re.escape(INI), cur)
            # RELOADING=1 then READY=1: back to active, not stuck in "reloading".
            after = s.wait_active(30)
            if after["MainPID"] != before["MainPID"]:
                raise Failure(f"reload restarted the daemon: {before['MainPID']} -> {after['MainPID']}")
            s.status()
            return f"MainPID {after['MainPID']} kept"

        def reload_bad():
            before = s.show()
            cur = s.cursor()
            s.ok(f"cp {INI} /root/good.ini && sed -i 's/^interval = 25$/interval = soon/' {INI}")
            s.restore.append(f"cp /root/good.ini {INI}")
            s.ok("systemctl reload carouseld")
            m = s.wait_journal(r"^reload refused, keeping the running configuration: " + re.escape(INI) + r":\d+: .*", cur,
                               max_priority=3)
            after = s.wait_active(30)
            if after["MainPID"] != before["MainPID"]:
                raise Failure(f"a refused reload restarted the daemon: {before['MainPID']} -> {after['MainPID']}")
            s.ctl("next")
            s.ok(f"cp /root/good.ini {INI}")
            return f"journal (priority err): {m.group(0)!r}"

        def crash_restarts():
            before = s.show()
            s.ok(f"kill -9 {before['MainPID']}")
            after = s.wait("a restart", lambda: (lambda st: st if st["MainPID"] not in ("0", before["MainPID"])
                                                  and int(st["NRestarts"]) == int(before["NRestarts"]) + 1 else None)(s.show()), 60)
            after = s.wait_active(90)
            s.status()
            return f"MainPID {before['MainPID']} -> {after['MainPID']}, NRestarts {after['NRestarts']}"

        def restart_same_picture():
            # [images] resume (the default): the picture on screen is kept in
            # systemd's StateDirectory and a restart, or a kill as hard as a
            # power cut, comes back on it, not on start_index.
            # Not start_index (0): coming back there would prove nothing.
            want = 3
            s.ctl("pause")
            s.ctl(f"goto {want} 0")
            s.wait_index(f"index {want}", want, 30)
            image = s.status()["image"]
            name = os.path.basename(image)
            s.wait("the position kept", lambda: s.sh("cat /var/lib/carouseld/position").out.strip() == name, 30)
            kept = s.ok("stat -c '%U:%G %a' /var/lib/carouseld/position").strip()
            s.ok("systemctl restart carouseld", timeout=120)
            s.wait_active(90)
            s.wait_index(f"index {want} after systemctl restart", want, 60)
            before = s.show()
            s.ok(f"kill -9 {before['MainPID']}")
            s.wait("a restart", lambda: s.show()["MainPID"] not in ("0", before["MainPID"]), 60)
            s.wait_active(90)
            s.wait_index(f"index {want} after kill -9", want, 60)
            if s.status()["image"] != image:
                raise Failure(f"back on {s.status()['image']}, not {image}")
            s.ctl("resume")
            return f"{name} (index {want}) after restart and kill -9; position file {kept}"

        def watchdog():
            before = s.wait_active(60)
            cur = s.cursor()
            t0 = time.monotonic()
            s.ok(f"kill -STOP {before['MainPID']}")
            # A stopped process can neither exit nor crash by itself: a new
            # MainPID and one restart more are the watchdog's doing. systemd's
            # own journal lines about it ("Watchdog timeout" in 252, which
            # README.md's troubleshooting quotes) are its wording: shown in
            # the detail, not waited for.
            s.wait("a restart after the watchdog", lambda: (lambda st: st["MainPID"] not in ("0", before["MainPID"])
                                                            and int(st["NRestarts"]) == int(before["NRestarts"]) + 1)(s.show()), 180)
            s.figures["SIGSTOP to restart s"] = round(time.monotonic() - t0, 1)
            after = s.wait_active(90)
            s.figures["SIGSTOP to active again s"] = round(time.monotonic() - t0, 1)
            s.status()
            journal = s.journal(cur)
            said = [m.group(0) for m in (re.search(p, journal, re.M) for p in (r"^.*Watchdog timeout.*$", r"^.*Main process exited.*$"))
                    if m]
            return (f"{', '.join(map(repr, said)) or 'no systemd line recognised'}; "
                    f"MainPID {before['MainPID']} -> {after['MainPID']}, NRestarts {after['NRestarts']}")

        def clean_stop():
            s.wait_active(60)
            cur = s.cursor()
            s.ok("systemctl stop carouseld", timeout=120)
            st = s.show()
            if st["Result"] != "success" or st["ExecMainStatus"] != "0" or st["ActiveState"] != "inactive":
                raise Failure(f"stop: {st}")
            s.wait_journal(r"display restored", cur)
            _, _, rgb = vm.wait_screen_stable(interval=0.3, stable_for=1.0, timeout=60)
            value = psnr(rgb, s.reference(0))
            if value > 25:
                raise Failure("the carousel is still on screen after stop")
            return "exit 0, display restored"

        def bad_config_not_restarted():
            cur = s.cursor()
            s.ok(f"cp {INI} /root/good.ini && sed -i 's/^interval = 25$/intervall = 25/' {INI}")
            s.restore.append(f"cp /root/good.ini {INI}; systemctl reset-failed carouseld")
            r = s.sh("systemctl start carouseld", timeout=120)
            st = s.show()
            if r.rc == 0 or st["ExecMainStatus"] != "2":
                raise Failure(f"start with a bad file: rc {r.rc}, {st}")
            time.sleep(5)  # RestartSec=3s and more: a restart would have happened by now
            again = s.show()
            if again["ActiveState"] != "failed" or again["NRestarts"] != st["NRestarts"]:
                raise Failure(f"restarted despite exit status 2: {again}")
            err = s.journal(cur, max_priority=3)
            if "intervall" not in err:
                anywhere = [l for l in s.journal(cur).splitlines() if "intervall" in l]
                raise Failure(f"the bad line is not in the journal at priority err (a '<3>' prefix); "
                              f"at a lower priority: {anywhere}; err: {err[-500:]}")
            s.ok(f"cp /root/good.ini {INI} && systemctl reset-failed carouseld")
            return "exit 2, ActiveState failed, no restart"

        def no_display():
            # Monitor off at start: the daemon must not say READY=1, and its
            # EXTEND_TIMEOUT_USEC keep-alives must outlast the start time-out
            # (5 s here through a drop-in, 90 s by default).
            vm.hotplug(False)
            s.restore.append(lambda: vm.hotplug(True))
            s.restore.append("rm -f /run/systemd/system/carouseld.service.d/short-start.conf; systemctl daemon-reload")
            s.ok("mkdir -p /run/systemd/system/carouseld.service.d && printf '[Service]\\nTimeoutStartSec=5s\\n' "
                 ">/run/systemd/system/carouseld.service.d/short-start.conf && systemctl daemon-reload")
            t0 = time.monotonic()
            s.ok("systemctl start --no-block carouseld")
            text = s.wait("StatusText 'waiting for a display'",
                          lambda: (lambda st: st["StatusText"] if "waiting for a display" in st["StatusText"] else None)(s.show()), 60)
            while time.monotonic() - t0 < 10:
                st = s.show()
                if st["ActiveState"] != "activating":
                    raise Failure(f"left 'activating' without a display after {time.monotonic() - t0:.1f} s: {st}")
                time.sleep(1)
            vm.hotplug(True)
            st = s.wait_active(90)
            s.ok("rm /run/systemd/system/carouseld.service.d/short-start.conf && systemctl daemon-reload")
            if st["NRestarts"] != s.show()["NRestarts"]:
                raise Failure("restarted meanwhile")
            s.ok("systemctl stop carouseld", timeout=120)
            return f"{text!r}, activating for 10 s with TimeoutStartSec=5s, active once plugged"

        for name_, fn in [
            ("README runtime packages cover the binaries' libraries", runtime_packages),
            ("install.sh from the dist bundle, as the README says", install),
            ("install.sh again keeps an edited INI (carouseld.ini.new)", reinstall_keeps_ini),
            ("pictures copied into the folder", add_pictures),
            ("systemd-analyze verify is clean", analyze_verify),
            ("systemd-analyze security exposure of every unit at most 1.5", analyze_security),
            ("every unit has MemoryMax, TasksMax, UMask 0027, and a user of its own", units_limited),
            ("systemctl enable --now: READY=1 with a frame on screen", enable_now),
            ("StatusText names the picture", status_text),
            ("carouselctl as root", ctl_root),
            ("goto/next/prev repeated: the place and StatusText follow", ctl_repeated),
            ("a touchscreen swipe pages", touch_pages),
            ("HEIC through the sandbox: decoded by the helper, a damaged HEIC and the helper's death in it one line each", heic_through_the_sandbox),
            ("the backlight through the sandbox: brightness, display off/on", backlight_through_the_sandbox),
            ("MQTT: closed to IP without install.sh --mqtt, a command through a broker with it", mqtt_through_the_sandbox),
            ("fbdev through the sandbox: refused without systemd/carouseld-fbdev.conf, the picture with it", fbdev_through_the_sandbox),
            ("a GPIO presence sensor through the sandbox: refused without systemd/carouseld-gpio.conf, seen with it", gpio_through_the_sandbox),
            ("carouseld-sync through its sandbox: install.sh --sync, pictures from Immich's stand-in, another address refused", sync_through_the_sandbox),
            ("the frame's page: carouseld-web.socket on port 80, reached from the host, a public address refused, "
             "an upload and a tap through the sandbox", lambda: service_web.web_through_the_sandbox(
                 s, readme, web_port, Failure, open(os.path.join(REPO, "scripts/demo/images/02-sunset.jpg"), "rb").read())),
            ("the frame's page over HTTPS: the certificate and key as README.md says, carouseld-web-https.socket on port "
             "443 verified from the host, a public address refused there too, port 80 sending there",
             lambda: service_web.web_over_https(
                 s, readme, web_port, https_port, Failure, os.path.join(args.out, "tls"),
                 f"{GUEST_REPO}/{os.path.relpath(os.path.join(args.out, 'tls'), REPO)}")),
            ("carouselctl as a carouseld group member", ctl_group_member),
            ("carouselctl refused for other users", ctl_refused),
            ("systemctl reload with a good edit", reload_good),
            ("systemctl reload with a bad file is refused", reload_bad),
            ("kill -9 is restarted", crash_restarts),
            ("a restart and a kill -9 come back on the same picture", restart_same_picture),
            ("SIGSTOP: the watchdog restarts it", watchdog),
            ("the daemon's peak memory and tasks, under a 24 MP picture and a clip, well inside its limits", daemon_under_load),
            ("systemctl stop: exit 0, console back", clean_stop),
            ("bad configuration at start: exit 2, not restarted", bad_config_not_restarted),
            ("no display at start: waits past the start time-out", no_display),
        ]:
            s.check(name_, fn)
    s.figures["total s"] = round(time.monotonic() - started, 1)
    print(json.dumps(s.figures, indent=1))
    for name_, why in s.failed:
        print(f"FAILED {name_}: {why}")
    print(f"service: {len(s.passed)} passed, {len(s.failed)} failed")
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
