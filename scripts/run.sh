#!/usr/bin/env bash
# Sets up everything and runs the carousel.
#
# The display and touch backends (DRM/KMS, libinput) are not built yet: for
# now this runs the carousel headless with `carouseld simulate` on the
# bundled demo pictures, prints what the carousel does (one JSON line per
# event) and leaves screenshots of the key moments in out/. Pass another
# script and configuration to try your own: scripts/run.sh SCRIPT [CONFIG].
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
swift build -c release --product carouseld >&2
script=${1:-scripts/demo/tour.sim}
config=${2:-scripts/demo/demo.ini}
mkdir -p out
echo "carouseld: no display backend in this build yet; simulating $script with $config" >&2
.build/release/carouseld simulate "$script" --config "$config"
echo "carouseld: screenshots in out/:" >&2
ls out/*.png >&2 2>/dev/null || true
