#!/usr/bin/env bash
# Builds what the QEMU test VM boots: an uncompressed Debian kernel (vmlinux,
# booted through the PVH entry by qboot), a tiny busybox initramfs that loads
# the virtio/ext4 modules and switches to the root image, and an ext4 root
# image made from a debootstrapped Debian bookworm with systemd + udev and the
# runtime libraries of carouseld.
#
#   scripts/vm/build-assets.sh [--cache DIR] [--force] [--peers]
#   (env VM_KERNEL_PACKAGE=linux-image-6.1.0-NN-amd64 pins the kernel)
#
# --peers also builds CACHE/peers-out/: the same kernel and initramfs with a
# root image that has Debian's fbi and mpv too, for the benchmarks against
# them (Tests/Benchmarks/peers.py, video_peers.py) only. The image the tests
# boot stays as it is: mpv pulls ~200 packages (ffmpeg, mesa), which no test
# needs.
#
# Idempotent and cached: each stage writes a stamp holding the hash of its own
# code and inputs (the stage function's text, package lists, the guest files),
# so editing a stage rebuilds that stage and the ones after it, and nothing
# else. The result is in CACHE/out/ (manifest.json names the files); run-vm.py
# and vmlib.py read it from there. Must run as root (debootstrap, apt-get).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache="$repo/.build-vm"
force=0
peers=0
while (($#)); do
  case "$1" in
    --cache) cache=$2; shift 2 ;;
    --cache=*) cache=${1#--cache=}; shift ;;
    --force) force=1; shift ;;
    --peers) peers=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "build-assets: unknown argument: $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
# One build at a time per cache (a test driver and a smoke test may race).
exec 9>"$cache/.lock"
flock 9

log() { printf '[build-assets %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { printf 'build-assets: error: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap and apt-get need it)"

SUITE=bookworm

# Host tools. qemu-system-x86 brings qemu-system-data, which ships qboot.rom
# (Debian has no separate qboot package).
HOST_PACKAGES=(qemu-system-x86 debootstrap e2fsprogs kmod busybox-static python3 make)  # make: the test backlight module

# Guest packages, installed by debootstrap --include (it resolves their
# dependencies, without Recommends).
GUEST_PACKAGES=(
  systemd udev kmod                           # init, device manager (libinput needs udev's tags)
  libdrm2 libinput10 libudev1                 # display and input, for carouseld
  libjpeg62-turbo libpng16-16 libwebp7 libpixman-1-0   # image decoding / compositing
  libwebpdemux2 libgif7 libheif1              # animated WebP, GIF, HEIF/AVIF (libheif1 brings its codecs)
  libharfbuzz0b libfreetype6 libfontconfig1 fonts-dejavu-core   # [overlay] captions and clock: shaping, glyphs, fonts
  libmosquitto1                               # [mqtt], the MQTT client
  libgpiod2                                   # [power] presence = gpio:..., on gpio-sim's lines
  libcurl4                                    # carouseld sync's HTTP (opened with dlopen by the sync only)
  # [video] clips (issue 29): FFmpeg's demuxers, decoders and scaler, opened
  # with dlopen by the daemon at the first clip. libavcodec links every codec
  # library Debian builds it with (x265, SVT-AV1, rav1e, librsvg...), hence
  # most of what these pull in; none can be left out without dpkg breaking.
  libavformat59 libavcodec59 libswscale6 libavutil57
  mosquitto mosquitto-clients                 # a broker in the guest for the service test's MQTT run (not started at boot)
  libevdev2 libmtdev1                         # libinput's own, listed for clarity
  python3 python3-evdev                       # agent, uinput_touch.py (stdlib); evdev for tests
  procps libdrm-tests                         # ps/top for tests and debugging, modetest
)
# libinput-tools depends on GTK for its debug-gui, which would triple the
# image. Its command-line tools only need libinput/libudev/libevdev, so only
# these files are unpacked from the .deb into the image.
LIBINPUT_TOOLS_FILES=(
  usr/bin/libinput
  usr/libexec/libinput/libinput-debug-events
  usr/libexec/libinput/libinput-list-devices
  usr/libexec/libinput/libinput-record
  usr/libexec/libinput/libinput-quirks
)

# The peers the benchmarks (Tests/Benchmarks/) measure carouseld against,
# installed (with their dependencies, without Recommends) into a copy of the
# base for the peers image only (--peers).
PEER_PACKAGES=(fbi mpv)

# Kernel modules in the root image (with their dependencies). udev loads the
# device drivers by modalias for the devices QEMU provides; shipping only these
# is also what keeps udev from loading useless drivers (floppy, pcspkr,
# ata_piix, kvm...) for the emulated chipset: they are simply not there.
GUEST_MODULES=(
  bochs virtio-gpu                 # DRM drivers: bochs-display / VGA, virtio-gpu-pci
  uinput evdev                     # synthetic touchscreen, /dev/input/event*
  virtio_console                   # virtio-serial ports (agent channel)
  9p 9pnet_virtio                  # shared host folder
  virtio_input                     # virtio-tablet-pci pointer
  xhci_pci usbhid hid_generic      # qemu-xhci + usb-tablet pointer
  vfb                              # a virtual framebuffer at any depth ([display] backend = fbdev at 16 bits)
  configfs                         # gpio-sim's chips are made through configfs (the module is built below)
  virtio_net                       # the service test's NIC (QEMU user network): the page reached from the host
  virtio_pci virtio_blk ext4 virtio_rng   # also in the initramfs (depmod-consistent set)
)
# Modules the initramfs insmods: what it takes to reach the root filesystem,
# and virtio_rng. Without a hardware RNG, PVH-booted 6.1 under TCG reaches
# "crng init done" only seconds into userspace, and every early reader of
# /dev/urandom or getrandom() (python's hash seed, Swift's hashing, systemd)
# waits for it. With QEMU's virtio-rng-pci fed from the host, it is at once.
BOOT_MODULES=(virtio_pci virtio_blk ext4 virtio_rng)

# ---------------------------------------------------------------------------
# helpers

apt_get() {
  # Another apt may be running (e.g. a parallel setup step): wait for the lock.
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@"
}

# hash of the named functions' source plus extra strings: a stage's identity.
stage_hash() {
  local fns=() extra=()
  while (($#)); do [ "$1" = -- ] && { shift; extra=("$@"); break; }; fns+=("$1"); shift; done
  { declare -f "${fns[@]}"; printf '%s\n' "${extra[@]}"; } | sha256sum | cut -c1-16
}
stamp_ok() { [ "$force" -eq 0 ] && [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

# The Debian mirror apt is configured with (either sources format), via apt's
# own view of its index targets: no host is hard-coded here.
debian_mirror() {
  apt-get indextargets --format '$(SITE) $(RELEASE) $(COMPONENT) $(LABEL)' 'Identifier: Packages' \
    | awk -v s="$SUITE" '$2 == s && $3 == "main" && $4 == "Debian" { print $1; exit }'
}

# ---------------------------------------------------------------------------
# stage 0: host packages

install_host_packages() {
  local missing=() p
  for p in "${HOST_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "installing host packages: ${missing[*]}"
  apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { apt_get update -qq && apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

# ---------------------------------------------------------------------------
# stage 1: kernel (vmlinux + module subset)

kernel_package() {
  # The kernel the linux-image-amd64 metapackage currently points to, unless
  # VM_KERNEL_PACKAGE names one (e.g. to pin linux-image-6.1.0-56-amd64).
  if [ -n "${VM_KERNEL_PACKAGE:-}" ]; then echo "$VM_KERNEL_PACKAGE"; return; fi
  local pkg
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-6\.1\.[0-9.]*-[0-9]+-amd64$/ {print $2; exit}')
  if [ -z "$pkg" ]; then
    apt_get update -qq
    pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-6\.1\.[0-9.]*-[0-9]+-amd64$/ {print $2; exit}')
  fi
  [ -n "$pkg" ] || die "cannot find Debian's linux-image-6.1.*-amd64 package (apt-cache depends linux-image-amd64)"
  echo "$pkg"
}

# Unpacks the bzImage's xz payload into an ELF vmlinux and checks that it has
# the PVH entry note (Xen note type 18, XEN_ELFNOTE_PHYS32_ENTRY): QEMU only
# boots an ELF kernel through -kernel if that note is there.
extract_vmlinux() {
  python3 - "$1" "$2" <<'EOF'
import lzma, struct, sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
magic = b"\xfd7zXZ\x00"
pos = data.find(magic)
while pos >= 0:
    try:
        out = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[pos:])
    except lzma.LZMAError:
        out = b""
    if out[:4] == b"\x7fELF":
        break
    pos = data.find(magic, pos + 1)
else:
    sys.exit("no xz-compressed ELF payload in %s" % src)
# Walk the ELF64 program headers' PT_NOTE segments looking for the PVH note.
phoff, = struct.unpack_from("<Q", out, 0x20)
phentsize, phnum = struct.unpack_from("<HH", out, 0x36)
pvh = False
for i in range(phnum):
    p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", out, phoff + i * phentsize)
    if p_type != 4:
        continue
    off, end = p_offset, p_offset + p_filesz
    while off + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from("<III", out, off)
        name = out[off + 12: off + 12 + namesz].rstrip(b"\0")
        if name == b"Xen" and ntype == 18:
            pvh = True
        off += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
if not pvh:
    sys.exit("vmlinux has no PVH entry note (CONFIG_PVH): cannot boot it with qboot")
open(dst, "wb").write(out)
EOF
}

# QEMU emulates no panel with a backlight: the power tests load a small
# module of our own (guest/test-backlight) that registers a device of the
# kernel's backlight class. Built against this kernel's headers (Debian's
# linux-headers-KVER, the same source package as the image).
build_test_backlight() {
  local kver=$1 out=$2 src
  if [ ! -d "/usr/src/linux-headers-$kver" ]; then
    log "kernel: installing linux-headers-$kver (for the test backlight module)"
    apt_get install -y -qq --no-install-recommends "linux-headers-$kver" >/dev/null \
      || { apt_get update -qq && apt_get install -y -qq --no-install-recommends "linux-headers-$kver" >/dev/null; } \
      || die "cannot install linux-headers-$kver"
  fi
  src=$(mktemp -d)
  cp "$here/guest/test-backlight/Kbuild" "$here/guest/test-backlight/carousel_test_backlight.c" "$src/"
  make -s -C "/usr/src/linux-headers-$kver" M="$src" modules >"$src/build.log" 2>&1 \
    || { cat "$src/build.log" >&2; die "the test backlight module does not build"; }
  install -D -m 0644 "$src/carousel_test_backlight.ko" "$out/carousel_test_backlight.ko"
  rm -rf "$src"
}

# gpio-sim, a simulated GPIO chip driven through sysfs, for the presence
# sensor's gpio: path on the real kernel: Debian's 6.1 does not build it, so
# it is built out of tree from the linux-source-6.1 of the kernel's own
# version, with kernel/irq/irq_sim.c (CONFIG_IRQ_SIM is off too) linked into
# the same module. irq_sim calls irq_to_desc(), which the kernel does not
# export: generic_handle_irq() reaches the same handle_simple_irq.
build_gpio_sim() {
  local kver=$1 pkgver=$2 out=$3 src d
  src=$(mktemp -d)
  d=$(mktemp -d)
  (cd "$d" && apt_get -o APT::Sandbox::User=root download "linux-source-6.1=$pkgver" >/dev/null) \
    || die "cannot download linux-source-6.1=$pkgver (for gpio-sim)"
  dpkg-deb --fsys-tarfile "$d"/linux-source-6.1_*.deb | tar -x -C "$d" ./usr/src/linux-source-6.1.tar.xz
  tar -xJf "$d/usr/src/linux-source-6.1.tar.xz" -C "$d" linux-source-6.1/drivers/gpio/gpio-sim.c \
    linux-source-6.1/drivers/gpio/gpiolib.h linux-source-6.1/kernel/irq/irq_sim.c
  cp "$d/linux-source-6.1/drivers/gpio/gpio-sim.c" "$src/gpio-sim-main.c"
  cp "$d/linux-source-6.1/drivers/gpio/gpiolib.h" "$d/linux-source-6.1/kernel/irq/irq_sim.c" "$src/"
  rm -rf "$d"
  grep -q 'handle_simple_irq(irq_to_desc(irqnum))' "$src/irq_sim.c" || die "gpio-sim: irq_sim.c changed, check the irq_to_desc patch"
  sed -i 's/handle_simple_irq(irq_to_desc(irqnum))/generic_handle_irq(irqnum)/' "$src/irq_sim.c"
  cp "$here/guest/gpio-sim/Kbuild" "$src/"
  make -s -C "/usr/src/linux-headers-$kver" M="$src" modules >"$src/build.log" 2>&1 \
    || { cat "$src/build.log" >&2; die "the gpio-sim module does not build"; }
  install -D -m 0644 "$src/gpio-sim.ko" "$out/gpio-sim.ko"
  rm -rf "$src"
}

build_kernel() {
  local pkg=$1 dir=$cache/kernel tmp=$cache/kernel.tmp
  rm -rf "$tmp"; mkdir -p "$tmp/deb" "$cache/debs"
  log "kernel: downloading $pkg"
  # Download as root into our cache (apt's _apt sandbox user cannot write there).
  (cd "$cache/debs" && apt_get -o APT::Sandbox::User=root download "$pkg" >/dev/null) \
    || { apt_get update -qq && (cd "$cache/debs" && apt_get -o APT::Sandbox::User=root download "$pkg" >/dev/null); }
  local deb
  deb=$(ls -t "$cache/debs/${pkg}_"*.deb | head -1)
  dpkg-deb -x "$deb" "$tmp/deb"
  local kver
  kver=$(ls "$tmp/deb/lib/modules")
  log "kernel: $kver: extracting vmlinux"
  extract_vmlinux "$tmp/deb/boot/vmlinuz-$kver" "$tmp/vmlinux"
  cp "$tmp/deb/boot/config-$kver" "$tmp/config"
  # The .deb ships no modules.dep: compute it once on the full tree, then copy
  # the closure of the wanted modules and index the subset again.
  depmod -b "$tmp/deb" "$kver"
  local m f
  mkdir -p "$tmp/modules/lib/modules/$kver"
  for m in "${GUEST_MODULES[@]}"; do
    modprobe -d "$tmp/deb" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
  done | sort -u | while read -r f; do
    local rel=${f#"$tmp/deb/"}
    mkdir -p "$tmp/modules/$(dirname "$rel")"
    cp "$f" "$tmp/modules/$rel"
  done
  cp "$tmp/deb/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} "$tmp/modules/lib/modules/$kver/"
  build_test_backlight "$kver" "$tmp/modules/lib/modules/$kver/extra"
  build_gpio_sim "$kver" "$(dpkg-deb -f "$deb" Version)" "$tmp/modules/lib/modules/$kver/extra"
  depmod -b "$tmp/modules" "$kver"
  # Boot modules for the initramfs, in dependency order (crc32c-intel fails
  # without SSE4.2 under TCG's default CPU; crc32c_generic then serves ext4).
  for m in "${BOOT_MODULES[@]}"; do
    modprobe -d "$tmp/deb" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
  done | awk '!seen[$0]++' | sed "s|^$tmp/deb/lib/modules/$kver/||" >"$tmp/boot-modules"
  echo "$kver" >"$tmp/version"
  rm -rf "$tmp/deb" "$dir"
  mv "$tmp" "$dir"
}

# ---------------------------------------------------------------------------
# stage 2: base root filesystem (debootstrap)

build_base() {
  local mirror=$1 dir=$cache/base tmp=$cache/base.tmp
  rm -rf "$tmp"; mkdir -p "$cache/debs"
  log "base: debootstrap $SUITE from $mirror (${#GUEST_PACKAGES[@]} extra packages)"
  debootstrap --variant=minbase --include="$(IFS=,; echo "${GUEST_PACKAGES[*]}")" \
    --cache-dir="$cache/debs" "$SUITE" "$tmp" "$mirror" >"$cache/debootstrap.log" 2>&1 \
    || { tail -30 "$cache/debootstrap.log" >&2; die "debootstrap failed (log: $cache/debootstrap.log)"; }
  # libinput's command-line tools without their GTK dependency (see above).
  local d
  d=$(mktemp -d)
  (cd "$d" && apt_get -o APT::Sandbox::User=root download libinput-tools >/dev/null)
  dpkg-deb -x "$d"/libinput-tools_*.deb "$d/x"
  local f
  for f in "${LIBINPUT_TOOLS_FILES[@]}"; do install -D -m 0755 "$d/x/$f" "$tmp/$f"; done
  rm -rf "$d"
  # Nothing reads docs, man pages, translations or apt's lists in the VM.
  rm -rf "$tmp"/usr/share/{doc,man,info,locale}/* "$tmp"/var/cache/apt/* "$tmp"/var/lib/apt/lists/* \
    "$tmp"/var/cache/debconf/*-old "$tmp"/var/log/*.log
  rm -rf "$dir"; mv "$tmp" "$dir"
}

# ---------------------------------------------------------------------------
# stage 3: image (kernel + initramfs + rootfs.ext4), cheap, rebuilt on any
# change of the guest files

build_initramfs() {
  local out=$1 kdir=$cache/kernel t
  t=$(mktemp -d)
  mkdir -p "$t"/{bin,dev,proc,sys,newroot,lib/modules}
  cp /bin/busybox "$t/bin/busybox"
  local m
  while read -r m; do
    mkdir -p "$t/lib/modules/$(dirname "$m")"
    cp "$kdir/modules/lib/modules/$(cat "$kdir/version")/$m" "$t/lib/modules/$m"
  done <"$kdir/boot-modules"
  cp "$kdir/boot-modules" "$t/modules"
  install -m 0755 "$here/guest/initramfs-init" "$t/init"
  # Uncompressed newc cpio: nothing to decompress under TCG, it is only ~4 MB.
  (cd "$t" && find . | LC_ALL=C sort | busybox cpio -o -H newc 2>/dev/null) >"$out"
  rm -rf "$t"
}

configure_rootfs() {
  local r=$1 kver=$2
  # Kernel modules.
  cp -a "$cache/kernel/modules/lib/modules" "$r/lib/"
  printf '%s\n' bochs uinput evdev >"$r/etc/modules-load.d/carousel-vm.conf"

  echo carousel-vm >"$r/etc/hostname"
  printf '127.0.0.1 localhost\n127.0.1.1 carousel-vm\n' >"$r/etc/hosts"
  : >"$r/etc/fstab"
  sed -i 's/^root:[^:]*:/root::/' "$r/etc/shadow"   # passwordless root on the serial console
  # A fixed machine-id keeps systemd from treating every boot as a first boot.
  echo 0123456789abcdef0123456789abcdef >"$r/etc/machine-id"
  mkdir -p "$r/mnt/host" "$r/var/lib/systemd"

  # Journal in memory only; nothing to flush to disk.
  mkdir -p "$r/etc/systemd/journald.conf.d"
  printf '[Journal]\nStorage=volatile\nRuntimeMaxUse=32M\n' >"$r/etc/systemd/journald.conf.d/vm.conf"

  # Boot target: our own, so nothing that multi-user.target collects runs.
  install -m 0644 "$here/guest/vm.target" "$r/etc/systemd/system/vm.target"
  install -m 0644 "$here/guest/vm-agent.service" "$r/etc/systemd/system/vm-agent.service"
  ln -sf vm.target "$r/etc/systemd/system/default.target"
  mkdir -p "$r/etc/systemd/system/vm.target.wants"
  ln -sf ../vm-agent.service "$r/etc/systemd/system/vm.target.wants/vm-agent.service"

  # Cheaper udev coldplug (reasons in the file).
  install -D -m 0644 "$here/guest/udev-trigger.conf" \
    "$r/etc/systemd/system/systemd-udev-trigger.service.d/vm.conf"

  # Units that cost boot time under TCG and serve no purpose in a throw-away
  # VM (the disk is a snapshot, there is no network, no login, no clock sync).
  local u
  for u in \
    getty@.service serial-getty@ttyS0.service autovt@.service console-getty.service \
    systemd-logind.service systemd-update-utmp.service systemd-update-utmp-runlevel.service \
    systemd-journal-flush.service systemd-random-seed.service systemd-remount-fs.service \
    systemd-fsck-root.service systemd-firstboot.service systemd-machine-id-commit.service \
    systemd-hwdb-update.service systemd-journal-catalog-update.service systemd-update-done.service \
    ldconfig.service systemd-sysusers.service systemd-pstore.service systemd-timesyncd.service \
    systemd-ask-password-console.path systemd-ask-password-wall.path \
    systemd-journald-audit.socket systemd-initctl.socket \
    e2scrub_all.timer e2scrub_reap.service fstrim.timer apt-daily.timer apt-daily-upgrade.timer \
    dpkg-db-backup.timer systemd-tmpfiles-clean.timer \
    proc-sys-fs-binfmt_misc.automount systemd-binfmt.service dev-hugepages.mount dev-mqueue.mount \
    sys-kernel-tracing.mount sys-fs-fuse-connections.mount sys-kernel-config.mount \
    modprobe@fuse.service modprobe@loop.service modprobe@dm_mod.service modprobe@efi_pstore.service \
    modprobe@configfs.service modprobe@drm.service; do
    ln -sf /dev/null "$r/etc/systemd/system/$u"
  done
  # Generators that only look for things this VM does not have. (The debug
  # generator stays: it implements systemd.wants=/systemd.mask= on the kernel
  # command line, which run-vm.py uses for an optional serial login.)
  mkdir -p "$r/etc/systemd/system-generators"
  local g
  for g in systemd-getty-generator systemd-gpt-auto-generator systemd-hibernate-resume-generator \
    systemd-bless-boot-generator systemd-sysv-generator systemd-rc-local-generator \
    systemd-cryptsetup-generator systemd-veritysetup-generator systemd-integritysetup-generator \
    systemd-run-generator systemd-system-update-generator; do
    ln -sf /dev/null "$r/etc/systemd/system-generators/$g"
  done
  # serial-getty is masked above; run-vm.py --login unmasks it via the kernel
  # command line (systemd.unmask is not a thing), so give it its own name.
  install -m 0644 "$r/lib/systemd/system/serial-getty@.service" "$r/etc/systemd/system/vm-login@.service"
  sed -i 's|^ExecStart=.*|ExecStart=-/sbin/agetty --autologin root --keep-baud 115200 %I $TERM|' \
    "$r/etc/systemd/system/vm-login@.service"

  # Guest side of the harness.
  install -D -m 0755 "$here/guest/vm-agent.py" "$r/usr/local/lib/carousel-vm/vm-agent.py"
  install -D -m 0755 "$here/guest/vm-request" "$r/usr/local/bin/vm-request"
  install -D -m 0755 "$here/guest/vm-hotplug" "$r/usr/local/bin/vm-hotplug"
  install -D -m 0644 "$here/guest/90-vm-hotplug.rules" "$r/etc/udev/rules.d/90-vm-hotplug.rules"
  install -D -m 0755 "$here/uinput_touch.py" "$r/usr/local/bin/uinput_touch.py"
  echo "$kver" >"$r/etc/carousel-vm-kernel"
}

# A bootable asset folder DEST (rootfs.ext4, initrd.cpio, vmlinux,
# manifest.json) from the root tree SRC (a debootstrapped base).
assemble_image() {
  local src=$1 tmp=$2 kver
  kver=$(cat "$cache/kernel/version")
  rm -rf "$tmp"; mkdir -p "$tmp"
  log "image: root filesystem from ${src##*/}"
  cp -a "$src" "$tmp/root"
  configure_rootfs "$tmp/root" "$kver"
  # Room for what tests write (the disk is used with snapshot=on, so the
  # image itself never changes).
  local used_mb size_mb
  used_mb=$(du -sm "$tmp/root" | cut -f1)
  # 1 GiB: the service test installs the dist bundle twice, with carouseld-web
  # (76 MB stripped: Hummingbird and NIO) in its tarball, its folder and
  # /usr/local/bin, and a temporary copy for each replaced binary; 256 MB
  # ran out. The image is sparse: the room costs nothing until written.
  size_mb=$((used_mb + used_mb / 4 + 1024))
  # No journal: the image is only ever used as a snapshot, and jbd2 commits
  # are pure overhead under TCG.
  mkfs.ext4 -q -F -L carousel-root -O ^has_journal -E root_owner=0:0 \
    -d "$tmp/root" "$tmp/rootfs.ext4" "${size_mb}M" >/dev/null
  rm -rf "$tmp/root"
  log "image: initramfs"
  build_initramfs "$tmp/initrd.cpio"
  cp "$cache/kernel/vmlinux" "$tmp/vmlinux"
  cp "$cache/kernel/config" "$tmp/config"
  python3 - "$tmp/manifest.json" "$kver" "$size_mb" <<'EOF'
import json, sys
path, kver, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
json.dump({
    "kernel": "vmlinux", "initrd": "initrd.cpio", "rootfs": "rootfs.ext4",
    "kernel_version": kver, "rootfs_mb": size,
    "firmware": "/usr/share/qemu/qboot.rom",
    # mitigations=off: page-table isolation etc. make every syscall a TLB
    # flush, very costly under TCG. vt.global_cursor_default=0: a blinking
    # console cursor would count as screen changes in captures.
    # cryptomgr.notests: no crypto self-tests at boot. panic=-1 + QEMU's
    # -no-reboot: a guest panic ends QEMU at once instead of hanging.
    "cmdline": "console=ttyS0,115200 root=/dev/vda rw init=/lib/systemd/systemd "
               "mitigations=off vt.global_cursor_default=0 cryptomgr.notests "
               "8250.nr_uarts=1 panic=-1 quiet loglevel=4",
}, open(path, "w"), indent=1)
EOF
}

# Moves the built folder TMP to CACHE/NAME-STAMP and points the symlink
# CACHE/NAME at it, atomically: VMs already running keep their (open) files,
# a VM starting meanwhile sees either the old set or the new one, never a
# half-built folder. Older CACHE/NAME-* folders go.
publish_image() {
  local name=$1 stamp=$2 tmp=$3 d
  mv "$tmp" "$cache/$name-$stamp"
  ln -sfn "$name-$stamp" "$cache/$name.new"
  [ -L "$cache/$name" ] || rm -rf "${cache:?}/$name"
  mv -T "$cache/$name.new" "$cache/$name"
  for d in "$cache/$name"-*; do [ "$d" = "$cache/$name-$stamp" ] || rm -rf "$d"; done
}

build_image() {
  local stamp=$1
  assemble_image "$cache/base" "$cache/out.tmp"
  publish_image out "$stamp" "$cache/out.tmp"
}

# ---------------------------------------------------------------------------
# optional stages (--peers): the base plus fbi and mpv, and its image

build_peers_base() {
  local dir=$cache/peers-base tmp=$cache/peers-base.tmp
  rm -rf "$tmp"; mkdir -p "$cache/debs/partial"
  # The host's apt resolves the packages against the base's own dpkg
  # database (Dir::State::status), so the list is exactly what the base
  # lacks; the .debs are cached with debootstrap's in CACHE/debs. The host
  # runs the same suite (bookworm) as the guest.
  local opts=(-o "Dir::State::status=$cache/base/var/lib/dpkg/status"
              -o "Dir::Cache::archives=$cache/debs" -o APT::Sandbox::User=root
              --no-install-recommends)
  local plan
  plan=$(apt_get -s "${opts[@]}" install "${PEER_PACKAGES[@]}" 2>/dev/null) \
    || { apt_get update -qq && plan=$(apt_get -s "${opts[@]}" install "${PEER_PACKAGES[@]}"); }
  # "Inst NAME (VERSION SUITE... [ARCH])" -> the file name apt gives the .deb
  # (an epoch's colon is written %3a).
  local debs
  debs=$(awk '$1 == "Inst" { v = $3; sub(/^\(/, "", v); gsub(/:/, "%3a", v); a = $NF; gsub(/[][)]/, "", a);
                             print $2 "_" v "_" a ".deb" }' <<<"$plan")
  [ -n "$debs" ] || die "apt found nothing to install for ${PEER_PACKAGES[*]}"
  log "peers: $(wc -l <<<"$debs") packages for ${PEER_PACKAGES[*]}"
  apt_get -qq -y "${opts[@]}" install --download-only "${PEER_PACKAGES[@]}" >/dev/null
  cp -a "$cache/base" "$tmp"
  mkdir -p "$tmp/tmp/peers-debs"
  local f
  while read -r f; do
    [ -f "$cache/debs/$f" ] || die "apt did not download $f"
    cp "$cache/debs/$f" "$tmp/tmp/peers-debs/"
  done <<<"$debs"
  # Nothing may start services inside the chroot (x11-common has an init
  # script); dpkg runs the maintainer scripts chrooted into the tree.
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
  chmod 755 "$tmp/usr/sbin/policy-rc.d"
  chroot "$tmp" /usr/bin/env DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    dpkg -i --force-confdef --force-confold -R /tmp/peers-debs >"$cache/peers-dpkg.log" 2>&1 \
    || { tail -30 "$cache/peers-dpkg.log" >&2; die "dpkg -i in the peers tree failed (log: $cache/peers-dpkg.log)"; }
  rm -rf "$tmp/tmp/peers-debs" "$tmp/usr/sbin/policy-rc.d"
  rm -rf "$tmp"/usr/share/{doc,man,info,locale}/* "$tmp"/var/cache/debconf/*-old "$tmp"/var/log/*.log
  local p
  for p in "${PEER_PACKAGES[@]}"; do
    chroot "$tmp" dpkg-query -W -f='${Status}' "$p" | grep -q "install ok installed" \
      || die "$p is not installed in the peers tree (log: $cache/peers-dpkg.log)"
  done
  rm -rf "$dir"; mv "$tmp" "$dir"
}

build_peers_image() {
  local stamp=$1
  assemble_image "$cache/peers-base" "$cache/peers-out.tmp"
  publish_image peers-out "$stamp" "$cache/peers-out.tmp"
}

# ---------------------------------------------------------------------------

SECONDS=0
install_host_packages
[ -r /usr/share/qemu/qboot.rom ] || die "/usr/share/qemu/qboot.rom missing (package qemu-system-data)"

kpkg=$(kernel_package)
kpkgver=$(apt-cache policy "$kpkg" | awk '/Candidate:/ {print $2}')
kstamp=$(stage_hash build_kernel extract_vmlinux build_test_backlight build_gpio_sim -- "$kpkg=$kpkgver" "${GUEST_MODULES[*]}" "${BOOT_MODULES[*]}" \
  "$(cat "$here"/guest/test-backlight/* "$here"/guest/gpio-sim/*)")
if stamp_ok "$cache/kernel.stamp" "$kstamp" && [ -f "$cache/kernel/vmlinux" ]; then
  log "kernel: up to date ($kpkg)"
else
  rm -f "$cache/kernel.stamp"
  build_kernel "$kpkg"
  echo "$kstamp" >"$cache/kernel.stamp"
fi

bstamp=$(stage_hash build_base -- "$SUITE" "${GUEST_PACKAGES[*]}" "${LIBINPUT_TOOLS_FILES[*]}")
if stamp_ok "$cache/base.stamp" "$bstamp" && [ -d "$cache/base/usr" ]; then
  log "base: up to date"
else
  rm -f "$cache/base.stamp"
  mirror=$(debian_mirror)
  [ -n "$mirror" ] || die "no Debian '$SUITE main' source in apt's configuration (apt-get indextargets)"
  build_base "$mirror"
  echo "$bstamp" >"$cache/base.stamp"
fi

istamp=$(stage_hash build_image assemble_image publish_image configure_rootfs build_initramfs -- "$kstamp" "$bstamp" \
  "$(cd "$here" && find guest uinput_touch.py -type f ! -name '*.pyc' | LC_ALL=C sort | xargs cat | sha256sum)")
if stamp_ok "$cache/out.stamp" "$istamp" && [ -f "$cache/out/manifest.json" ]; then
  log "image: up to date"
else
  rm -f "$cache/out.stamp"
  build_image "$istamp"
  echo "$istamp" >"$cache/out.stamp"
fi
if ((peers)); then
  pbstamp=$(stage_hash build_peers_base -- "$bstamp" "${PEER_PACKAGES[*]}")
  if stamp_ok "$cache/peers-base.stamp" "$pbstamp" && [ -d "$cache/peers-base/usr" ]; then
    log "peers base: up to date"
  else
    rm -f "$cache/peers-base.stamp"
    build_peers_base
    echo "$pbstamp" >"$cache/peers-base.stamp"
  fi
  # istamp covers the kernel, configure_rootfs, the initramfs and the guest
  # files: the peers image is rebuilt whenever the tests' image is.
  pistamp=$(stage_hash build_peers_image -- "$pbstamp" "$istamp")
  if stamp_ok "$cache/peers-out.stamp" "$pistamp" && [ -f "$cache/peers-out/manifest.json" ]; then
    log "peers image: up to date"
  else
    rm -f "$cache/peers-out.stamp"
    build_peers_image "$pistamp"
    echo "$pistamp" >"$cache/peers-out.stamp"
  fi
  log "peers image ready in $cache/peers-out"
fi
log "assets ready in $cache/out (${SECONDS} s)"
