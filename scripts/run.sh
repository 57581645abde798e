#!/usr/bin/env bash
# Sets up everything and runs the carousel.
#
# The display and touch backends (DRM/KMS, libinput) are not built yet: for
# now this runs the carousel model headless with `carouseld simulate` on the
# bundled example script and prints what the carousel does, one JSON line per
# event. Pass another script as the first argument to try your own.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
swift build -c release --product carouseld >&2
script=${1:-examples/swipe.sim}
echo "carouseld: no display backend in this build yet; simulating $script" >&2
exec .build/release/carouseld simulate "$script" ${2:+--config "$2"}
