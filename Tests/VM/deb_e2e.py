#!/usr/bin/env python3
"""The Debian package on a real kernel: `apt install ./carouseld_*.deb` in
the test VM as README.md's "Install with apt" says, then what Debian policy
and a person installing a frame expect of it: the service enabled and
started (READY=1 with the first demo picture on screen), carouselctl
answering, the unit and its hardening as shipped; an upgrade to a rebuilt
package with a newer version keeping a locally edited INI; `apt remove`
(stopped, configuration, pictures and user kept) and `apt purge`
(configuration, state, user and group gone, your own pictures kept), each
checked file by file; installing again.

One line per check, then `deb: N passed, M failed`; exit status 1 if any
failed. The guest has no network: apt resolves the package's dependencies
from what the image has installed.

Usage: Tests/VM/deb_e2e.py DEB [--out DIR]
DEB is the package `make deb` made (out/deb/carouseld_VERSION_ARCH.deb).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import REPO, VM
from e2e_support import psnr, read_png_rgb
from service_e2e import GUEST_REPO, INI, MAX_EXPOSURE, Failure, Suite, readme_commands, readme_section

W, H = 1280, 800
STATE = "/var/lib/carouseld"
IMAGES = f"{STATE}/images"
DEMO = sorted(os.listdir(os.path.join(REPO, "scripts/demo/images")))
# Every path the package owns besides its folders, as `dpkg -L` lists them
# (the man pages are checked apart: dh_compress names them .gz).
OWNED = ["/usr/bin/carouseld", "/usr/bin/carouselctl", "/lib/systemd/system/carouseld.service",
         "/lib/systemd/system/carouseld-sync.service", "/usr/lib/sysusers.d/carouseld.conf",
         "/usr/lib/tmpfiles.d/carouseld.conf", "/lib/udev/rules.d/70-carouseld-backlight.rules",
         "/etc/carouseld/carouseld.ini", "/usr/share/doc/carouseld/README.md",
         "/usr/share/doc/carouseld/copyright", "/usr/share/doc/carouseld/changelog.gz",
         "/usr/lib/carouseld/board-setup", "/usr/share/carouseld/systemd/carouseld-mqtt.conf",
         "/usr/share/carouseld/systemd/carouseld-sync.conf", "/usr/bin/carouseld-web",
         "/lib/systemd/system/carouseld-web.socket", "/lib/systemd/system/carouseld-web-https.socket",
         "/lib/systemd/system/carouseld-web-proxy@.service",
         "/lib/systemd/system/carouseld-web.service"]
BACKLIGHT = "/sys/class/backlight/carousel-test"
DROPIN = "/etc/systemd/system/carouseld.service.d/backlight.conf"
WANTS = "/etc/systemd/system/multi-user.target.wants/carouseld.service"


def bumped(deb, out):
    """The same package rebuilt with a newer version (VERSION+1): unpacked
    and packed again with Debian's dpkg-deb, its files unchanged."""
    tree = os.path.join(out, "bumped")
    shutil.rmtree(tree, ignore_errors=True)
    subprocess.run(["dpkg-deb", "-R", deb, tree], check=True)
    control = os.path.join(tree, "DEBIAN/control")
    text = open(control).read()
    version = re.search(r"^Version: (\S+)$", text, re.M).group(1)
    newer = version + "+1"
    open(control, "w").write(text.replace(f"Version: {version}\n", f"Version: {newer}\n"))
    path = os.path.join(out, os.path.basename(deb).replace(f"_{version}_", f"_{newer}_"))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "-b", tree, path], check=True, capture_output=True)
    shutil.rmtree(tree)
    return path, version, newer


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("deb", help="the package make deb made (out/deb/carouseld_VERSION_ARCH.deb)")
    ap.add_argument("--out", default=os.path.join(REPO, "out/deb-e2e"))
    args = ap.parse_args()
    deb = os.path.abspath(args.deb)
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    # The guest sees the repository only (9p at /mnt/host): both packages go under out/.
    shutil.copy(deb, args.out)
    deb = os.path.join(args.out, os.path.basename(deb))
    newer_deb, version, newer = bumped(deb, args.out)
    name = os.path.basename(deb)
    guest = lambda path: f"{GUEST_REPO}/{os.path.relpath(path, REPO)}"  # noqa: E731
    # The host's carouseld for the reference frame, from the package itself.
    host_tree = tempfile.mkdtemp(dir=args.out)
    subprocess.run(["dpkg-deb", "-x", deb, host_tree], check=True)
    host_binary = os.path.join(host_tree, "usr/bin/carouseld")

    started = time.monotonic()
    with VM(share=REPO, xres=W, yres=H, capture_dir=args.out) as vm:
        s = Suite(vm, args.out, host_binary)
        s.figures["boot to agent ready s"] = round(time.monotonic() - started, 1)
        commands = readme_commands(readme_section("Install with apt"))

        def readme(cmd):
            """A command as the README gives it, with this package's name."""
            def norm(c):
                return re.sub(r"carouseld_[0-9][^ ]*_[a-z0-9]+\.deb", "carouseld_VERSION_ARCH.deb", c)
            if norm(cmd) not in map(norm, commands):
                raise Failure(f"README.md's apt section no longer says `{norm(cmd)}`: "
                              "update the test and the README together")
            return re.sub(r"^sudo ", "", cmd)

        def reference(index):
            """Demo picture `index` as `carouseld render` draws it with the
            shipped INI on the host."""
            folder = os.path.join(args.out, "images")
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(os.path.join(REPO, "scripts/demo/images"), folder)
            ini = open(os.path.join(host_tree, "etc/carouseld/carouseld.ini")).read()
            ini = ini.replace(f"path = {IMAGES}", f"path = {folder}")
            open(os.path.join(args.out, "host.ini"), "w").write(ini)
            png = os.path.join(args.out, f"ref-{index}.png")
            subprocess.run([host_binary, "render", "--config", os.path.join(args.out, "host.ini"),
                            "--size", f"{W}x{H}", f"--offset={index}", "--out", png], check=True, capture_output=True)
            return read_png_rgb(png)[2]

        def picture_on_screen():
            """(index, PSNR) of the screen against the picture carouselctl
            says is at rest, captured between two replies naming the same
            one (autoplay runs: apt takes longer than its interval)."""
            for _ in range(20):
                before = s.status()
                _, _, rgb = vm.screen_rgb()
                after = s.status()
                if before["state"] == after["state"] == "idle" and before["index"] == after["index"]:
                    vm.screendump(os.path.join(args.out, f"screen-{before['index']}.png"))
                    return before["index"], psnr(rgb, reference(before["index"]))
                time.sleep(0.5)
            raise Failure(f"the carousel never stayed at rest long enough for a capture: {after}")

        def exists(path):
            return s.sh(f"test -e {path} || test -L {path}").rc == 0

        def apt(cmd, timeout=300):
            t0 = time.monotonic()
            out = s.ok(f"DEBIAN_FRONTEND=noninteractive {cmd} </dev/null", timeout=timeout)
            return out, round(time.monotonic() - t0, 1)

        def installed():
            out = s.sh("dpkg-query -W -f '${Status} ${Version}' carouseld").out.strip()
            return out

        # -- install -----------------------------------------------------------

        def install():
            # A board with a panel backlight (the VM's test module), there before the install.
            s.ok("modprobe carousel_test_backlight")
            s.ok(f"mkdir -p /root/board && cp {guest(deb)} {guest(newer_deb)} /root/board/")
            cmd = readme(f"sudo apt install ./{name}")
            # apt's "no stable CLI" warning aside, the same command, answering yes.
            out, took = apt(f"cd /root/board && apt-get install -y ./{name}")
            s.figures["apt install s"] = took
            if installed() != f"install ok installed {version}":
                raise Failure(f"dpkg says {installed()!r} after `{cmd}`: {out[-800:]}")
            if "demo pictures" not in out:
                raise Failure(f"the postinst did not say where the demo pictures went: {out[-800:]}")
            return f"{took} s"

        def started_ready():
            st = s.wait_active(180)  # Type=notify: active/running only after READY=1
            if not exists(WANTS):
                raise Failure(f"{WANTS} missing: the service is not enabled")
            index, value = picture_on_screen()
            s.figures["PSNR picture on screen vs render dB"] = round(value, 1)
            if value < 30:
                raise Failure(f"the screen is not demo picture {index}: PSNR {value:.1f} dB")
            return f"PID {st['MainPID']}, enabled, picture {index}: PSNR {value:.1f} dB against render --offset {index}"

        def files_installed():
            listed = set(s.ok("dpkg -L carouseld").split())
            missing = [p for p in OWNED if p not in listed]
            if missing:
                raise Failure(f"dpkg -L lacks {missing}")
            pages = sorted(p for p in listed if p.startswith("/usr/share/man/"))
            want = ["/usr/share/man/man1/carouselctl.1.gz", "/usr/share/man/man5/carouseld.ini.5.gz",
                    "/usr/share/man/man8/carouseld.8.gz", "/usr/share/man/man8/carouseld-web.8.gz"]
            if [p for p in want if p not in pages]:
                raise Failure(f"manual pages {pages}, expected {want}")
            if s.ok("cat /var/lib/dpkg/info/carouseld.conffiles").split() != [INI]:
                raise Failure("the INI is not the package's one conffile")
            user = s.ok("getent passwd carouseld").strip()
            if not user.startswith("carouseld:") or ":/usr/sbin/nologin" not in user:
                raise Failure(f"user: {user!r}")
            # The sync's own user, not in the carouseld group (its unit adds that group alone).
            sync_user = s.ok("getent passwd carouseld-sync").strip()
            if ":/usr/sbin/nologin" not in sync_user or "carouseld" in s.ok("id -nG carouseld-sync").split():
                raise Failure(f"the sync's user: {sync_user!r}, groups {s.ok('id -nG carouseld-sync')!r}")
            pics = s.ok(f"stat -c '%U:%G %a %n' {IMAGES}/*").splitlines()
            if [p.rsplit("/", 1)[1] for p in pics] != DEMO or any(not p.startswith("carouseld:carouseld 664 ") for p in pics):
                raise Failure(f"pictures folder: {pics}")
            # The unit is the repository's, pointed at /usr: the same hardening.
            unit = s.ok("cat /lib/systemd/system/carouseld.service")
            shipped = open(os.path.join(REPO, "systemd/carouseld.service")).read().replace("/usr/local/", "/usr/")
            if unit != shipped:
                raise Failure("the installed unit differs from systemd/carouseld.service beyond its /usr paths")
            return f"{len(listed)} paths, user {user.split(':')[2]}, {len(pics)} demo pictures"

        def backlight():
            # The postinst ran board-setup: the rule applied and the device's
            # folder opened in the unit's read-only /sys.
            dropin = s.ok(f"cat {DROPIN}")
            device = s.ok(f"readlink -f {BACKLIGHT}").strip()
            if f"ReadWritePaths=-{device}" not in dropin:
                raise Failure(f"{DROPIN} does not open {device}: {dropin!r}")
            if s.status()["display"]["backlight"] != "carousel-test":
                raise Failure(f"the service found no backlight: {s.status()['display']}")
            s.ctl("brightness 40")
            s.wait("brightness 40 % of 1023 in sysfs",
                   lambda: s.ok(f"cat {BACKLIGHT}/actual_brightness").strip() == "409", 30)
            # board-setup stays for later (--mqtt once a broker is set): it finds its templates.
            r = s.sh("/usr/lib/carouseld/board-setup --mqtt")
            if r.rc != 1 or "set [mqtt] broker" not in r.err:
                raise Failure(f"board-setup --mqtt without a broker: rc {r.rc}: {r.out} {r.err}")
            return f"{device.rsplit('/', 1)[1]} writable through the hardened unit; board-setup --mqtt asks for a broker"

        def ctl_status():
            st = s.status()
            if st["count"] != len(DEMO) or s.ctl("version")["version"] != version.split("+")[0]:
                raise Failure(f"carouselctl status: {st}")
            for cmd in ("systemctl status carouseld", "sudo carouselctl status"):
                s.ok(readme(cmd))
            return f"{st['count']} pictures, index {st['index']}"

        def security():
            said = []
            for unit in ("carouseld.service", "carouseld-sync.service"):
                r = s.sh(f"systemd-analyze security {unit} --no-pager")
                m = re.search(r"Overall exposure level for " + re.escape(unit) + r": ([\d.]+) (\S+)", r.out)
                if not m:
                    raise Failure(f"no exposure level for {unit} in: {r.out[-500:]} {r.err}")
                s.figures[f"systemd-analyze security exposure of {unit}"] = f"{m.group(1)} {m.group(2)}"
                if float(m.group(1)) > MAX_EXPOSURE:
                    raise Failure(f"{unit}: exposure {m.group(1)} > {MAX_EXPOSURE}: hardening was weakened")
                props = s.ok(f"systemctl show {unit} -p MemoryMax -p TasksMax -p UMask --value").split()
                if props[0] == "infinity" or props[2] != "0027":
                    raise Failure(f"{unit}: MemoryMax, TasksMax, UMask = {props}")
                said.append(f"{unit} {m.group(1)}")
            v = s.sh("systemd-analyze verify carouseld.service carouseld-sync.service")
            if v.rc != 0 or (v.out + v.err).strip():
                raise Failure(f"systemd-analyze verify: {(v.out + v.err).strip()}")
            return f"exposure {', '.join(said)} (bound {MAX_EXPOSURE}), limits set, verify clean"

        # -- upgrade -------------------------------------------------------------

        def upgrade_keeps_ini():
            # [autoplay] interval (the [sync] section has one too).
            s.ok(f"sed -i '/^\\[autoplay\\]/,/^\\[/ s/^interval = .*/interval = 7/' {INI}")
            if s.ok(f"grep -c '^interval = 7$' {INI}").strip() != "1":
                raise Failure("the test's edit of [autoplay] interval did not take")
            # The layout of versions where both services ran as carouseld: secrets
            # root:carouseld 0640 (as their README said), the sync's state the daemon's user's.
            # Each must go to the user that reads it, or the restarted daemon would refuse
            # its password (exit 2) and the sync its key.
            s.ok(f"sed -i 's|^broker =$|broker = mqtt://127.0.0.1:1883|; s|^username =$|username = frame|; s|^password_file =$|password_file = /etc/carouseld/mqtt-password|;"
                 f" s|^source =$|source = immich|; s|^server =$|server = https://photos.example.com|;"
                 f" s|^api_key_file =$|api_key_file = /etc/carouseld/immich.key|; s|^albums =$|albums = Frame|' {INI}"
                 " && echo pw > /etc/carouseld/mqtt-password && echo key > /etc/carouseld/immich.key"
                 " && chown root:carouseld /etc/carouseld/mqtt-password /etc/carouseld/immich.key"
                 " && chmod 0640 /etc/carouseld/mqtt-password /etc/carouseld/immich.key"
                 " && mkdir -p /var/lib/carouseld-sync && echo '{}' > /var/lib/carouseld-sync/manifest.json"
                 " && chown -R carouseld:carouseld /var/lib/carouseld-sync && chmod 0755 /var/lib/carouseld-sync")
            edited = s.ok(f"sha256sum {INI}")
            pid = s.show()["MainPID"]
            out, took = apt(f"cd /root/board && apt-get install -y ./{os.path.basename(newer_deb)}")
            s.figures["apt upgrade s"] = took
            if installed() != f"install ok installed {newer}":
                raise Failure(f"dpkg says {installed()!r} after the upgrade: {out[-800:]}")
            if s.ok(f"sha256sum {INI}") != edited:
                raise Failure(f"the upgrade replaced the edited INI: {s.ok(f'grep ^interval {INI}')}")
            st = s.wait_active(180)
            if st["MainPID"] == pid:
                raise Failure("the service was not restarted into the new version")
            if s.status()["autoplay"]["interval"] != 7:
                raise Failure(f"the restarted service does not run the edited INI: {s.status()}")
            owners = s.ok("stat -c '%n %U:%G %a' /etc/carouseld/mqtt-password /etc/carouseld/immich.key"
                          " /var/lib/carouseld-sync /var/lib/carouseld-sync/manifest.json").splitlines()
            want = ["/etc/carouseld/mqtt-password carouseld:carouseld 600", "/etc/carouseld/immich.key carouseld-sync:carouseld-sync 600",
                    "/var/lib/carouseld-sync carouseld-sync:carouseld-sync 750"]
            if owners[:3] != want or not owners[3].startswith("/var/lib/carouseld-sync/manifest.json carouseld-sync:carouseld-sync "):
                raise Failure(f"after the upgrade: {owners}, expected {want} and the manifest carouseld-sync's")
            if "secrets: [sync] api_key_file /etc/carouseld/immich.key now carouseld-sync:carouseld-sync 600" not in out:
                raise Failure(f"the upgrade did not say it gave the key to carouseld-sync: {out[-800:]}")
            s.ok(f"carouseld check-config {INI}")
            return (f"{version} -> {newer} in {took} s, restarted (PID {pid} -> {st['MainPID']}), interval = 7 kept; "
                    f"secrets and the sync's state handed to their users: {'; '.join(owners)}")

        # -- remove and purge ------------------------------------------------------

        def remove():
            out, took = apt(readme("sudo apt remove carouseld") + " -y")
            s.figures["apt remove s"] = took
            if not installed().startswith("deinstall ok config-files"):
                raise Failure(f"dpkg says {installed()!r} after remove")
            gone = [p for p in OWNED if p != INI and exists(p)]
            if gone:
                raise Failure(f"still there after remove: {gone}")
            kept = [p for p in (INI, STATE, IMAGES, "/var/lib/carouseld-sync") if not exists(p)]
            if kept:
                raise Failure(f"remove took what it must keep: {kept}")
            if s.sh("getent passwd carouseld").rc != 0:
                raise Failure("remove deleted the user")
            if s.ok(f"grep -c '^interval = 7$' {INI}").strip() != "1":
                raise Failure("the edited INI changed on remove")
            if s.sh("pgrep -x carouseld").rc == 0:
                raise Failure("carouseld still runs after remove")
            return f"{took} s: stopped; INI, {STATE}, user kept"

        def purge():
            # A picture of "yours" beside the demo ones: a purge must not lose it.
            s.ok(f"cp {GUEST_REPO}/scripts/demo/images/02-sunset.jpg {IMAGES}/mine.jpg")
            out, took = apt(readme("sudo apt purge carouseld") + " -y")
            s.figures["apt purge s"] = took
            if installed():
                raise Failure(f"dpkg still knows the package: {installed()!r}")
            left = [p for p in ("/etc/carouseld", "/var/lib/carouseld-sync", "/var/lib/carouseld-web", WANTS, DROPIN,
                                "/etc/systemd/system/carouseld.service.d",
                                "/var/lib/systemd/deb-systemd-helper-enabled/carouseld.service.dsh-also")
                    if exists(p)]
            if left:
                raise Failure(f"still there after purge: {left}")
            for db in ("passwd", "group"):
                for name in ("carouseld", "carouseld-sync", "carouseld-web"):
                    if s.sh(f"getent {db} {name}").rc == 0:
                        raise Failure(f"the {db} entry {name} survived the purge")
            rest = s.ok(f"find {STATE} | sort").split()
            if rest != [STATE, IMAGES, f"{IMAGES}/mine.jpg"]:
                raise Failure(f"after purge {STATE} holds {rest}; expected only your picture")
            if "kept " + IMAGES not in out:
                raise Failure(f"the purge did not say it kept {IMAGES}: {out[-500:]}")
            return f"{took} s: configuration, state, user and group gone; {IMAGES}/mine.jpg kept"

        def install_again():
            s.ok(f"rm -rf {STATE}")
            out, took = apt(f"cd /root/board && apt-get install -y ./{name}")
            if installed() != f"install ok installed {version}":
                raise Failure(f"dpkg says {installed()!r}: {out[-800:]}")
            s.wait_active(180)
            st = s.status()
            if st["count"] != len(DEMO):
                raise Failure(f"status after installing again: {st}")
            return f"{took} s, {st['count']} pictures"

        for title, fn in [
            ("apt install ./carouseld_*.deb as the README says", install),
            ("the service enabled and started: READY=1, a demo picture on screen", started_ready),
            ("the files, the conffile, the user and the demo pictures, as installed", files_installed),
            ("carouselctl status answers", ctl_status),
            ("the backlight opened to the service by the postinst's board-setup", backlight),
            ("systemd-analyze security and verify", security),
            ("an upgrade to a newer rebuilt package keeps the edited INI and restarts", upgrade_keeps_ini),
            ("apt remove: stopped, files gone, configuration, state and user kept", remove),
            ("apt purge: configuration, state, user gone, your picture kept", purge),
            ("installing again works", install_again),
        ]:
            s.check(title, fn)
    s.figures["total s"] = round(time.monotonic() - started, 1)
    print(json.dumps(s.figures, indent=1))
    for title, why in s.failed:
        print(f"FAILED {title}: {why}")
    print(f"deb: {len(s.passed)} passed, {len(s.failed)} failed")
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
