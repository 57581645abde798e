#!/usr/bin/env bash
# Makes the installable bundle out/dist/carouseld-VERSION-ARCH.tar.gz: the
# release binaries (Swift's runtime linked in statically, so the board needs
# no Swift toolchain, only Debian's C libraries), install.sh, the systemd
# files, the default configuration, the demo pictures, the manual pages and
# the README.
# On the board: tar xf carouseld-VERSION-ARCH.tar.gz; cd carouseld-VERSION-ARCH; sudo ./install.sh
#
#   scripts/dist.sh [--bin-dir DIR] [--out DIR]
#   (make dist builds first; --bin-dir defaults to .build-static/release)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin_dir=$repo/.build-static/release
out=$repo/out/dist
while (($#)); do
  case "$1" in
    --bin-dir) bin_dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "dist.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
die() { printf 'dist.sh: error: %s\n' "$*" >&2; exit 1; }

version=$(sed -n 's/.*static let string = "\([^"]*\)".*/\1/p' Sources/CarouselConfig/Version.swift)
[ -n "$version" ] || die "no version in Sources/CarouselConfig/Version.swift"
for b in carouseld carouselctl carouseld-web; do
  [ -x "$bin_dir/$b" ] || die "$bin_dir/$b not found (make build)"
done
# The binary's version must be the source's: a stale build would be shipped under the wrong name.
built=$("$bin_dir/carouseld" --version)
[ "$built" = "$version" ] || die "$bin_dir/carouseld says version $built, the source $version: rebuild (make build)"
# The machine the binaries are for, from the ELF header (not the build host).
case "$(od -An -tx1 -j18 -N2 "$bin_dir/carouseld" | tr -d ' \n')" in
  3e00) arch=x86_64 ;; b700) arch=aarch64 ;; 2800) arch=armhf ;; f300) arch=riscv64 ;;
  *) arch=$(uname -m) ;;
esac
# Swift's own libraries must be linked in (swift build --static-swift-stdlib).
if ldd "$bin_dir/carouseld" 2>/dev/null | grep -q 'libswift'; then
  die "$bin_dir/carouseld links Swift's runtime dynamically: build with --static-swift-stdlib (make build)"
fi

name=carouseld-$version-$arch
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/$name
install -d "$root/bin" "$root/systemd" "$root/etc" "$root/demo-images" "$root/man"
install -m 0755 "$bin_dir/carouseld" "$bin_dir/carouselctl" "$bin_dir/carouseld-web" "$root/bin/"
# Stripped: symbols and debug information are near half of the file, never needed on a
# board. A strip that fails (a binary for another machine than the host's
# strip knows) stops here rather than shipping them: STRIP=aarch64-linux-gnu-strip.
strip=${STRIP:-strip}
for b in carouseld carouselctl carouseld-web; do
  "$strip" --strip-unneeded "$root/bin/$b" || die "$strip could not strip $b (for another machine? set STRIP=ARCH-linux-gnu-strip)"
  if readelf -S --wide "$root/bin/$b" | grep -qE '\.(symtab|debug_info) '; then
    die "bin/$b still has a symbol table or debug information after $strip --strip-unneeded"
  fi
done
install -m 0755 scripts/install.sh "$root/install.sh"
install -m 0755 scripts/board-setup.sh "$root/board-setup.sh"
install -m 0644 systemd/carouseld.service systemd/carouseld-sync.service systemd/carouseld-sync.conf systemd/carouseld.sysusers systemd/carouseld.tmpfiles systemd/carouseld-backlight.rules systemd/carouseld-mqtt.conf systemd/carouseld-fbdev.conf systemd/carouseld-gpio.conf \
  systemd/carouseld-web.socket systemd/carouseld-web-https.socket systemd/carouseld-web-proxy@.service systemd/carouseld-web.service systemd/README.md "$root/systemd/"
install -m 0644 etc/carouseld/carouseld.ini "$root/etc/carouseld.ini"
install -m 0644 scripts/demo/images/* "$root/demo-images/"
install -m 0644 README.md "$root/README.md"
install -m 0644 man/carouseld.8 man/carouselctl.1 man/carouseld.ini.5 man/carouseld-web.8 "$root/man/"
mkdir -p "$out"
tarball=$out/$name.tar.gz
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$tarball.tmp" "$name"
mv -f "$tarball.tmp" "$tarball"
echo "$tarball ($(du -h "$tarball" | cut -f1))"
