#!/usr/bin/env bash
# Installs carouseld: the binaries, the systemd unit, its sysusers.d and
# tmpfiles.d files, the default configuration, the demo pictures, the
# manual pages and the README. Runs from the repository (after `make build`) or from the root of
# a `make dist` bundle (carouseld-VERSION-ARCH.tar.gz: no Swift needed).
#
#   sudo ./install.sh [--prefix DIR] [--no-demo-images] [--mqtt] [--sync]
#   DESTDIR=/tmp/stage ./install.sh [--prefix /usr]      (staging, packaging)
#
# Environment (or make variables): PREFIX (default /usr/local), DESTDIR (a
# staging root: nothing outside it is touched, no user is created, nothing is
# started), UNITDIR, SYSUSERSDIR, TMPFILESDIR (default PREFIX/lib/... for the
# prefixes systemd searches, /usr and /usr/local, else /etc/...),
# CAROUSELD_BIN_DIR (where the built binaries are, in a repository checkout;
# default .build-static/release).
#
# What it changes (under DESTDIR when set):
#   PREFIX/bin/carouseld, PREFIX/bin/carouselctl, PREFIX/bin/carouseld-web
#   UNITDIR/carouseld.service             (ExecStart= points to PREFIX/bin)
#   UNITDIR/carouseld-sync.service        (`carouseld sync`: [sync]; not enabled)
#   UNITDIR/carouseld-web.socket, carouseld-web-proxy.service,
#   UNITDIR/carouseld-web.service         (the frame's page on port 80; not enabled)
#   SYSUSERSDIR/carouseld.conf, TMPFILESDIR/carouseld.conf
#   /etc/carouseld/carouseld.ini          (never overwritten: a changed default
#                                          is installed as carouseld.ini.new)
#   PREFIX/share/carouseld/demo-images/, PREFIX/share/doc/carouseld/README.md
#   PREFIX/share/man/man1/carouselctl.1, PREFIX/share/man/man5/carouseld.ini.5,
#   PREFIX/share/man/man8/carouseld.8, PREFIX/share/man/man8/carouseld-web.8
#   UDEVRULESDIR/70-carouseld-backlight.rules (the carouseld group may write
#                                          a backlight's brightness, bl_power)
#   PREFIX/lib/carouseld/board-setup      (board-setup.sh: the steps below that
#                                          depend on the board, to run again later)
#   PREFIX/share/carouseld/systemd/       (its drop-in templates)
# and, without DESTDIR (as root): creates the carouseld user and group, and
# carouseld-sync's and carouseld-web's (systemd-sysusers),
# /var/lib/carouseld/images, /var/lib/carouseld-sync and
# /var/lib/carouseld-web (systemd-tmpfiles), copies the
# demo pictures into that folder if it did not exist before (so the screen
# shows something at once; replace them with yours), and runs
# `systemctl daemon-reload`, then board-setup.sh: where the board has a
# backlight, it applies the udev rule to it and opens its folder in the
# service's read-only /sys; the secret files the INI names are given to the
# user that reads them, readable by it alone (run it again after adding a panel:
# sudo PREFIX/lib/carouseld/board-setup). It does not enable or start the
# service.
#
# --mqtt, --sync: passed to board-setup.sh, which opens IP to the [mqtt]
# broker (carouseld.service) or to the [sync] server and its folder
# (carouseld-sync.service) only, through drop-ins made from
# systemd/carouseld-mqtt.conf and carouseld-sync.conf (see its --help). Run
# it again when the broker or server moves.
set -euo pipefail

prefix=${PREFIX:-/usr/local}
destdir=${DESTDIR:-}
demo_images=1
mqtt=0
sync=0
while (($#)); do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --destdir) destdir=$2; shift 2 ;;
    --destdir=*) destdir=${1#--destdir=}; shift ;;
    --no-demo-images) demo_images=0; shift ;;
    --mqtt) mqtt=1; shift ;;
    --sync) sync=1; shift ;;
    -h|--help) sed -n '2,48p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: error: %s\n' "$*" >&2; exit 1; }

case "$prefix" in /*) ;; *) die "PREFIX must be an absolute path, not '$prefix'" ;; esac
prefix=${prefix%/}
[ -n "$prefix" ] || prefix=/usr
destdir=${destdir%/}
if [ -n "$destdir" ]; then
  case "$destdir" in /*) ;; *) destdir=$(pwd)/$destdir ;; esac
fi

# Where the pieces are: a dist bundle has them next to this script, a
# repository checkout in their usual places.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -x "$here/bin/carouseld" ] && [ -f "$here/systemd/carouseld.service" ]; then
  bin_src=$here/bin
  unit_src=$here/systemd
  ini_src=$here/etc/carouseld.ini
  demo_src=$here/demo-images
  readme_src=$here/README.md
  man_src=$here/man
else
  repo=$(cd "$here/.." && pwd)
  bin_src=${CAROUSELD_BIN_DIR:-$repo/.build-static/release}
  unit_src=$repo/systemd
  ini_src=$repo/etc/carouseld/carouseld.ini
  demo_src=$repo/scripts/demo/images
  readme_src=$repo/README.md
  man_src=$repo/man
fi
for f in "$bin_src/carouseld" "$bin_src/carouselctl" "$bin_src/carouseld-web"; do
  [ -x "$f" ] || die "$f not found: build first (make build), or set CAROUSELD_BIN_DIR"
done
for f in "$unit_src/carouseld.service" "$unit_src/carouseld.sysusers" "$unit_src/carouseld.tmpfiles" \
  "$unit_src/carouseld-backlight.rules" "$unit_src/carouseld-mqtt.conf" "$unit_src/carouseld-sync.service" \
  "$unit_src/carouseld-sync.conf" "$unit_src/carouseld-fbdev.conf" "$unit_src/carouseld-gpio.conf" "$here/board-setup.sh" "$ini_src" \
  "$unit_src/carouseld-web.service" "$unit_src/carouseld-web.socket" "$unit_src/carouseld-web-https.socket" "$unit_src/carouseld-web-proxy@.service" \
  "$man_src/carouseld.8" "$man_src/carouselctl.1" "$man_src/carouseld.ini.5" "$man_src/carouseld-web.8"; do
  [ -f "$f" ] || die "$f is missing (an incomplete checkout or bundle?)"
done

# systemd only looks for units, sysusers.d and tmpfiles.d files under /etc,
# /run, /usr/local/lib and /usr/lib: another prefix gets them in /etc.
case "$prefix" in
  /usr|/usr/local) sysd_lib=$prefix/lib ;;
  *) sysd_lib=/etc ;;
esac
unitdir=${UNITDIR:-$sysd_lib/systemd/system}
sysusersdir=${SYSUSERSDIR:-$sysd_lib/sysusers.d}
tmpfilesdir=${TMPFILESDIR:-$sysd_lib/tmpfiles.d}
# udev reads rules from /usr/lib and /etc only (not /usr/local/lib).
case "$prefix" in
  /usr) udevrulesdir=${UDEVRULESDIR:-/usr/lib/udev/rules.d} ;;
  *) udevrulesdir=${UDEVRULESDIR:-/etc/udev/rules.d} ;;
esac
confdir=/etc/carouseld
images=/var/lib/carouseld/images

if [ -z "$destdir" ] && [ "$(id -u)" -ne 0 ]; then
  die "run as root (sudo $0), or set DESTDIR to stage the files somewhere else"
fi

# Copies to a temporary name then renames: a running carouseld keeps its old
# binary (no "Text file busy"), and a half-written file is never in place.
put() { # put MODE SRC DEST
  local mode=$1 src=$2 dest=$3 tmp
  install -d -m 0755 "$(dirname "$dest")"
  tmp=$(mktemp "$dest.XXXXXX")
  cat "$src" >"$tmp"
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$dest"
}

D=$destdir
say "installing into ${D:-/} with PREFIX=$prefix"
put 0755 "$bin_src/carouseld" "$D$prefix/bin/carouseld"
put 0755 "$bin_src/carouselctl" "$D$prefix/bin/carouselctl"
put 0755 "$bin_src/carouseld-web" "$D$prefix/bin/carouseld-web"

# The shipped unit names /usr/local/; point it to where things really are.
put 0644 <(sed "s|/usr/local/|$prefix/|g" "$unit_src/carouseld.service") "$D$unitdir/carouseld.service"
put 0644 <(sed "s|/usr/local/|$prefix/|g" "$unit_src/carouseld-sync.service") "$D$unitdir/carouseld-sync.service"
# The frame's page: ports 80 and 443 (systemd's), their proxy and the
# page's process. (carouseld-web-proxy.service was the proxy's name before
# HTTPS: an install over such a one removes it.)
for u in carouseld-web.socket carouseld-web-https.socket carouseld-web-proxy@.service carouseld-web.service; do
  put 0644 <(sed "s|/usr/local/|$prefix/|g" "$unit_src/$u") "$D$unitdir/$u"
done
rm -f "$D$unitdir/carouseld-web-proxy.service"
put 0644 "$unit_src/carouseld.sysusers" "$D$sysusersdir/carouseld.conf"
put 0644 "$unit_src/carouseld.tmpfiles" "$D$tmpfilesdir/carouseld.conf"
put 0644 "$unit_src/carouseld-backlight.rules" "$D$udevrulesdir/70-carouseld-backlight.rules"
# board-setup and its drop-in templates, for running it again on the board
# (a new panel, --mqtt, --sync) where the package or bundle is gone.
put 0755 "$here/board-setup.sh" "$D$prefix/lib/carouseld/board-setup"
for t in carouseld-mqtt.conf carouseld-sync.conf carouseld-fbdev.conf carouseld-gpio.conf; do
  put 0644 "$unit_src/$t" "$D$prefix/share/carouseld/systemd/$t"
done
say "unit $unitdir/carouseld.service (ExecStart=$prefix/bin/carouseld)"

# The configuration is the administrator's: never replace an existing one.
ini=$D$confdir/carouseld.ini
if [ ! -e "$ini" ]; then
  put 0644 "$ini_src" "$ini"
  say "configuration $confdir/carouseld.ini (the defaults: edit it, then 'carouseld check-config')"
elif cmp -s "$ini_src" "$ini"; then
  say "configuration $confdir/carouseld.ini unchanged (already the shipped defaults)"
else
  put 0644 "$ini_src" "$ini.new"
  say "configuration $confdir/carouseld.ini kept as it is; the shipped defaults are in $confdir/carouseld.ini.new (compare: diff $confdir/carouseld.ini $confdir/carouseld.ini.new)"
fi

if [ -d "$demo_src" ]; then
  install -d -m 0755 "$D$prefix/share/carouseld/demo-images"
  for f in "$demo_src"/*; do
    [ -f "$f" ] && put 0644 "$f" "$D$prefix/share/carouseld/demo-images/$(basename "$f")"
  done
fi
[ -f "$readme_src" ] && put 0644 "$readme_src" "$D$prefix/share/doc/carouseld/README.md"
# Uncompressed: man reads them as they are (Debian's packages gzip theirs).
for page in carouseld.8 carouselctl.1 carouseld.ini.5 carouseld-web.8; do
  put 0644 "$man_src/$page" "$D$prefix/share/man/man${page##*.}/$page"
done
say "manual pages in $prefix/share/man: carouseld(8), carouselctl(1), carouseld.ini(5), carouseld-web(8)"

if [ -n "$destdir" ]; then
  say "staged in $destdir: no user created, no folder under /var made, nothing started"
  say "on the target, as root: systemd-sysusers; systemd-tmpfiles --create; systemctl daemon-reload"
  exit 0
fi

# The live system from here on.
command -v systemd-sysusers >/dev/null || die "systemd-sysusers not found: carouseld's service needs systemd"
systemd-sysusers "$sysusersdir/carouseld.conf"
say "user and group 'carouseld' ($(id carouseld)); the sync's, 'carouseld-sync' ($(id carouseld-sync)); the page's, 'carouseld-web' ($(id carouseld-web))"
had_images=0
[ -e "$images" ] && had_images=1
systemd-tmpfiles --create "$tmpfilesdir/carouseld.conf"
if [ "$had_images" -eq 0 ] && [ "$demo_images" -eq 1 ] && [ -d "$demo_src" ]; then
  cp "$demo_src"/* "$images"/
  chown carouseld:carouseld "$images"/*
  chmod 0664 "$images"/*
  say "pictures folder $images created with the demo pictures: replace them with yours"
else
  say "pictures folder $images ($(find "$images" -maxdepth 1 -type f | wc -l) files; left as it was)"
fi

# Libraries the binaries need (Debian 12 package names), checked now rather
# than at the first start.
missing=$(ldd "$prefix/bin/carouseld" 2>/dev/null | awk '/not found/ {print $1}' || true)
if [ -n "$missing" ]; then
  pkgs=$(for lib in $missing; do
    case "$lib" in
      libdrm.so.*) echo libdrm2 ;; libinput.so.*) echo libinput10 ;; libudev.so.*) echo libudev1 ;;
      libjpeg.so.*) echo libjpeg62-turbo ;; libpng16.so.*) echo libpng16-16 ;; libwebp.so.*) echo libwebp7 ;;
      libwebpdemux.so.*) echo libwebpdemux2 ;; libgif.so.*) echo libgif7 ;; libheif.so.*) echo libheif1 ;;
      libpixman-1.so.*) echo libpixman-1-0 ;; libmosquitto.so.*) echo libmosquitto1 ;; libstdc++.so.*) echo libstdc++6 ;;
      libharfbuzz.so.*) echo libharfbuzz0b ;; libfreetype.so.*) echo libfreetype6 ;;
      libfontconfig.so.*) echo "libfontconfig1 fonts-dejavu-core" ;; *) echo "($lib)" ;;
    esac
  done | sort -u | tr '\n' ' ')
  say "WARNING: carouseld cannot start, libraries missing: $(echo "$missing" | tr '\n' ' ')"
  say "WARNING: install them with: apt-get install $pkgs"
else
  "$prefix/bin/carouseld" check-config "$confdir/carouseld.ini" >/dev/null \
    || say "WARNING: $confdir/carouseld.ini does not pass 'carouseld check-config' (see above)"
fi

# libheif, libmosquitto, the text libraries and libinput are opened only
# when needed (dlopen: a HEIF or AVIF picture, an [mqtt] broker, the first
# caption, clock or pushed text, the input devices once the first picture is
# on screen), so ldd above does not list them.
if command -v ldconfig >/dev/null; then
  ldconfig -p 2>/dev/null | grep -q 'libheif\.so\.1 ' \
    || say "note: libheif.so.1 is not installed: HEIC and AVIF pictures will be skipped (apt-get install libheif1)"
  ldconfig -p 2>/dev/null | grep -q 'libmosquitto\.so\.1 ' \
    || say "note: libmosquitto.so.1 is not installed: [mqtt] cannot connect (apt-get install libmosquitto1)"
  for lib in libharfbuzz.so.0 libfreetype.so.6 libfontconfig.so.1; do
    ldconfig -p 2>/dev/null | grep -q "${lib//./\\.} " \
      || say "note: $lib is not installed: captions, the clock and pushed text will not be drawn (apt-get install libharfbuzz0b libfreetype6 libfontconfig1)"
  done
  ldconfig -p 2>/dev/null | grep -q 'libinput\.so\.10 ' \
    || say "note: libinput.so.10 is not installed: touch and keys will not be read (apt-get install libinput10)"
fi

# What depends on this board and its configuration: the backlight, and
# with --mqtt / --sync the drop-ins opening IP (board-setup.sh, installed
# beside the binaries' private files for running again later).
setup_args=()
((mqtt)) && setup_args+=(--mqtt)
((sync)) && setup_args+=(--sync)
bash "$here/board-setup.sh" --templates "$unit_src" "${setup_args[@]}"

if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  state=$(systemctl is-active carouseld.service 2>/dev/null || true)
  if [ "$state" = active ] || [ "$state" = activating ]; then
    say "carouseld is running the previous version: systemctl restart carouseld"
  else
    say "next: systemctl enable --now carouseld; then carouselctl status"
  fi
  if ! systemctl -q is-enabled carouseld-web.socket 2>/dev/null; then
    say "the frame's page on port 80 (the local network only): systemctl enable --now carouseld-web.socket"
  fi
else
  say "systemd is not running here: the unit is installed for the next boot"
fi
