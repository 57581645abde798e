#!/usr/bin/env bash
# Prints, on one line, the versions of the libraries and servers the test
# suite runs against: those we do not write, whose security updates change
# how they fail. scripts/test.sh prints it once, after setup, so that a
# failure says what it met. Debian's versions are dpkg's (the VM's root
# image is debootstrapped from the same mirror at the same time, so its
# libraries are these too); the VM's kernel is the package build-assets.sh
# boots; Home Assistant's is the one scripts/ha/requirements.txt pins.
set -uo pipefail
cd "$(dirname "$0")/.."

out=()
for p in libheif1 libde265-0 libdav1d6 libavcodec59 libjpeg62-turbo libpng16-16 libwebp7 libgif7 \
         libcurl4 libmosquitto1 mosquitto rclone; do
  v=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null) || v="not installed"
  out+=("$p $v")
done

# The same choice as build-assets.sh's kernel_package: VM_KERNEL_PACKAGE, or
# what linux-image-amd64 depends on.
kernel=${VM_KERNEL_PACKAGE:-$(apt-cache depends linux-image-amd64 2>/dev/null \
    | awk '/Depends: linux-image-6\.1\.[0-9.]*-[0-9]+-amd64$/ {print $2; exit}')}
if [ -n "$kernel" ]; then
  kv=$(apt-cache show "$kernel" 2>/dev/null | awk '/^Version:/ {print $2; exit}')
  out+=("VM kernel $kernel ${kv:-(version unknown)}")
else
  out+=("VM kernel unknown (apt-cache depends linux-image-amd64 found none)")
fi

ha=$(sed -n 's/^homeassistant==//p' scripts/ha/requirements.txt)
out+=("homeassistant ${ha:-unknown}")

line=$(printf '%s, ' "${out[@]}")
echo "versions: ${line%, }"
