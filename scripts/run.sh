#!/usr/bin/env bash
# Sets up everything and runs the carousel.
#
# On a board with a display (/dev/dri/card*), it runs there, with
# /etc/carouseld/carouseld.ini if it exists, else the bundled demo pictures
# (or the configuration given as the first argument). Elsewhere it boots the
# bundled QEMU machine (a real Linux kernel with a DRM display and a
# touchscreen), runs the carousel there with the demo pictures, plays a
# swipe and a tap, and leaves screenshots and an animated capture in out/run/.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
if ls /dev/dri/card* >/dev/null 2>&1; then
  swift build -c release --product carouseld >&2
  config=${1:-/etc/carouseld/carouseld.ini}
  [ -e "$config" ] || config=scripts/demo/demo.ini
  echo "carouseld: running on this machine's display with $config (Ctrl-C to stop)" >&2
  exec .build/release/carouseld run --config "$config"
fi
echo "carouseld: no display here (/dev/dri); running in the bundled QEMU machine, screenshots in out/run/" >&2
bash scripts/vm/build-assets.sh
swift build -c release --static-swift-stdlib --scratch-path .build-static --product carouseld >&2
exec python3 scripts/vm/demo.py .build-static/release/carouseld
