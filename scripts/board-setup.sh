#!/bin/bash
# Sets up what depends on this board and on its configuration, for the
# installed carouseld service. install.sh runs it after installing; the
# Debian package installs it as /usr/lib/carouseld/board-setup and runs it
# (without options) from its postinst. Run it again after adding a panel,
# or with --mqtt / --sync once the INI names a broker or a sync source.
#
#   sudo board-setup [--mqtt] [--sync] [--templates DIR]
#
# Always: where the board has a backlight (/sys/class/backlight), applies
# the udev rule (70-carouseld-backlight.rules: the carouseld group may write
# brightness and bl_power) to it and writes
# /etc/systemd/system/carouseld.service.d/backlight.conf, which opens that
# device's folder in the service's otherwise read-only /sys
# (ProtectKernelTunables=); a board without one loses a stale drop-in.
#
# --mqtt: the unit allows no IP at all; after [mqtt] broker is set in
# /etc/carouseld/carouseld.ini, installs
# /etc/systemd/system/carouseld.service.d/mqtt.conf (the template
# carouseld-mqtt.conf) opening AF_INET/AF_INET6 to the broker's addresses
# only (and the name servers, for a broker given by name). Run it again when
# the broker moves.
#
# --sync: likewise for carouseld-sync.service: after [sync] is set, installs
# /etc/systemd/system/carouseld-sync.service.d/sync.conf (carouseld-sync.conf)
# opening IP to the Immich server or the rclone remote's server only, and
# the folder it fills for writing.
#
# --templates DIR: where carouseld-mqtt.conf and carouseld-sync.conf are
# (default: the repository's or bundle's systemd/ beside this script, else
# the installed ../../share/carouseld/systemd).
set -euo pipefail

mqtt=0
sync=0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
unit_src=
for dir in "$here/../systemd" "$here/systemd" "$here/../../share/carouseld/systemd"; do
  if [ -f "$dir/carouseld-mqtt.conf" ]; then unit_src=$(cd "$dir" && pwd); break; fi
done
while (($#)); do
  case "$1" in
    --mqtt) mqtt=1; shift ;;
    --sync) sync=1; shift ;;
    --templates) unit_src=$2; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "board-setup: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

say() { printf 'board-setup: %s\n' "$*"; }
die() { printf 'board-setup: error: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (sudo $0)"
if ((mqtt || sync)); then
  [ -n "$unit_src" ] && [ -f "$unit_src/carouseld-mqtt.conf" ] && [ -f "$unit_src/carouseld-sync.conf" ] \
    || die "the drop-in templates carouseld-mqtt.conf and carouseld-sync.conf are not in '${unit_src:-anywhere}' (--templates DIR)"
fi
confdir=/etc/carouseld
images=/var/lib/carouseld/images

# Writes stdin to DEST (mode MODE) through a temporary name: never half a file.
put() { # put MODE /dev/stdin DEST
  local mode=$1 src=$2 dest=$3 tmp
  install -d -m 0755 "$(dirname "$dest")"
  tmp=$(mktemp "$dest.XXXXXX")
  cat "$src" >"$tmp"
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$dest"
}

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

# ini_value SECTION KEY: the value in the installed configuration (empty if
# unset), without a trailing comment (whitespace, then # or ; then whitespace
# or the end, as carouseld reads it).
ini_value() {
  [ -f "$confdir/carouseld.ini" ] || return 0
  awk -v section="[$1]" -v key="$2" '/^\[/ { s = $0 } s == section && $0 ~ "^[ \t]*" key "[ \t]*=" { sub(/^[^=]*=[ \t]*/, ""); sub(/[ \t]+[#;]([ \t].*)?$/, ""); sub(/[ \t]+$/, ""); print; exit }' "$confdir/carouseld.ini"
}

# The secrets the configuration names, readable by the one user that reads
# them and nobody else (carouseld and carouseld-sync refuse them otherwise,
# with the chmod that fixes them): [mqtt] password_file is the daemon's,
# [sync] api_key_file and rclone_config the sync's. Earlier versions had
# them made root:carouseld 0640 (one user for both services): an upgrade
# hands each to its reader, 0600 at most. Regular files only: a link is the
# administrator's own arrangement, and stays as it is (and is checked).
restart_sync=0
own_secret() { # own_secret KEY PATH USER
  local key=$1 path=$2 user=$3 mode
  [ -n "$path" ] && [ -f "$path" ] && [ ! -L "$path" ] || return 0
  getent passwd "$user" >/dev/null || return 0
  if [ "$(stat -c %U:%G "$path")" != "$user:$user" ] || (( 8#$(stat -c %a "$path") & 8#077 )); then
    chown "$user:$user" "$path"
    chmod go-rwx "$path"
    mode=$(stat -c %a "$path")
    say "secrets: $key $path now $user:$user $mode (readable by $user alone)"
    [ "$user" = carouseld-sync ] && restart_sync=1
  fi
  return 0
}
[ -n "$(ini_value mqtt broker)" ] && own_secret "[mqtt] password_file" "$(ini_value mqtt password_file)" carouseld
case "$(ini_value sync source)" in
  immich) own_secret "[sync] api_key_file" "$(ini_value sync api_key_file)" carouseld-sync ;;
  rclone:*) own_secret "[sync] rclone_config" "$(ini_value sync rclone_config)" carouseld-sync ;;
esac

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
      [ -n "$rconf" ] || die "--sync: set [sync] rclone_config (e.g. /etc/carouseld/rclone.conf, carouseld-sync's, mode 0600): the service cannot read a home folder"
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
  elif ! runuser -u carouseld-sync -g carouseld-sync -G carouseld -- test -w "$folder" 2>/dev/null; then
    say "warning: $folder is not writable by the sync (carouseld-sync with the carouseld group); the sync will say so (chgrp carouseld, chmod g+w)"
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
  # A sync running as the previous user could no longer read its key.
  if ((restart_sync)); then systemctl try-restart carouseld-sync.service || true; fi
fi
