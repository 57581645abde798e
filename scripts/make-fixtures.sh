#!/usr/bin/env bash
# Regenerates the image fixtures of Tests/CarouselImagingTests/Fixtures.
#
# The fixtures are committed (a few hundred bytes each), so tests need none of
# these tools; run this only to change them. They are made with tools that share
# no code with carouseld's decoder: Debian's ImageMagick 6 (`imagemagick`) draws
# and encodes, exiftool (`libimage-exiftool-perl`) writes EXIF orientation, and
# python3 edits header bytes for the damaged files. ImageMagick's own
# -auto-orient makes the reference images the orientation tests compare with.
set -euo pipefail

for tool in convert exiftool python3; do
  command -v "$tool" >/dev/null || {
    echo "make-fixtures: $tool is missing; apt-get install imagemagick libimage-exiftool-perl python3" >&2
    exit 1
  }
done

out="$(cd "$(dirname "$0")/.." && pwd)/Tests/CarouselImagingTests/Fixtures"
mkdir -p "$out"
cd "$out"
rm -f ./*.png ./*.jpg ./*.webp ./*.gif

# The base picture: 64x32, four solid quadrants, every one a different colour
# so that any rotation or mirror is visible (top-left red, top-right green,
# bottom-left blue, bottom-right yellow). Quadrant edges fall on 16-pixel
# boundaries, so JPEG blocks never straddle two colours.
quadrants() { # size-of-one-quadrant output
  convert -size "$1" xc:'#FF0000' xc:'#00FF00' +append \
    \( -size "$1" xc:'#0000FF' xc:'#FFFF00' +append \) -append "${@:2}"
}
quadrants 32x16 -strip PNG24:quadrants.png

# JPEG: 4:4:4 chroma (no subsampling) and high quality keep colours within a few levels.
convert quadrants.png -strip -sampling-factor 1x1 -quality 95 quadrants.jpg
convert quadrants.png -strip -sampling-factor 1x1 -quality 95 -interlace JPEG progressive.jpg
convert quadrants.png -strip -colorspace Gray -quality 95 gray.jpg
convert quadrants.png -strip -colorspace CMYK -sampling-factor 1x1 -quality 95 cmyk.jpg
# 800x600 for DCT scaling: 1/8 is exactly 100x75.
quadrants 400x300 -strip -sampling-factor 1x1 -quality 90 large.jpg

# WebP, lossy and lossless.
convert quadrants.png -strip -quality 95 quadrants.webp
convert quadrants.png -strip -define webp:lossless=true quadrants-lossless.webp
quadrants 400x300 -strip -quality 80 large.webp

# PNG flavours, all showing the same quadrants (or a two-tone for 1-bit gray).
convert quadrants.png -strip PNG8:palette.png
convert quadrants.png -strip -interlace PNG PNG24:interlaced.png
convert quadrants.png -strip -define png:bit-depth=16 PNG48:rgb16.png
convert -size 32x32 xc:black xc:white +append -strip -define png:color-type=0 -define png:bit-depth=1 gray1.png
# Palette with a transparent entry (tRNS): the green quadrant is see-through.
convert quadrants.png -strip -transparent '#00FF00' PNG8:palette-trns.png

# Reduced decoding. ImageMagick's built-in logo (640x480, text and flat
# colours with sharp edges) as a real picture, opaque and with a transparent
# background (tRNS): the streaming box reduction is compared with a full
# decode scaled by pixman.
convert logo: -strip PNG8:logo.png
convert logo: -strip -fuzz 10% -transparent white PNG8:logo-trns.png
# 62 MP (7900x7900, under the default max_pixels) and a 9 MP Adam7 file, both
# 1-bit gray checkers of 2x2 quadrants (black, white / white, black), written
# by python3 so that repeated rows use PNG's Up filter and deflate to a few KB.
python3 - <<'PY'
import struct, zlib
def write(name, w, h, interlaced):
    def packed(xs, y):
        out = bytearray((len(xs) + 7) // 8)
        for i, x in enumerate(xs):
            if (x >= w // 2) != (y >= h // 2): out[i >> 3] |= 0x80 >> (i & 7)
        return bytes(out)
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)] \
        if interlaced else [(0, 0, 1, 1)]
    raw = bytearray()
    for x0, y0, dx, dy in passes:
        xs = list(range(x0, w, dx))
        if not xs: continue
        previous = None
        for y in range(y0, h, dy):
            row = packed(xs, y)
            # Up (all zero bytes) on rows that repeat the one above.
            raw += (b"\2" + bytes(len(row))) if row == previous else (b"\0" + row)
            previous = row
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", w, h, 1, 0, 0, 0, 1 if interlaced else 0)
    open(name, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
                           + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))
write("huge-gray1.png", 7900, 7900, False)
write("large-gray1-interlaced.png", 3000, 3000, True)
PY

# Translucency: top-left red at alpha 0x80, top-right fully transparent,
# bottom-left opaque blue, bottom-right yellow at alpha 0x40.
convert -size 32x16 xc:'#FF000080' xc:'#00FF0000' +append \
  \( -size 32x16 xc:'#0000FFFF' xc:'#FFFF0040' +append \) -append -strip PNG32:alpha.png
convert alpha.png -strip -define png:bit-depth=16 PNG64:alpha16.png
convert alpha.png -strip -colorspace Gray -define png:color-type=4 gray-alpha.png
convert alpha.png -strip -define webp:lossless=true alpha.webp

# EXIF orientation 1..8 on the same stored pixels, and ImageMagick's upright
# rendering of each (-auto-orient) as the reference.
for n in 1 2 3 4 5 6 7 8; do
  for ext in jpg png webp; do
    src=quadrants.$ext
    [ "$ext" = webp ] && src=quadrants-lossless.webp
    # exiftool writes eXIf into PNG and an EXIF chunk (plus VP8X) into WebP.
    cp "$src" "orientation-$n.$ext"
    exiftool -q -overwrite_original -n -Orientation="$n" "orientation-$n.$ext"
  done
  convert "orientation-$n.jpg" -auto-orient -strip PNG24:"upright-$n.png"
done
cp large.jpg large-rotated.jpg
exiftool -q -overwrite_original -n -Orientation=6 large-rotated.jpg

# Damaged files. python3 edits bytes; CRCs are recomputed where noted so that
# the decoder meets the intended damage and not a checksum error first.
python3 - <<'PY'
import struct, zlib

def chunks(png):
    i = 8
    while i < len(png):
        n, = struct.unpack(">I", png[i:i + 4])
        yield i, png[i + 4:i + 8], n
        i += 12 + n

png = bytearray(open("quadrants.png", "rb").read())

# A PNG "bomb": IHDR claims 30000x30000 (900 MP); valid CRC, tiny file.
bomb = bytearray(png)
for i, kind, n in chunks(bomb):
    if kind == b"IHDR":
        bomb[i + 8:i + 16] = struct.pack(">II", 30000, 30000)
        bomb[i + 8 + n:i + 12 + n] = struct.pack(">I", zlib.crc32(bomb[i + 4:i + 8 + n]))
open("bomb.png", "wb").write(bomb)

# Bad CRC on the image data chunk.
bad = bytearray(png)
for i, kind, n in chunks(bad):
    if kind == b"IDAT":
        bad[i + 8 + n] ^= 0xFF
open("bad-crc.png", "wb").write(bad)

# A PNG with zero width in IHDR (valid CRC).
zero = bytearray(png)
for i, kind, n in chunks(zero):
    if kind == b"IHDR":
        zero[i + 8:i + 12] = struct.pack(">I", 0)
        zero[i + 8 + n:i + 12 + n] = struct.pack(">I", zlib.crc32(zero[i + 4:i + 8 + n]))
open("zero-width.png", "wb").write(zero)

# A JPEG bomb: the SOF0 frame header claims 30000x30000.
jpg = bytearray(open("quadrants.jpg", "rb").read())
sof = jpg.find(b"\xff\xc0")
jpg[sof + 5:sof + 9] = struct.pack(">HH", 30000, 30000)  # height, width
open("bomb.jpg", "wb").write(jpg)

# A WebP bomb: the VP8 frame header claims 16383x16383 (the format's maximum, 268 MP).
webp = bytearray(open("quadrants.webp", "rb").read())
assert webp[12:16] == b"VP8 ", webp[12:16]
webp[26:30] = struct.pack("<HH", 16383, 16383)
open("bomb.webp", "wb").write(webp)

# EXIF whose IFD0 offset points far past the end: must decode, unrotated.
exif = bytearray(open("orientation-6.jpg", "rb").read())
tiff = exif.find(b"Exif\x00\x00") + 6
order = ">" if exif[tiff:tiff + 2] == b"MM" else "<"
exif[tiff + 4:tiff + 8] = struct.pack(order + "I", 0xFFFFFFF0)
open("exif-bad-offset.jpg", "wb").write(exif)

# EXIF whose IFD0 claims 65535 entries in a 100-byte block.
exif = bytearray(open("orientation-6.jpg", "rb").read())
ifd = tiff + struct.unpack(order + "I", exif[tiff + 4:tiff + 8])[0]
exif[ifd:ifd + 2] = struct.pack(order + "H", 0xFFFF)
open("exif-bad-count.jpg", "wb").write(exif)

# A JPEG APP1 segment whose length runs past the end of the file.
exif = bytearray(open("orientation-6.jpg", "rb").read())
app1 = exif.find(b"\xff\xe1")
exif[app1 + 2:app1 + 4] = struct.pack(">H", 0xFFFF)
open("exif-bad-length.jpg", "wb").write(exif)
PY

# Not an image at all, under an image's name.
printf 'This is a text file that someone named photo.jpg.\n' > text.jpg
# An animated WebP (two frames), which the decoder refuses by name.
convert -delay 50 -size 16x16 xc:red xc:blue -loop 0 -strip animated.webp
# A GIF, a format we do not decode.
convert quadrants.png -strip GIF:not-supported.gif

ls -l "$out"
