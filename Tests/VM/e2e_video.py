"""Video clips (issue 29), five scenarios on bochs with the uinput
touchscreen: a clip beside a picture plays at its time and ends, a drag
pauses it, autoplay waits for its end, damaged clips are skipped, a
screenshot mid-clip. Part of every run; `--only video` runs them alone
(every scenario whose name contains "video")."""
import os
import re
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import VMError
from e2e_support import H, W, Failure, ask_guest, event_lines, wait_event
from e2e_video_clip import (VIDEO_COLOUR_MAX, VIDEO_DIR, VIDEO_FRAMES, VIDEO_SECONDS, VIDEO_SIZE, VIDEO_SOCKET,
                            VIDEO_SPAN, area_colour, check_video_frame, clip_second, colour_distance,
                            make_video_clips, seconds_between, video_album, video_config, video_of, video_probe,
                            video_series, video_subscriber, wait_playing, wait_video_status)


def video_plays(s, touch, clips, colours):
    """(a) A picture and a clip: no clip plays while the picture is on
    screen (status has no video); `goto` the clip: `video: playing 1
    (PATH), 320x200 DECODER, 8 s` and didStartVideo; captures in each second
    of the clip, paused there (`pause` holds the frame, `play` plays on),
    and one as it plays to its end, show the colour of the second its
    position says, at least three of the four colours, in order; at the end `video: ended 1 (PATH) after F
    frames, K dropped` with F + K the clip's frames, didEndVideo with the
    same figures, status `ended`."""
    vm = s.vm
    video_album(s, [("1-mountains.jpg", "01-mountains.jpg"), ("2-colours.mp4", clips["colours.mp4"])])
    d = s.start(video_config(loop=False))
    sub = video_subscriber(s)
    status = ask_guest(vm, VIDEO_SOCKET, "status")
    if status.get("count") != 2:
        raise Failure(f"the album does not count the picture and the clip: {status}")
    if status.get("video") is not None:
        raise Failure(f"status has a video on the picture's page: {status['video']}")
    if "video: playing" in d.err:
        raise Failure("a clip plays while the carousel rests on the picture")
    # The series sends the goto itself and waits for `playing` in the guest.
    try:
        shots = video_series(s, "70-video", first="goto 1 0")
    except Failure:
        wait_playing(s, d, 1, "2-colours.mp4", timeout=1)
        raise
    m = wait_playing(s, d, 1, "2-colours.mp4")
    # The decoder is named as FFmpeg names it ("h264" today; another build or
    # a V4L2 decoder has another name): the line must name one, whichever.
    decoder = m.group(4).decode() if isinstance(m.group(4), bytes) else m.group(4)
    if (int(m.group(2)), int(m.group(3))) != VIDEO_SIZE or decoder == "?" or abs(float(m.group(5)) - VIDEO_SECONDS) > 0.2:
        raise Failure(f"the playing line says {m.group(0)!r}, not 320x200, a decoder, {VIDEO_SECONDS} s")
    # Its clip is decoded in a helper: none of FFmpeg's libraries is mapped
    # in the display process (which holds DRM master and the touchscreen),
    # and a `decode-clip` helper that has them runs beside it.
    cmdline = vm.run(f"tr '\\0' ' ' < /proc/{d.pid}/cmdline", timeout=30).out
    if " run " not in cmdline:
        raise Failure(f"process {d.pid} is not the daemon: {cmdline!r}")
    maps = vm.run(f"cat /proc/{d.pid}/maps", timeout=30).out
    mapped = [lib for lib in ("libavcodec", "libavformat", "libavutil", "libswscale") if lib in maps]
    if "libc.so" not in maps or mapped:
        raise Failure(f"the display process maps {', '.join(mapped) or 'no libc'} while a clip plays")
    helpers = vm.run("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q ' decode-clip ' "
                     "&& grep -q libavcodec $p/maps && echo ${p#/proc/}; done", timeout=30).out.split()
    if not helpers:
        raise Failure("no `carouseld decode-clip` helper with libavcodec mapped while the clip plays")
    s.figures["video: FFmpeg in the display process, helpers with it"] = [mapped, len(helpers)]
    seen = []
    for i, (name, before, after) in enumerate(shots):
        # All but the last are taken paused; the last as the clip plays on.
        second, _, _ = check_video_frame(s, name, colours, loop=False, probe=(before, after),
                                         expect_state=("playing", "ended") if i == len(shots) - 1 else ("paused",))
        seen.append(second)
    s.figures["video: seconds seen in captures"] = seen
    if seen != sorted(seen) or len(set(seen)) < 3:
        raise Failure(f"the captures showed the clip's seconds {seen}: not at least three, in order")
    m = s.wait_log(d, r"video: ended 1 \((\S*/2-colours\.mp4)\) after (\d+) frames, (\d+) dropped", timeout=60)
    frames, dropped = int(m.group(2)), int(m.group(3))
    s.figures["video: frames shown, dropped (320x200, 10 fps, TCG)"] = [frames, dropped]
    if frames < 1 or abs(frames + dropped - VIDEO_FRAMES) > 1:
        raise Failure(f"ended after {frames} frames, {dropped} dropped: not the clip's {VIDEO_FRAMES}")
    wait_event(sub, "didEndVideo", 0, timeout=30)
    events = [e for e in event_lines(sub) if e["event"] in ("didStartVideo", "didEndVideo")]
    start = [e for e in events if e["event"] == "didStartVideo"]
    end = [e for e in events if e["event"] == "didEndVideo"]
    if len(start) != 1 or start[0].get("index") != 1 or not str(start[0].get("image", "")).endswith("/2-colours.mp4") \
            or abs(float(start[0].get("duration") or 0) - VIDEO_SECONDS) > 0.2:
        raise Failure(f"didStartVideo is not one event {{index 1, the clip, duration {VIDEO_SECONDS}}}: {start}")
    if len(end) != 1 or (end[0].get("index"), end[0].get("frames"), end[0].get("dropped")) != (1, frames, dropped):
        raise Failure(f"didEndVideo is not one event {{index 1, frames {frames}, dropped {dropped}}}: {end}")
    v = video_of(ask_guest(vm, VIDEO_SOCKET, "status"), "after the end")
    if (v["state"], v["frames"], v["dropped"]) != ("ended", frames, dropped) or abs(float(v["duration"]) - VIDEO_SECONDS) > 0.2:
        raise Failure(f"status video after the end: {v}")
    sub.terminate()
    s.stop(d)


def video_swipe(s, touch, clips, colours):
    """(b) A finger that drags a playing clip aside: status `paused` and the
    position stands still; the clip's frame (one colour) moves with the
    finger, its left edge where the status offset puts it, the same frame
    at two finger positions; the finger brings it back: the carousel rests
    on the clip again and it plays on (`playing`, the position moves)."""
    vm = s.vm
    video_album(s, [("1-mountains.jpg", "01-mountains.jpg"), ("2-colours.mp4", clips["colours.mp4"])])
    d = s.start(video_config(loop=True))
    reply = ask_guest(vm, VIDEO_SOCKET, "goto 1 0")
    if reply.get("ok") is not True:
        raise Failure(f"goto 1 0: {reply}")
    wait_playing(s, d, 1, "2-colours.mp4")
    wait_video_status(s, "before the drag", lambda v: v["state"] == "playing" and v["position"] >= 0.3)
    y, finger = H // 2, 200
    touch.down(finger, y)
    shots = []
    for name, target in (("71-video-dragged", 640), ("72-video-dragged-further", 840)):
        while finger < target:
            finger += 40
            touch.move(finger, y)
        time.sleep(0.3)
        rgb, w, h, before, after, _ = video_probe(s, "capture", name)
        a, b = video_of(before, name), video_of(after, name)
        if (a["state"], b["state"]) != ("paused", "paused"):
            raise Failure(f"{name}: a drag does not pause the clip: state {a['state']!r}, then {b['state']!r}")
        if abs(float(a["position"]) - float(b["position"])) > 0.01:
            raise Failure(f"{name}: the position moves while the finger holds the clip: {a['position']} -> {b['position']}")
        offset = float(after["offset"])
        edge = round((1 - offset) * w)    # the clip's left edge: it moves right as the finger does
        if not 100 < edge < w - 100:
            raise Failure(f"{name}: status offset {offset} after dragging the finger {target - 200} px")
        # The clip's part: one colour, the paused position's.
        second = clip_second(rgb, w, h, colours, name, box=(edge + 16, h // 8, w - 8, h * 7 // 8))
        if second not in seconds_between(a["position"], b["position"], VIDEO_SECONDS, loop=True):
            raise Failure(f"{name}: the dragged frame is the clip's second {second}, the position {a['position']} s")
        # Left of the edge, the picture: not that colour.
        mean, _ = area_colour(rgb, w, (8, h // 8, max(edge - 16, 16), h * 7 // 8))
        if colour_distance(mean, colours[second]) < 2 * VIDEO_COLOUR_MAX:
            raise Failure(f"{name}: the clip's colour also fills the left of x = {edge}: the frame did not move")
        # Where the clip's colour starts: the first of the columns (every
        # 4 px) from which on every column is the clip's colour.
        columns = [all(colour_distance(rgb[(yy * w + x) * 3:(yy * w + x) * 3 + 3], colours[second]) <= VIDEO_COLOUR_MAX
                       for yy in range(h // 8, h * 7 // 8, 25)) for x in range(0, w, 4)]
        found = None
        for i in range(len(columns) - 1, -1, -1):
            if not columns[i]:
                break
            found = i * 4
        if found is None or abs(found - edge) > 12:
            raise Failure(f"{name}: the clip's frame starts at x = {found}, the status offset {offset} says {edge}")
        shots.append((edge, second, target))
    s.figures["video: dragged clip's edge at finger +440, +640 px"] = [e for e, _, _ in shots]
    if shots[1][0] - shots[0][0] < 100 or shots[0][1] != shots[1][1]:
        raise Failure(f"the frame did not move with the finger as the same frame: {shots}")
    while finger > 200:
        finger -= 40
        touch.move(finger, y)
    time.sleep(0.3)
    touch.up()
    s.wait_log(d, r"event didEndDecelerating")
    status = ask_guest(vm, VIDEO_SOCKET, "status")
    if status.get("index") != 1 or abs(float(status.get("offset", 0)) - 1) > 1e-6:
        raise Failure(f"the finger brought the clip back but the carousel rests elsewhere: {status}")
    p = float(wait_video_status(s, "back on the clip", lambda v: v["state"] == "playing")["position"])
    wait_video_status(s, "back on the clip", lambda v: v["state"] == "playing"
                      and (float(v["position"]) - p) % VIDEO_SECONDS >= 0.5, timeout=60)
    check_video_frame(s, "73-video-back", colours, loop=True)
    s.stop(d)


def video_autoplay(s, touch, clips, colours):
    """(c) Autoplay (interval 1 s) waits for a clip's end, then moves on:
    didStartVideo for the clip, no page change until didEndVideo and the
    `video: ended` line, then the next picture. `loop = true` too, which
    repeats a clip only while autoplay is off."""
    vm = s.vm
    video_album(s, [("1-mountains.jpg", "01-mountains.jpg"), ("2-colours.mp4", clips["colours.mp4"]),
                    ("3-sunset.jpg", "02-sunset.jpg")])
    # start_delay: the subscriber is there before autoplay first moves.
    d = s.start(video_config(loop=True, autoplay={"enabled": "true", "interval": "1", "transition": "0.3",
                                                  "start_delay": "6"}))
    sub = video_subscriber(s)
    wait_playing(s, d, 1, "2-colours.mp4", timeout=120)
    try:
        wait_event(sub, "didEndVideo", 0, timeout=120)
    except VMError:
        raise Failure(f"no didEndVideo event after the clip started: {sub.out[-1500:]}")
    s.wait_log(d, r"video: ended 1 \(\S*/2-colours\.mp4\) after \d+ frames, \d+ dropped", timeout=30)
    deadline = time.monotonic() + 60
    while not any(e["event"] == "currentItemIndexDidChange" and e.get("index") == 2 for e in event_lines(sub)):
        if time.monotonic() > deadline:
            raise Failure(f"autoplay did not move on to index 2 after the clip's end: {sub.out[-1500:]}")
        time.sleep(0.3)
    events = [e for e in event_lines(sub) if e["event"] in ("didStartVideo", "didEndVideo", "currentItemIndexDidChange")]
    names = [(e["event"], e.get("index")) for e in events]
    try:
        start = names.index(("didStartVideo", 1))
        end = names.index(("didEndVideo", 1))
        moved = names.index(("currentItemIndexDidChange", 2))
    except ValueError:
        raise Failure(f"events: {names}")
    if not start < end < moved or any(n[0] == "currentItemIndexDidChange" for n in names[start:end]):
        raise Failure(f"autoplay did not wait for the clip's end: {names}")
    # (Autoplay comes round to the clip again later: only up to the move.)
    if names[:moved].count(("didStartVideo", 1)) != 1:
        raise Failure(f"the clip played more than once with autoplay on (loop = true must not hold autoplay): {names}")
    sub.terminate()
    s.stop(d)


def video_damaged(s, touch, clips, colours):
    """(d) A clip cut inside its header and a file that is no video (both
    with a clip's extension) are each skipped with exactly one `skipping
    PATH: REASON` line, nothing else is; the album counts the two pictures
    and the good clip, and the carousel goes on: each item shows in turn,
    the good clip plays."""
    vm = s.vm
    files = [("1-mountains.jpg", "01-mountains.jpg"), ("2-truncated.mp4", clips["truncated.mp4"]),
             ("3-not-a-video.mkv", clips["not-a-video.mkv"]), ("4-colours.mp4", clips["colours.mp4"]),
             ("5-sunset.jpg", "02-sunset.jpg")]
    video_album(s, files)
    d = s.start(video_config(loop=False))
    broken = ["2-truncated.mp4", "3-not-a-video.mkv"]
    shown = [name for name, _ in files if name not in broken]
    # Neighbours are decoded ahead; stepping through the album decodes the rest.
    for i in range(len(files)):
        if all(re.search(rf"skipping \S*/{re.escape(n)}: ", d.err) for n in broken):
            break
        ask_guest(vm, VIDEO_SOCKET, "next")
        time.sleep(2)
    for name in broken:
        try:
            s.wait_log(d, rf"skipping \S*/{re.escape(name)}: ", timeout=60)
        except VMError:
            raise Failure(f"no 'skipping .../{name}: REASON' line: {d.err[-2000:]}")
    skips = re.findall(r"skipping (\S+): (.*)", d.err)
    s.figures["video: skip lines"] = "; ".join(f"{os.path.basename(p)}: {why}" for p, why in skips)
    for name in broken:
        n = sum(1 for p, _ in skips if p == f"{VIDEO_DIR}/{name}")
        if n != 1:
            raise Failure(f"{name} was reported {n} times, not once: {skips}")
    if len(skips) != len(broken):
        raise Failure(f"skipped more than the damaged clips: {skips}")
    if re.search(r"video: playing \d+ \(\S*/(2-truncated|3-not-a-video)", d.err):
        raise Failure("a damaged clip played")
    for i, name in enumerate(shown):
        reply = ask_guest(vm, VIDEO_SOCKET, f"goto {i} 0")
        if reply.get("ok") is not True:
            raise Failure(f"goto {i} 0: {reply}")
        status = ask_guest(vm, VIDEO_SOCKET, "status")
        if status.get("count") != len(shown) or status.get("image") != f"{VIDEO_DIR}/{name}":
            raise Failure(f"goto {i}: status shows {status.get('image')} of {status.get('count')}, not {name} of {len(shown)}")
        if name.endswith(".mp4"):
            wait_playing(s, d, i, name)
    s.stop(d)


def video_screenshot(s, touch, clips, colours):
    """(e) `screenshot PATH` while a clip plays shows the frame on screen,
    not the first frame that stands for the clip: taken when the position
    is past the first second, its colour is the position's second."""
    vm = s.vm
    video_album(s, [("1-colours.mp4", clips["colours.mp4"])])
    d = s.start(video_config(loop=True))
    wait_playing(s, d, 0, "1-colours.mp4")
    for attempt in range(5):
        # Not the first second (its colour is also the first frame's) and
        # not the last (the loop would bring the first back).
        wait_video_status(s, "a position inside the clip", lambda v: v["state"] == "playing"
                          and VIDEO_SPAN + 0.2 <= float(v["position"]) <= VIDEO_SECONDS - 1.6, timeout=60)
        rgb, w, h, before, after, reply = video_probe(s, "screenshot", f"74-video-screenshot-{attempt}")
        a, b = video_of(before, "screenshot"), video_of(after, "screenshot")
        if float(b["position"]) >= float(a["position"]) and float(a["position"]) >= VIDEO_SPAN + 0.2:
            break
    else:
        raise Failure("the position wrapped around during every screenshot (the guest is too slow for this check)")
    if (w, h) != (W, H):
        raise Failure(f"the screenshot is {w}x{h}, not {W}x{H}")
    second = clip_second(rgb, w, h, colours, "screenshot mid-clip")
    allowed = seconds_between(float(a["position"]), float(b["position"]), VIDEO_SECONDS, loop=True)
    s.figures["video: screenshot at position, second shown"] = [a["position"], second]
    if second == 0 and 0 not in allowed:
        raise Failure("the screenshot shows the clip's first frame, not the frame on screen mid-clip")
    if second not in allowed:
        raise Failure(f"the screenshot shows the clip's second {second} at position {a['position']}-{b['position']} s "
                      f"(seconds {sorted(allowed)} expected)")
    s.stop(d)


# The clip and its damaged copies, made once, at the first video scenario,
# on the host: (clips, colours).
clip = []


def with_clip(fn):
    def scenario(s, touch):
        if not clip:
            try:
                clip.extend(make_video_clips(s.out))
            except FileNotFoundError as e:
                raise Failure(f"the video scenarios make their clips with ffmpeg on the host: {e} "
                              "(apt-get install ffmpeg)")
        fn(s, touch, *clip)
    return scenario


SCENARIOS = [(name, with_clip(fn)) for name, fn in [
    ("video: a clip beside a picture plays when the carousel rests on it, frames at their time, ends", video_plays),
    ("video: a drag pauses the clip and moves its frame with the finger, coming back resumes", video_swipe),
    ("video: autoplay waits for the clip's end, then moves on", video_autoplay),
    ("video: a truncated clip and a non-video are each skipped with one line, the carousel goes on", video_damaged),
    ("video: a screenshot mid-clip shows the frame on screen", video_screenshot)]]
