#!/usr/bin/env bash
# Regenerates the image fixtures of Tests/CarouselImagingTests/Fixtures.
#
# The fixtures are committed (a few hundred bytes each), so tests need none of
# these tools; run this only to change them. They are made with tools that share
# no code with carouseld's decoder: Debian's ImageMagick 6 (`imagemagick`) draws
# and encodes, exiftool (`libimage-exiftool-perl`) writes EXIF orientation,
# heif-enc (`libheif-examples`: libheif's encoders x265 and libaom, not its
# decoders) writes HEIF and AVIF, and python3 edits header bytes for the
# damaged files and writes the GIF and WebP containers ImageMagick cannot
# (a frame smaller than the screen, a local colour map). ImageMagick's own
# -auto-orient makes the reference images the orientation tests compare with.
set -euo pipefail

for tool in convert exiftool heif-enc python3; do
  command -v "$tool" >/dev/null || {
    echo "make-fixtures: $tool is missing; apt-get install imagemagick libimage-exiftool-perl libheif-examples python3" >&2
    exit 1
  }
done

out="$(cd "$(dirname "$0")/.." && pwd)/Tests/CarouselImagingTests/Fixtures"
mkdir -p "$out"
cd "$out"
rm -f ./*.png ./*.jpg ./*.webp ./*.gif ./*.heic ./*.avif

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

# Animations show their first frame: the quadrants, then a blue frame. The
# animated WebP is assembled by python3 below from lossless frames (exact
# pixels): ImageMagick 6 appends a stray copy of the last frame after the
# animation's RIFF chunk, which a truncation test would cut harmlessly.
convert -delay 50 quadrants.png -size 64x32 xc:'#0000FF' -loop 0 -strip animated.gif

# GIF: the quadrants (four colours, exact), Adam7-like interlaced rows, and
# the green quadrant as the transparent index.
convert quadrants.png -strip GIF:quadrants.gif
convert quadrants.png -strip -interlace GIF GIF:interlaced.gif
convert quadrants.png -strip -transparent '#00FF00' GIF:transparent.gif

# HEIF (HEVC by x265) and AVIF (AV1 by libaom), 4:4:4 so that the quadrant
# colours survive; with alpha (the translucent quadrants of alpha.png).
heif-enc -q 90 -p chroma=444 -o quadrants.heic quadrants.png >/dev/null
heif-enc -A -q 90 -p chroma=444 -o quadrants.avif quadrants.png >/dev/null
heif-enc -A -q 95 -p chroma=444 -o alpha.avif alpha.png >/dev/null
# 10 bits a sample (from the 16-bit PNG): the decode budget counts it as
# dearer than 8 bits (libaom 3.6 asserts on a 10-bit AVIF from heif-enc).
heif-enc -b 10 -q 90 -o deep10.heic rgb16.png >/dev/null
# EXIF orientation 6 inside a HEIF: heif-enc copies the JPEG's EXIF block
# (orientation and all) and writes no irot, so only EXIF says "turn".
heif-enc -q 90 -p chroma=444 -o exif-6.heic orientation-6.jpg >/dev/null

convert -size 32x16 xc:'#FFFF00' -strip -define webp:lossless=true yellow.tmp.webp
convert -size 64x32 xc:'#0000FF' -strip -define webp:lossless=true blue.tmp.webp
python3 - <<'PY'
import struct

def boxes(d, start, end):
    """(offset, type, size, header length) of the boxes in d[start:end]."""
    i = start
    while i + 8 <= end:
        size, kind = struct.unpack(">I4s", d[i:i + 8])
        head = 8
        if size == 1:
            size, = struct.unpack(">Q", d[i + 8:i + 16]); head = 16
        elif size == 0:
            size = end - i
        yield i, kind, size, head
        i += size

def child(d, parent, kind, full=False):
    i, _, size, head = parent
    first = i + head + (4 if full else 0)
    return next(b for b in boxes(d, first, i + size) if b[1] == kind)

def with_transform(name, out, prop):
    """Adds an irot or imir property (box bytes `prop`) to the primary item,
    as Apple's cameras write irot: ipco gets the box, ipma the (essential)
    association, and every box around them and every file offset in iloc
    grows by the bytes inserted."""
    d = bytearray(open(name, "rb").read())
    meta = next(b for b in boxes(d, 0, len(d)) if b[1] == b"meta")
    iprp = child(d, meta, b"iprp", full=True)
    ipco, ipma = child(d, iprp, b"ipco"), child(d, iprp, b"ipma")
    pitm = child(d, meta, b"pitm", full=True)
    primary, = struct.unpack(">H", d[pitm[0] + 12:pitm[0] + 14])
    index = len(list(boxes(d, ipco[0] + 8, ipco[0] + ipco[2]))) + 1
    assert index < 128 and d[ipma[0] + 8] == 0 and d[ipma[0] + 11] & 1 == 0, "ipma version 0, 7-bit indices"
    # Find the primary item's entry in ipma: item_ID (16 bits), count, indices.
    j = ipma[0] + 16
    for _ in range(struct.unpack(">I", d[ipma[0] + 12:ipma[0] + 16])[0]):
        item, count = struct.unpack(">HB", d[j:j + 3])
        if item == primary:
            d[j + 2] = count + 1
            d[j + 3 + count:j + 3 + count] = bytes([0x80 | index])
            break
        j += 3 + count
    else:
        raise SystemExit("no ipma entry for the primary item")
    d[ipco[0] + ipco[2]:ipco[0] + ipco[2]] = prop  # before ipma, so ipma's edit above is unaffected
    delta = 1 + len(prop)
    for box, grow in ((meta, delta), (iprp, delta), (ipco, len(prop))):
        d[box[0]:box[0] + 4] = struct.pack(">I", box[2] + grow)
    ipma_start = ipma[0] + len(prop)
    d[ipma_start:ipma_start + 4] = struct.pack(">I", ipma[2] + 1)
    # iloc comes before iprp: shift the file offsets (construction method 0) of data after meta.
    iloc = child(d, meta, b"iloc", full=True)
    k = iloc[0] + 12
    version = d[iloc[0] + 8]
    off_size, len_size = d[k] >> 4, d[k] & 15
    base_size, index_size = d[k + 1] >> 4, (d[k + 1] & 15) if version else 0
    k += 2
    items, k = (struct.unpack(">H", d[k:k + 2])[0], k + 2) if version < 2 else (struct.unpack(">I", d[k:k + 4])[0], k + 4)
    def field(at, n, add):
        value = int.from_bytes(d[at:at + n], "big")
        if add and n: d[at:at + n] = (value + add).to_bytes(n, "big")
        return value
    for _ in range(items):
        k += 2 if version < 2 else 4
        method = 0
        if version:
            method = d[k + 1] & 15; k += 2
        k += 2  # data_reference_index
        base = field(k, base_size, 0)
        shift_base = method == 0 and base_size and base > meta[0]
        if shift_base: field(k, base_size, delta)
        k += base_size
        extents, = struct.unpack(">H", d[k:k + 2]); k += 2
        for _ in range(extents):
            k += index_size
            if method == 0 and not shift_base and (base + field(k, off_size, 0)) > meta[0]:
                field(k, off_size, delta)
            k += off_size + len_size
    open(out, "wb").write(d)

# irot: angle * 90 degrees anticlockwise. 3 turns a clockwise quarter, what
# EXIF's 6 says too (the iPhone case: both, agreeing); 1 turns anticlockwise
# while EXIF still says 6 (disagreeing). Either way only irot may count.
with_transform("exif-6.heic", "irot-3-exif-6.heic", struct.pack(">I4sB", 9, b"irot", 3))
with_transform("exif-6.heic", "irot-1-exif-6.heic", struct.pack(">I4sB", 9, b"irot", 1))
with_transform("quadrants.avif", "irot-3.avif", struct.pack(">I4sB", 9, b"irot", 3))

# HEIF and AVIF bombs: every ispe (the grid's and its tiles') says 30000x30000.
for name, out in (("quadrants.heic", "bomb.heic"), ("quadrants.avif", "bomb.avif")):
    d = bytearray(open(name, "rb").read())
    at = d.find(b"ispe")
    while at >= 0:
        d[at + 8:at + 16] = struct.pack(">II", 30000, 30000)
        at = d.find(b"ispe", at + 4)
    open(out, "wb").write(d)

# An AVIF whose picture item claims the codec "jpeg", which libheif 1.15
# does not take for a picture at all.
d = open("quadrants.avif", "rb").read()
assert d.count(b"av01") == 1
open("jpeg-coded.avif", "wb").write(d.replace(b"av01", b"jpeg"))

# GIF written by hand, with uncompressed LZW (a clear code before the code
# width could grow, so every code is a literal of min_code_size + 1 bits).
def gif(name, screen, frame, pixels, global_map, local_map=None, transparent=None):
    def table(colors):
        colors = colors + [(0, 0, 0)] * (4 - len(colors))
        return b"".join(bytes(c) for c in colors)
    out = b"GIF89a" + struct.pack("<HH", *screen)
    out += bytes([0x81 if global_map else 0x00, 0, 0])  # global map of 4 entries, or none
    if global_map: out += table(global_map)
    if transparent is not None:
        out += b"\x21\xf9\x04" + bytes([1, 0, 0, transparent, 0])
    x, y, w, h = frame
    out += b"\x2c" + struct.pack("<HHHH", x, y, w, h) + bytes([0x81 if local_map else 0x00])
    if local_map: out += table(local_map)
    bits, nbits, data = 0, 0, bytearray()
    def emit(code):
        nonlocal bits, nbits
        bits |= code << nbits; nbits += 3
        while nbits >= 8:
            data.append(bits & 255); bits >>= 8; nbits -= 8
    for i, p in enumerate(pixels):
        if i % 2 == 0: emit(4)  # clear
        emit(p)
    emit(5)  # end of information
    if nbits: data.append(bits & 255)
    out += bytes([2])  # min code size
    for i in range(0, len(data), 255):
        out += bytes([len(data[i:i + 255])]) + data[i:i + 255]
    out += b"\x00;"
    open(name, "wb").write(out)

def quadrant_indices(w, h):
    return [(0 if x < w // 2 else 1) + (0 if y < h // 2 else 2) for y in range(h) for x in range(w)]

red, green, blue, yellow = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)
# The first frame's local colour map overrides a global map of other colours.
gif("local-colormap.gif", (64, 32), (0, 0, 64, 32), quadrant_indices(64, 32),
    global_map=[(255, 255, 255)] * 4, local_map=[red, green, blue, yellow])
# A frame smaller than the screen (bottom-right quadrant), no transparent
# index: the rest of the screen is transparent; no global map, a local one.
gif("partial-frame.gif", (64, 32), (32, 16, 32, 16), [3] * (32 * 16),
    global_map=None, local_map=[red, green, blue, yellow])

# An animated WebP whose first frame (lossless yellow, 32x16) covers only
# the bottom-right quarter of its 64x32 canvas; the second covers it all.
def chunk(kind, data):
    return kind + struct.pack("<I", len(data)) + data + (b"\0" if len(data) & 1 else b"")
def vp8l(name):
    d = open(name, "rb").read()
    assert d[12:16] == b"VP8L", d[12:16]
    n, = struct.unpack("<I", d[16:20])
    return d[12:20 + n + (n & 1)]
def anmf(x, y, w, h, payload):
    u24 = lambda v: struct.pack("<I", v)[:3]
    return chunk(b"ANMF", u24(x // 2) + u24(y // 2) + u24(w - 1) + u24(h - 1) + u24(100) + b"\0" + payload)
def animation(name, flags, frames):
    canvas = bytes([flags, 0, 0, 0]) + struct.pack("<I", 63)[:3] + struct.pack("<I", 31)[:3]  # 64x32
    body = chunk(b"VP8X", canvas) + chunk(b"ANIM", struct.pack("<IH", 0xFF000000, 0)) + b"".join(frames)
    open(name, "wb").write(b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body)
# VP8X flags: 0x02 animation, 0x10 alpha.
animation("animated.webp", 0x02, [anmf(0, 0, 64, 32, vp8l("quadrants-lossless.webp")),
                                  anmf(0, 0, 64, 32, vp8l("blue.tmp.webp"))])
animation("partial-frame.webp", 0x12, [anmf(32, 16, 32, 16, vp8l("yellow.tmp.webp")),
                                       anmf(0, 0, 64, 32, vp8l("blue.tmp.webp"))])
PY
rm -f ./*.tmp.webp
# Not an image at all, under an image's name.
printf 'This is a text file that someone named photo.jpg.\n' > text.jpg

# Caption metadata ([overlay] caption = date / exif), written by exiftool:
# EXIF DateTimeOriginal and ImageDescription (IFD0 and the Exif IFD), XMP
# dc:description (JPEG APP1, PNG iTXt, WebP "XMP " chunk). XMP's text is
# UTF-8 and wins over ImageDescription.
meta() { # source output exiftool-arguments...
  cp "$1" "$2"
  exiftool -q -overwrite_original "${@:3}" "$2"
}
meta quadrants.jpg meta-date.jpg '-DateTimeOriginal=2024:03:12 14:30:00' '-ImageDescription=A day at the lake'
meta quadrants.jpg meta-xmp.jpg '-XMP-dc:Description=Café au lac, 東京 & שלום' '-ImageDescription=plain fallback'
# A camera whose clock was never set writes zeros (# skips exiftool's check).
meta quadrants.jpg meta-no-date.jpg '-DateTimeOriginal#=0000:00:00 00:00:00'
meta quadrants.png meta-xmp.png '-XMP-dc:Description=A PNG <described>' '-DateTimeOriginal=2023:12:31 23:59:59'
meta quadrants.webp meta-date.webp '-DateTimeOriginal=2021:07:04 09:00:00' '-XMP-dc:Description=WebP caption'

# Face regions (`[ken_burns]`, `fit = cover`): a 240x120 grey picture with a
# red "face" at its left edge (x 2 to 33, y 40 to 79), marked as XMP regions
# the way digiKam and Lightroom write them (MWG, a normalized centre and
# size) in every format that carries XMP, and the way Windows Photo Gallery
# does (Microsoft's MP regions, a normalized corner and size).
convert -size 240x120 xc:'#808080' -fill '#ff0000' -draw 'rectangle 2,40 33,79' -strip faces.tmp.png
mwg='-XMP-mwg-rs:RegionInfo={AppliedToDimensions={W=240,H=120,Unit=pixel},RegionList=[{Area={X=0.075,Y=0.5,W=0.1333,H=0.3333,Unit=normalized},Name=Ann,Type=Face}]}'
convert faces.tmp.png -quality 95 faces-mwg.jpg
cp faces.tmp.png faces-mwg.png
convert faces.tmp.png -define webp:lossless=true faces-mwg.webp
heif-enc -q 90 -p chroma=444 -o faces-mwg.heic faces.tmp.png >/dev/null
for f in faces-mwg.jpg faces-mwg.png faces-mwg.webp faces-mwg.heic; do
  exiftool -q -overwrite_original "$mwg" '-XMP-dc:Description=Ann at the window' "$f"
done
convert faces.tmp.png -quality 95 faces-mp.jpg
exiftool -q -overwrite_original '-XMP-MP:RegionInfoMP={Regions=[{PersonDisplayName=Ann,Rectangle=0.0083|, 0.3333|, 0.1333|, 0.3333}]}' faces-mp.jpg
# The same picture without a region: its crop is the centre's.
convert faces.tmp.png -quality 95 faces-none.jpg
rm -f faces.tmp.png

ls -l "$out"
