#!/usr/bin/env bash
# Prints, on one line, the versions of the libraries and servers the test
# suite runs against: those we do not write, whose security updates change
# how they fail. scripts/test.sh prints it once for this machine, after
# setup (the Swift tests, MQTT, Home Assistant and the sync run here), and
# once for the VM's image (`--vm CACHE`, the build-assets.sh cache: the
# end-to-end stages run there), so that a failure says what it met.
#
# The two differ: debootstrap builds the image from the release and its
# point releases, without bookworm-security, so the guest can have an older
# libheif than this machine (1.15.1-1+deb12u1 against +deb12u3, seen here).
set -uo pipefail
cd "$(dirname "$0")/.."

admindir=/var/lib/dpkg
label="versions"
vm=""
if [ "${1:-}" = "--vm" ]; then
  vm=${2:?--vm needs the build-assets cache}
  admindir=$vm/base/var/lib/dpkg
  label="versions in the VM image"
fi

out=()
for p in libheif1 libde265-0 libdav1d6 libavcodec59 libjpeg62-turbo libpng16-16 libwebp7 libgif7 \
         libcurl4 libmosquitto1 mosquitto; do
  v=$(dpkg-query --admindir="$admindir" -W -f='${Version}' "$p" 2>/dev/null) || v="not installed"
  out+=("$p ${v:-not installed}")
done

if [ -n "$vm" ]; then
  kernel=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["kernel_version"])' \
           "$vm/out/manifest.json" 2>/dev/null) || kernel="unknown (no $vm/out/manifest.json)"
  # The release, from the configuration the kernel was built with.
  release=$(sed -n 's/^# Linux\/[^ ]* \([^ ]*\) Kernel Configuration$/\1/p' "$vm/kernel/config" 2>/dev/null)
  out+=("kernel $kernel${release:+ (Linux $release)}")
else
  v=$(dpkg-query -W -f='${Version}' rclone 2>/dev/null) || v="not installed"
  out+=("rclone $v")
  ha=$(sed -n 's/^homeassistant==//p' Tests/Servers/ha-requirements.txt)
  out+=("homeassistant ${ha:-unknown}")
fi

line=$(printf '%s, ' "${out[@]}")
echo "$label: ${line%, }"
