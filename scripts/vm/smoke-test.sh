#!/usr/bin/env bash
# End-to-end check of the QEMU test VM: builds the assets (cached), boots the
# guest, checks the DRM display, a screendump, the uinput touchscreen through
# udev + libinput, the QEMU pointer and keyboard, the 9p share and the guest
# to host requests, powers off, and prints timings.
#
#   scripts/vm/smoke-test.sh [--cache DIR] [-v]
#
# Exits non-zero, with a message naming the failed check, on any failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache="$repo/.build-vm"
verbose=()
while (($#)); do
  case "$1" in
    --cache) cache=$2; shift 2 ;;
    --cache=*) cache=${1#--cache=}; shift ;;
    -v|--verbose) verbose=(-v); shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "smoke-test: unknown argument: $1" >&2; exit 2 ;;
  esac
done

start=$(date +%s%N)
if ! bash "$here/build-assets.sh" --cache "$cache"; then
  echo "SMOKE TEST FAILED: building the VM assets failed" >&2
  exit 1
fi
built=$(date +%s%N)
build_s=$(( (built - start) / 1000000 ))

set +e
python3 "$here/smoke_test.py" --assets "$cache/out" --out "$cache/smoke" \
  --build-seconds "$((build_s / 1000)).$(printf '%03d' $((build_s % 1000)))" "${verbose[@]}"
rc=$?
set -e
end=$(date +%s%N)
printf '  %-30s %6d.%01d s\n' "total (build + VM)" $(( (end - start) / 1000000000 )) $(( (end - start) / 100000000 % 10 ))
exit $rc
