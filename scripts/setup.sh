#!/usr/bin/env bash
# Installs what building and testing carouseld needs on Debian 12 (bookworm).
# Idempotent: packages already present are not fetched again.
set -euo pipefail

# Build and test dependencies, one group a line so that each has a reason.
packages=(
  pkg-config
  libjpeg62-turbo-dev libpng-dev libwebp-dev libpixman-1-dev  # image decoding and scaling (CarouselImaging); libwebp-dev has libwebpdemux too
  libgif-dev  # GIF's first frame (CarouselImaging, CGIF)
  libheif-dev  # HEIF/HEIC and AVIF (CarouselImaging, CHeifLoader: the header; the library is opened with dlopen); Debian 12's libheif1 brings libde265, dav1d and libaom
  libdrm-dev  # the DRM/KMS display (CarouselDRM)
  libinput-dev libudev-dev  # touch, pointer and keyboard input (CarouselInput; libinput-dev for CLibinput's header only: libinput is opened with dlopen by CInputLoader, libudev is linked)
  libharfbuzz-dev libfreetype-dev libfontconfig-dev  # [overlay] text: shaping, rasterising, finding fonts (CarouselText, CTextLoader: the headers; the libraries are opened with dlopen by the first text drawn)
  fonts-dejavu-core  # the default [overlay] font, and the one the text tests compare with ImageMagick
  fonts-wqy-zenhei  # a small CJK font: the text tests check fontconfig's fallback for ideographs DejaVu lacks
  libmosquitto-dev  # the MQTT client on the daemon's loop (CMosquittoLoader: the header; the library is opened with dlopen, [mqtt])
  libgpiod-dev  # a presence sensor on a GPIO line (CGPIODLoader: the header; the library is opened with dlopen, [power] presence = gpio:...)
  mosquitto mosquitto-clients openssl  # a real broker, mosquitto_sub/pub/passwd and a test CA for the MQTT tests, started by the tests on loopback
  python3 python3-venv  # Tests/Servers/ha_e2e.py: Home Assistant 2024.3.3 from PyPI in a virtual environment of Debian's Python 3.11 (.build-ha/)
  imagemagick  # reference frames for the renderer tests (CarouselRenderTests), built independently
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev  # video clips (CarouselVideo, CVideoLoader: the headers; FFmpeg's libraries are opened with dlopen by the first clip)
  ffmpeg  # the video tests make their clips with the ffmpeg CLI and compare frames with what it extracts (CarouselVideoTests)
  libcurl4-openssl-dev  # carouseld sync's HTTP (CCurlLoader: the header; libcurl is opened with dlopen by the sync only)
  rclone  # carouseld sync's remotes, and `rclone serve webdav`, the real server its tests fetch from
  dpkg-dev debhelper lintian  # make deb: the Debian package (scripts/deb.sh) and its check
  chromium chromium-driver  # the frame's page tested in a real browser at a phone's size (Tests/Servers/web_browser.py, Selenium from PyPI in .build-web/)
  man-db groff-base  # scripts/check-man.sh renders the manual pages in man/ with man -l and groff, failing on any warning
)
# The C kernels' twin test (scripts/kernels.sh) builds for x86-64, arm64
# and armhf with the Swift toolchain's clang: for every architecture but
# this machine's own, Debian's cross C library, libgcc and linker, and
# qemu-user to run the build.
packages+=(qemu-user)
native=$(dpkg --print-architecture)
declare -A cross_binutils=([amd64]=binutils-x86-64-linux-gnu [arm64]=binutils-aarch64-linux-gnu
                           [armhf]=binutils-arm-linux-gnueabihf)
for arch in amd64 arm64 armhf; do
  [ "$arch" = "$native" ] && continue
  packages+=("libc6-dev-$arch-cross" "libgcc-12-dev-$arch-cross" "${cross_binutils[$arch]}")
done
# Only scripts/make-fixtures.sh, run by hand to change the committed test
# fixtures, needs more: libimage-exiftool-perl (EXIF orientation) and
# libheif-examples (heif-enc, with libheif's encoders x265 and libaom).
# Fuzzing (scripts/fuzz.sh) needs no package: libFuzzer and AddressSanitizer
# come with the Swift toolchain's clang (lib/swift/clang/lib/linux).

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
