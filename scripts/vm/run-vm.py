#!/usr/bin/env python3
"""Boots the carouseld test VM (assets from build-assets.sh) from the command line.

  run-vm.py [options] -- COMMAND...   boot, run COMMAND in the guest (through
                                      /bin/sh -c), print its output, power off;
                                      exits with the command's status
  run-vm.py [options] --console       boot with an autologin root shell on the
                                      serial console, here (Ctrl-A X quits QEMU)

The repository is shared at /mnt/host in the guest by default, so a freshly
built binary runs there without rebuilding the image, e.g.
  scripts/vm/run-vm.py -- /mnt/host/.build/release/carouseld --check-config
For test drivers, use the Python API in vmlib.py (class VM).
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmlib import REPO, VM, VMError  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--assets", help="build-assets.sh output folder (default .build-vm/out)")
    p.add_argument("--share", default=REPO, help="host folder shared at /mnt/host (default: the repo)")
    p.add_argument("--no-share", action="store_true")
    p.add_argument("--res", default="1280x800", help="display resolution WxH (EDID preferred mode)")
    p.add_argument("--display", default="bochs", choices=["bochs", "vga", "virtio-gpu", "none"])
    p.add_argument("--pointer", choices=["virtio", "usb"], help="add an absolute pointer device")
    p.add_argument("--memory", type=int, default=1024, help="MiB")
    p.add_argument("--cpus", type=int, default=1)
    p.add_argument("--timeout", type=float, default=600, help="command time-out in the guest, s")
    p.add_argument("--screendump", metavar="PNG", help="save the screen after the command")
    p.add_argument("--workdir", help="keep sockets, logs and captures here")
    p.add_argument("--cmdline", default="", help="extra kernel command line")
    p.add_argument("--console", action="store_true", help="interactive serial console")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command and not a.console:
        p.error("nothing to do: give a COMMAND after -- or --console")
    xres, yres = (int(v) for v in a.res.lower().split("x"))

    vm = VM(assets=a.assets, share=None if a.no_share else a.share, xres=xres, yres=yres,
            display=None if a.display == "none" else a.display, pointer=a.pointer,
            memory_mb=a.memory, cpus=a.cpus, workdir=a.workdir, login=a.console,
            console=a.console, cmdline=a.cmdline, verbose=a.verbose)
    t0 = time.monotonic()
    try:
        info = vm.start()
        print("run-vm: guest ready in %.1f s (kernel %s, guest uptime %.1f s)"
              % (time.monotonic() - t0, info["kernel"], info["uptime"]), file=sys.stderr)
        if a.console:
            print("run-vm: serial console; `systemctl poweroff` or Ctrl-A X to leave", file=sys.stderr)
            vm.proc.wait()
            return 0
        r = vm.run(" ".join(command), timeout=a.timeout)
        sys.stdout.buffer.write(r.stdout)
        sys.stderr.buffer.write(r.stderr)
        if r.timed_out:
            print("run-vm: command timed out after %.0f s" % a.timeout, file=sys.stderr)
        if a.screendump:
            vm.screendump(a.screendump)
            print("run-vm: screen saved to %s" % a.screendump, file=sys.stderr)
        vm.shutdown()
        return 124 if r.timed_out else (r.rc if r.rc >= 0 else 128 - r.rc)
    except VMError as e:
        print("run-vm: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        vm.close()


if __name__ == "__main__":
    sys.exit(main())
