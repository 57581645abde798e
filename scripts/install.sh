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
#   PREFIX/bin/carouseld, PREFIX/bin/carouselctl
#   UNITDIR/carouseld.service             (ExecStart= points to PREFIX/bin)
#   UNITDIR/carouseld-sync.service        (`carouseld sync`: [sync]; not enabled)
#   SYSUSERSDIR/carouseld.conf, TMPFILESDIR/carouseld.conf
#   /etc/carouseld/carouseld.ini          (never overwritten: a changed default
#                                          is installed as carouseld.ini.new)
#   PREFIX/share/carouseld/demo-images/, PREFIX/share/doc/carouseld/README.md
#   PREFIX/share/man/man1/carouselctl.1, PREFIX/share/man/man5/carouseld.ini.5,
#   PREFIX/share/man/man8/carouseld.8
#   UDEVRULESDIR/70-carouseld-backlight.rules (the carouseld group may write
#                                          a backlight's brightness, bl_power)
# and, without DESTDIR (as root): creates the carouseld user and group
# (systemd-sysusers), /var/lib/carouseld/images (systemd-tmpfiles), copies the
# demo pictures into that folder if it did not exist before (so the screen
# shows something at once; replace them with yours), and runs
# `systemctl daemon-reload`. Where the board has a backlight
# (/sys/class/backlight), it applies the udev rule to it and writes
# /etc/systemd/system/carouseld.service.d/backlight.conf, which opens that
# device's folder in the otherwise read-only /sys of the service
# (ProtectKernelTunables=); run it again after adding a panel. It does not
# enable or start the service.
#
# --mqtt: the unit allows no IP at all; with --mqtt, after [mqtt] broker is
# set in /etc/carouseld/carouseld.ini, it also installs
# /etc/systemd/system/carouseld.service.d/mqtt.conf (systemd/carouseld-mqtt.conf)
# opening AF_INET/AF_INET6 to the broker's addresses only (and the name
# servers, for a broker given by name). Run it again when the broker moves.
#
# --sync: likewise for carouseld-sync.service: after [sync] is set, it
# installs /etc/systemd/system/carouseld-sync.service.d/sync.conf
# (systemd/carouseld-sync.conf) opening IP to the Immich server or the
# rclone remote's server only, and the folder it fills for writing.
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
    -h|--help) sed -n '2,49p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
for f in "$bin_src/carouseld" "$bin_src/carouselctl"; do
  [ -x "$f" ] || die "$f not found: build first (make build), or set CAROUSELD_BIN_DIR"
done
for f in "$unit_src/carouseld.service" "$unit_src/carouseld.sysusers" "$unit_src/carouseld.tmpfiles" \
  "$unit_src/carouseld-backlight.rules" "$unit_src/carouseld-mqtt.conf" "$unit_src/carouseld-sync.service" \
  "$unit_src/carouseld-sync.conf" "$ini_src" "$man_src/carouseld.8" "$man_src/carouselctl.1" "$man_src/carouseld.ini.5"; do
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

# The shipped unit names /usr/local/; point it to where things really are.
put 0644 <(sed "s|/usr/local/|$prefix/|g" "$unit_src/carouseld.service") "$D$unitdir/carouseld.service"
put 0644 <(sed "s|/usr/local/|$prefix/|g" "$unit_src/carouseld-sync.service") "$D$unitdir/carouseld-sync.service"
put 0644 "$unit_src/carouseld.sysusers" "$D$sysusersdir/carouseld.conf"
put 0644 "$unit_src/carouseld.tmpfiles" "$D$tmpfilesdir/carouseld.conf"
put 0644 "$unit_src/carouseld-backlight.rules" "$D$udevrulesdir/70-carouseld-backlight.rules"
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
for page in carouseld.8 carouselctl.1 carouseld.ini.5; do
  put 0644 "$man_src/$page" "$D$prefix/share/man/man${page##*.}/$page"
done
say "manual pages in $prefix/share/man: carouseld(8), carouselctl(1), carouseld.ini(5)"

if [ -n "$destdir" ]; then
  say "staged in $destdir: no user created, no folder under /var made, nothing started"
  say "on the target, as root: systemd-sysusers; systemd-tmpfiles --create; systemctl daemon-reload"
  exit 0
fi

# The live system from here on.
command -v systemd-sysusers >/dev/null || die "systemd-sysusers not found: carouseld's service needs systemd"
systemd-sysusers "$sysusersdir/carouseld.conf"
say "user and group 'carouseld' ($(id carouseld))"
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

# libheif and libmosquitto are opened only when needed (dlopen: a HEIF or
# AVIF picture, an [mqtt] broker), so ldd above does not list them.
if command -v ldconfig >/dev/null; then
  ldconfig -p 2>/dev/null | grep -q 'libheif\.so\.1 ' \
    || say "note: libheif.so.1 is not installed: HEIC and AVIF pictures will be skipped (apt-get install libheif1)"
  ldconfig -p 2>/dev/null | grep -q 'libmosquitto\.so\.1 ' \
    || say "note: libmosquitto.so.1 is not installed: [mqtt] cannot connect (apt-get install libmosquitto1)"
fi

# The backlight: the rule applied to the devices there now, and their folders
# opened in the service's read-only /sys (systemd follows no wildcard there,
# so the paths are this board's, resolved now).
dropin=/etc/systemd/system/carouseld.service.d/backlight.conf
backlights=()
for b in /sys/class/backlight/*; do
  [ -e "$b/brightness" ] && backlights+=("$(readlink -f "$b")")
done
if ((${#backlights[@]})); then
  if command -v udevadm >/dev/null; then
    udevadm control --reload 2>/dev/null || true
    udevadm trigger --subsystem-match=backlight --action=add
    udevadm settle --timeout=30 || true
  fi
  {
    echo "# Written by install.sh: this board's backlight, writable by the service"
    echo "# (see 70-carouseld-backlight.rules). Run install.sh again after a change."
    echo "[Service]"
    for b in "${backlights[@]}"; do echo "ReadWritePaths=-$b"; done
  } | put 0644 /dev/stdin "$dropin"
  say "backlight: ${backlights[*]##*/} (writable by the carouseld group; $dropin)"
elif [ -e "$dropin" ]; then
  rm -f "$dropin"
  say "backlight: none now; removed $dropin"
fi

# ini_value SECTION KEY: the value in the installed configuration (empty if unset).
ini_value() {
  awk -v section="[$1]" -v key="$2" '/^\[/ { s = $0 } s == section && $0 ~ "^[ \t]*" key "[ \t]*=" { sub(/^[^=]*=[ \t]*/, ""); print; exit }' "$confdir/carouseld.ini"
}

# allow_for WHAT HOST [exact]: fills `allow` with HOST's addresses as they
# resolve now and, for a name, the loopback and the name servers (the
# service resolves it too, at each connection, maybe through a resolver on
# the loopback). An address is allowed alone with `exact`; otherwise the
# loopback comes too (a broker on the board itself).
allow_for() {
  local what=$1 host=$2 exact=${3:-}
  allow=(localhost)
  if [[ "$host" =~ ^[0-9.]+$ || "$host" == *:* ]]; then
    if [ -n "$exact" ]; then allow=("$host"); else allow+=("$host"); fi
  else
    mapfile -t addresses < <(getent ahosts "$host" | awk '{ print $1 }' | sort -u)
    ((${#addresses[@]})) || die "$what: the name '$host' does not resolve here; fix the configuration or the network first"
    allow+=("${addresses[@]}")
    while read -r key server _; do
      [ "$key" = nameserver ] && allow+=("$server")
    done </etc/resolv.conf
  fi
  mapfile -t allow < <(printf '%s\n' "${allow[@]}" | awk '!seen[$0]++')
}

# host_of URL: the host of http(s)://HOST[:PORT]/..., mqtt://..., [IPv6] without brackets.
host_of() {
  local host=${1#*://}
  host=${host%%/*}
  case "$host" in
    \[*) host=${host#[}; host=${host%%]*} ;;
    *) host=${host%:*} ;;
  esac
  printf '%s' "$host"
}

# MQTT: IP for the broker only (--mqtt).
if [ "$mqtt" -eq 1 ]; then
  # [mqtt] broker from the configuration: mqtt://HOST[:PORT] or mqtts://...
  broker=$(ini_value mqtt broker)
  [ -n "$broker" ] || die "--mqtt: set [mqtt] broker in $confdir/carouseld.ini first (e.g. broker = mqtt://homeassistant.local)"
  allow_for "--mqtt: [mqtt] broker" "$(host_of "$broker")"
  dropin_mqtt=/etc/systemd/system/carouseld.service.d/mqtt.conf
  sed "s|@ALLOW@|${allow[*]}|" "$unit_src/carouseld-mqtt.conf" | put 0644 /dev/stdin "$dropin_mqtt"
  say "mqtt: IP opened to ${allow[*]} for $broker ($dropin_mqtt)"
fi

# carouseld-sync: IP for its server only, write access to its folder (--sync).
if [ "$sync" -eq 1 ]; then
  source=$(ini_value sync source)
  case "$source" in
    immich)
      server=$(ini_value sync server)
      [ -n "$server" ] || die "--sync: set [sync] server in $confdir/carouseld.ini first"
      host=$(host_of "$server") ;;
    rclone:*)
      remote=${source#rclone:}
      remote=${remote%%:*}
      rconf=$(ini_value sync rclone_config)
      [ -n "$rconf" ] || die "--sync: set [sync] rclone_config (e.g. /etc/carouseld/rclone.conf, readable by the carouseld group): the service cannot read a home folder"
      [ -r "$rconf" ] || die "--sync: $rconf cannot be read"
      # The remote's server, as rclone's configuration names it (url, host or endpoint).
      address=$(awk -v section="[$remote]" '/^\[/ { s = $0 } s == section && /^[ \t]*(url|host|endpoint)[ \t]*=/ { sub(/^[^=]*=[ \t]*/, ""); print; exit }' "$rconf")
      [ -n "$address" ] || die "--sync: cannot tell which server the rclone remote '$remote' uses (no url, host or endpoint in $rconf); open IP by hand: systemctl edit carouseld-sync (IPAddressAllow=...)"
      case "$address" in *://*) host=$(host_of "$address") ;; *) host=${address%:*} ;; esac ;;
    *) die "--sync: set [sync] source in $confdir/carouseld.ini first (immich or rclone:REMOTE:PATH)" ;;
  esac
  allow_for "--sync: the server" "$host" exact
  folder=$(ini_value sync folder)
  [ -n "$folder" ] || folder=$(ini_value images path)
  [ -n "$folder" ] || folder=$images
  case "$folder" in
    /*) ;;
    *) die "--sync: the folder '$folder' is not an absolute path" ;;
  esac
  [[ "$folder" =~ [[:space:]\"\'\\] ]] && die "--sync: the folder '$folder' has a space or a quote, which ReadWritePaths= cannot take here; choose one without"
  # A folder that is there already is the administrator's: made only when missing.
  if [ ! -d "$folder" ]; then
    install -d -o carouseld -g carouseld -m 2775 "$folder"
  elif ! runuser -u carouseld -- test -w "$folder" 2>/dev/null; then
    say "warning: $folder is not writable by the carouseld user; the sync will say so (chgrp carouseld, chmod g+w)"
  fi
  dropin_sync=/etc/systemd/system/carouseld-sync.service.d/sync.conf
  # Bash's own replacement, quoted: no sed, so no character of a value is a command.
  template=$(<"$unit_src/carouseld-sync.conf")
  template=${template//@ALLOW@/"${allow[*]}"}
  template=${template//@FOLDER@/"$folder"}
  printf '%s\n' "$template" | put 0644 /dev/stdin "$dropin_sync"
  say "sync: IP opened to ${allow[*]} for $host, writing $folder ($dropin_sync); next: systemctl enable --now carouseld-sync"
fi

if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  state=$(systemctl is-active carouseld.service 2>/dev/null || true)
  if [ "$state" = active ] || [ "$state" = activating ]; then
    say "carouseld is running the previous version: systemctl restart carouseld"
  else
    say "next: systemctl enable --now carouseld; then carouselctl status"
  fi
else
  say "systemd is not running here: the unit is installed for the next boot"
fi
