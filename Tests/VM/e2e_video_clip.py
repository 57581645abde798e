"""The clip the video scenarios (e2e_video.py) play, and how what is on
screen is read against it: made with ffmpeg on the host, probes of the
daemon's status around a capture in the guest, and the clip's second a
capture shows."""
import json
import math
import os
import re
import subprocess
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import VMError
from e2e_support import GUEST_REPO, SUBSCRIBE, Failure, ask_guest, read_png_rgb

# The clip is made on the host with ffmpeg at test time: 320x200 (the
# panel's 16:10, so the daemon's fit fills the screen with it), 10 fps, 8 s,
# one solid colour per two seconds. Solid colours make the checks independent of
# the moment a capture lands inside a second and of the decoders' rounding:
# each capture's colour is read in the middle of the screen and must be the
# colour of the second the daemon's `status` position says (read just before
# and just after the capture, in the guest), the colours themselves as
# ffmpeg decodes the clip on the host.

VIDEO_SOCKET = "/tmp/e2e-video.sock"
VIDEO_DIR = "/tmp/e2e-video"
VIDEO_SIZE, VIDEO_FPS = (320, 200), 10
# Far apart from each other (> 150 in RGB distance) and from black and white.
VIDEO_COLOURS = ["0xC83228", "0x28B43C", "0x2846D2", "0xDCC828"]
# Seconds each colour lasts: two, so that captures (a second or so apart
# under TCG, after the daemon's first line is seen) meet at least three.
VIDEO_SPAN = 2
VIDEO_SECONDS = len(VIDEO_COLOURS) * VIDEO_SPAN
VIDEO_FRAMES = VIDEO_FPS * VIDEO_SECONDS
# How much older than the reported position the frame on screen may be: a
# frame interval, plus drawing it under TCG. The contract does not say
# whether `position` is the time stamp of the frame on screen or the clip's
# clock; with the first, this could be 0.
VIDEO_LAG = 0.6
# A capture's clip colour must be this close (RGB distance) to the nearest
# reference colour, and every sampled pixel of the clip area this close to
# their mean (a torn or blended frame is not one colour).
VIDEO_COLOUR_MAX = 40
VIDEO_SPREAD_MAX = 30

# In the guest: `status`, then a QMP capture through the agent (`capture
# NAME`) or the daemon's own `screenshot PATH`, then `status` again, back to
# back: the position the daemon reported brackets the frame captured.
VIDEO_PROBE = r'''
import json, socket, subprocess, sys
def ask(line):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall((line + "\n").encode())
    reply = json.loads(s.makefile().readline())
    s.close()
    return reply
before = ask("status")
if sys.argv[2] == "capture":
    subprocess.run(["vm-request", "capture", sys.argv[3]], check=True, stdout=subprocess.DEVNULL)
    reply = None
else:
    reply = ask("screenshot " + sys.argv[3])
after = ask("status")
print(json.dumps({"before": before, "reply": reply, "after": after}))
'''


# In the guest, one process for a request (a goto to the clip) and a series
# of captures while the clip plays (no interpreter started per capture, none
# waiting on the host to see a log line): in each second of the clip, once
# a frame is shown and `status` says the position is VIDEO_LAG into it,
# `pause` (the clip holds its frame and its position), status, a QMP
# capture, status, `play`; after the last second's, one more capture as the
# clip plays on to its end. How long a capture takes (over 2 s on a slow
# host) then moves no frame under it, and no second is missed for it.
# Prints one JSON line per capture (name, status before and after), then
# one with "end": the last status.
VIDEO_SERIES = r"""
import json, socket, subprocess, sys, time
sock, prefix, span, seconds, lag = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
def ask(line):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall((line + "\n").encode())
    reply = json.loads(s.makefile().readline())
    s.close()
    return reply
reply = ask(sys.argv[6])
if reply.get("ok") is not True:
    print(json.dumps({"error": f"{sys.argv[6]}: {reply}"}), flush=True)
    sys.exit(1)
def video():
    return ask("status").get("video") or {}
def capture(name):
    before = ask("status")
    subprocess.run(["vm-request", "capture", name], check=True, stdout=subprocess.DEVNULL)
    print(json.dumps({"name": name, "before": before, "after": ask("status")}), flush=True)
deadline = time.monotonic() + 90
while video().get("state") != "playing":
    if time.monotonic() > deadline:
        print(json.dumps({"error": "no clip plays 90 s after the goto"}), flush=True)
        sys.exit(1)
    time.sleep(0.02)
deadline = time.monotonic() + 120
n, done = 0, set()
while time.monotonic() < deadline:
    v = video()
    if v.get("state") != "playing":
        break
    p = float(v["position"])
    second = int(p // span)
    if v.get("frames", 0) < 1 or second >= seconds or second in done or p - second * span < lag:
        time.sleep(0.02)
        continue
    if ask("pause").get("ok") is not True:
        print(json.dumps({"error": "pause refused"}), flush=True)
        break
    capture(f"{prefix}-{n}"); n += 1
    done.add(second)
    if ask("play").get("ok") is not True:
        print(json.dumps({"error": "play refused"}), flush=True)
        break
    if second == seconds - 1:
        capture(f"{prefix}-{n}"); n += 1
        break
print(json.dumps({"end": ask("status")}), flush=True)
"""


def make_video_clips(out):
    """The colour clip (made with ffmpeg on the host, fixed settings: the
    same bytes every run), two damaged copies of it, and the clip's colour
    for each second as ffmpeg decodes it (the middle frame of each second,
    averaged). Returns ({name: bytes}, [(r, g, b)])."""
    folder = os.path.join(out, "video-clips")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "colours.mp4")
    w, h = VIDEO_SIZE
    inputs = []
    for c in VIDEO_COLOURS:
        inputs += ["-f", "lavfi", "-i", f"color=c={c}:s={w}x{h}:r={VIDEO_FPS}:d={VIDEO_SPAN}"]
    concat = "".join(f"[{i}:v]" for i in range(len(VIDEO_COLOURS))) + f"concat=n={len(VIDEO_COLOURS)}:v=1:a=0"
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", *inputs, "-filter_complex", concat,
                    "-c:v", "libx264", "-preset", "medium", "-crf", "18", "-g", str(VIDEO_FPS), "-pix_fmt", "yuv420p",
                    "-threads", "1", "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:v", "+bitexact",
                    "-movflags", "+faststart", path], check=True, capture_output=True)
    good = open(path, "rb").read()
    colours = []
    for second in range(len(VIDEO_COLOURS)):
        middle = (second + 0.5) * VIDEO_SPAN
        raw = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-ss", f"{middle}", "-i", path,
                              "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                             check=True, capture_output=True).stdout
        if len(raw) != w * h * 3:
            raise Failure(f"ffmpeg gave {len(raw)} bytes for a {w}x{h} frame at {middle} s")
        colours.append(tuple(round(sum(raw[k::3]) / (w * h)) for k in range(3)))
    # Cut inside the header (moov comes first, +faststart): the clip cannot
    # be opened at all. (Cutting the coded frames is no sure test: H.264
    # decoders conceal much of a damaged frame without an error.)
    mdat = good.find(b"mdat")
    if mdat < 700:
        raise Failure(f"the clip's mdat is at byte {mdat}: the truncation would not fall inside its header")
    clips = {"colours.mp4": good, "truncated.mp4": good[:600],
             "not-a-video.mkv": b"carouseld e2e: these bytes are no Matroska file\n" * 64}
    for name, data in clips.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    return clips, colours


def colour_distance(a, b):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


def area_colour(rgb, width, box, step=16):
    """Mean colour of the pixels sampled every `step` inside box, and the
    largest distance of a sample from that mean."""
    x0, y0, x1, y1 = box
    px = [tuple(rgb[(y * width + x) * 3:(y * width + x) * 3 + 3])
          for y in range(y0, y1, step) for x in range(x0, x1, step)]
    mean = tuple(sum(p[k] for p in px) / len(px) for k in range(3))
    return mean, max(colour_distance(p, mean) for p in px)


def clip_second(rgb, width, height, colours, what, box=None):
    """Which second of the colour clip fills `box` (the screen's middle by
    default): the index of its colour. Failure if the area is not one
    colour, or none of the clip's."""
    box = box or (width // 8, height // 8, width * 7 // 8, height * 7 // 8)
    mean, spread = area_colour(rgb, width, box)
    nearest = min(range(len(colours)), key=lambda i: colour_distance(mean, colours[i]))
    distance = colour_distance(mean, colours[nearest])
    if spread > VIDEO_SPREAD_MAX:
        raise Failure(f"{what}: the clip's area is not one colour (mean {tuple(round(c) for c in mean)}, "
                      f"a sample {spread:.0f} from it): a torn, blended or missing frame")
    if distance > VIDEO_COLOUR_MAX:
        raise Failure(f"{what}: the clip's area is {tuple(round(c) for c in mean)}, none of the clip's colours "
                      f"{colours} (nearest {distance:.0f} away)")
    return nearest


def seconds_between(p0, p1, duration, loop):
    """The seconds of the clip whose frame may be on screen between two
    readings of the position p0 and p1 (a frame up to VIDEO_LAG older than
    p0; a looping clip's position wraps)."""
    if p1 < p0:
        p1 += duration
    seconds, x = set(), p0 - VIDEO_LAG
    while True:
        t = x % duration if loop else min(max(x, 0.0), duration - 1e-6)
        seconds.add(min(int(t / VIDEO_SPAN), len(VIDEO_COLOURS) - 1))
        if x >= p1:
            return seconds
        x = min(x + 0.05, p1)


def video_probe(s, op, name):
    """status, a capture (`capture`: QMP, through the agent) or the daemon's
    own `screenshot`, status: (the RGB, width, height, video status before,
    after, the screenshot reply)."""
    vm = s.vm
    if op == "capture":
        r = vm.run(["python3", "-c", VIDEO_PROBE, VIDEO_SOCKET, "capture", name], timeout=120)
    else:
        r = vm.run(["python3", "-c", VIDEO_PROBE, VIDEO_SOCKET, "screenshot", f"{VIDEO_DIR}-{name}.png"], timeout=120)
    try:
        probe = json.loads(r.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise Failure(f"video probe {name}: rc {r.rc}: {r.out[-500:]} {r.err[-1500:]}")
    if op == "capture":
        path = os.path.join(s.out, f"{name}.png")
    else:
        # `screenshot PATH` replies {"ok": true, "path": PATH} once the file is there.
        if (probe["reply"] or {}).get("ok") is not True:
            raise Failure(f"screenshot mid-clip: the reply is {probe['reply']}")
        path = os.path.join(s.out, f"{name}.png")
        with open(path, "wb") as f:
            f.write(vm.get(f"{VIDEO_DIR}-{name}.png"))
    w, h, rgb = read_png_rgb(path)
    return rgb, w, h, probe["before"], probe["after"], probe["reply"]


def video_of(status, what):
    v = status.get("video")
    if not isinstance(v, dict):
        raise Failure(f"{what}: status has no video ({v!r}) while the page is a clip: {status}")
    return v


def check_video_frame(s, name, colours, loop, expect_state=("playing",), probe=None):
    """One capture while a clip is on the page: the colour on screen is
    that of the second the position (before, after) brackets. `probe`: the
    statuses (before, after) of a capture VIDEO_SERIES took as `name`; else
    one is taken now. Returns (second on screen, video status before,
    after)."""
    if probe:
        before, after = probe
        w, h, rgb = read_png_rgb(os.path.join(s.out, f"{name}.png"))
    else:
        rgb, w, h, before, after, _ = video_probe(s, "capture", name)
    a, b = video_of(before, name), video_of(after, name)
    if a["state"] not in expect_state:
        raise Failure(f"{name}: status video state {a['state']!r}, not {' or '.join(expect_state)}: {a}")
    second = clip_second(rgb, w, h, colours, name)
    allowed = seconds_between(a["position"], b["position"], VIDEO_SECONDS, loop)
    if second not in allowed:
        raise Failure(f"{name}: the screen shows the clip's second {second} (colour {colours[second]}) while the "
                      f"position went {a['position']} -> {b['position']} s (seconds {sorted(allowed)} expected)")
    return second, a, b


def video_series(s, prefix, first):
    """Runs VIDEO_SERIES in the guest: the request `first` (a goto to the
    clip), then captures while the clip plays: [(capture name, status
    before, after)], the captures in s.out."""
    r = s.vm.run(["python3", "-c", VIDEO_SERIES, VIDEO_SOCKET, prefix, str(VIDEO_SPAN), str(len(VIDEO_COLOURS)),
                  str(VIDEO_LAG), first], timeout=300)
    shots, end = [], None
    for line in r.out.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if "error" in item:
            raise Failure(f"the capture series: {item['error']}")
        if "end" in item:
            end = item["end"]
        elif "name" in item:
            shots.append((item["name"], item["before"], item["after"]))
    if r.rc != 0 or end is None:
        raise Failure(f"the capture series: rc {r.rc}: {r.out[-1000:]} {r.err[-1500:]}")
    return shots


def video_album(s, files):
    """VIDEO_DIR in the guest holding `files`: (name in the album, source)
    where source is a demo picture's name or the bytes of a clip."""
    vm = s.vm
    vm.run(f"rm -rf {VIDEO_DIR} && mkdir -p {VIDEO_DIR}", timeout=30, check=True)
    for name, source in files:
        if isinstance(source, bytes):
            vm.put(f"{VIDEO_DIR}/{name}", source)
        else:
            vm.run(["cp", f"{GUEST_REPO}/scripts/demo/images/{source}", f"{VIDEO_DIR}/{name}"], timeout=30, check=True)


def video_config(loop, autoplay=None):
    extra = {"control": {"socket": VIDEO_SOCKET}, "images": {"path": VIDEO_DIR},
             "indicator": {"enabled": "false"}, "video": {"enabled": "true", "loop": "true" if loop else "false"}}
    if autoplay:
        extra["autoplay"] = autoplay
    return extra


def wait_playing(s, d, index, name, timeout=90):
    """The daemon's `video: playing N (PATH), WxH CODEC, D s` line for the
    clip `name` at index N; its match."""
    try:
        return s.wait_log(d, rf"video: playing {index} \((\S*/{re.escape(name)})\), (\d+)x(\d+) (\S+), ([\d.]+) s",
                          timeout=timeout)
    except VMError as e:
        raise Failure(f"no 'video: playing {index} (.../{name}), WxH CODEC, D s' line within {timeout} s "
                      f"(does this carouseld play clips? issue 29): {str(e)[-1500:]}")


def wait_video_status(s, what, predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        v = ask_guest(s.vm, VIDEO_SOCKET, "status").get("video")
        if isinstance(v, dict) and predicate(v):
            return v
        if time.monotonic() > deadline:
            raise Failure(f"{what}: status video is {v} after {timeout} s")
        time.sleep(0.2)


def video_subscriber(s):
    sub = s.vm.spawn(["python3", "-u", "-c", SUBSCRIBE, VIDEO_SOCKET])
    sub.wait_output(r'"ok":true', timeout=60)
    return sub
