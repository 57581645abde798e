#!/usr/bin/env bash
# Makes out/deb/carouseld_VERSION_ARCH.deb with Debian's own tools
# (dpkg-buildpackage, debhelper, debian/) from the release build `make build`
# made (the one `make dist` ships), then checks it with lintian.
#
#   scripts/deb.sh [--out DIR] [--no-lintian]
#   (make deb builds first)
#
# Needs: dpkg-dev, debhelper, lintian (scripts/setup.sh installs them) and
# the Swift toolchain in PATH (debian/rules runs `make build`, which does
# nothing when the build is current). The architecture is the build
# machine's: on an arm64 board with Swift for arm64 it makes an arm64
# package. dpkg-buildpackage writes next to the repository (..); the
# results are moved to DIR (default out/deb).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
out=$repo/out/deb
lintian=1
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --no-lintian) lintian=0; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "deb.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
die() { printf 'deb.sh: error: %s\n' "$*" >&2; exit 1; }
for tool in dpkg-buildpackage dh lintian; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/setup.sh installs dpkg-dev, debhelper and lintian)"
done

# One version: the program's (Version.swift) is the package's (debian/changelog).
version=$(make -s --no-print-directory version)
changelog=$(dpkg-parsechangelog -S Version)
[ "$version" = "$changelog" ] \
  || die "debian/changelog says $changelog, Sources/CarouselConfig/Version.swift $version: add a changelog entry (dch -v $version)"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
name=carouseld_${version}_$arch

# -b: binary only (no source package); unsigned (a local build).
mkdir -p "$repo/out" "$out"
dpkg-buildpackage -b --no-sign >"$repo/out/deb-build.log" 2>&1 \
  || { tail -n 40 "$repo/out/deb-build.log" >&2; die "dpkg-buildpackage failed (out/deb-build.log)"; }
for f in "$name.deb" "$name.buildinfo" "$name.changes"; do
  [ -f "../$f" ] || die "dpkg-buildpackage did not make ../$f"
  mv -f "../$f" "$out/"
done
deb=$out/$name.deb
echo "$deb ($(du -h "$deb" | cut -f1), $(dpkg-deb -f "$deb" Installed-Size) KiB installed)"
echo "Depends: $(dpkg-deb -f "$deb" Depends)"

if ((lintian)); then
  # Errors and warnings fail; the informational tags kept are overridden in
  # debian/carouseld.lintian-overrides, each with its reason.
  lintian --fail-on error,warning --info --display-info "$deb" | tee "$out/lintian.txt" \
    || die "lintian found errors or warnings in $deb (out/deb/lintian.txt)"
  echo "lintian: no errors, no warnings ($(grep -c '^[a-z]' debian/carouseld.lintian-overrides) informational tags overridden with their reasons in debian/carouseld.lintian-overrides)"
fi
