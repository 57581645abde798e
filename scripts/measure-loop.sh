#!/bin/bash
# A slide frame's loop work, in instructions (by hand; never part of the
# suite): carouseld on an offscreen 640x400 display, where a slide only moves
# the scan-out window and no pixel is written, three 64x48 pictures, autoplay
# every 0.2 s with a 1 s transition and no page dots, under callgrind for
# SECONDS (default 150); then the same with autoplay off. The difference in
# instructions over the difference in frames presented is the loop's work per
# frame. callgrind counts the same for the same binary and inputs whatever
# else the machine does (../shared/notes/measuring.md).
#
#   scripts/measure-loop.sh [BINARY] [SECONDS]
#
# With KEEP=FOLDER, callgrind's files and the logs are kept there
# (callgrind_annotate --inclusive=yes FOLDER/sliding.out shows where it goes).
set -euo pipefail
binary=${1:-.build-static/release/carouseld}
seconds=${2:-150}
if [ -n "${KEEP:-}" ]; then
    work=$KEEP
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
mkdir "$work/album"
for colour in red green blue; do convert -size 64x48 "xc:$colour" "$work/album/$colour.jpg"; done
# Debian 12's valgrind cannot read the toolchain's DWARF 5: a copy without it.
objcopy --strip-debug "$binary" "$work/carouseld"
run() {  # NAME AUTOPLAY
    cat > "$work/$1.ini" <<INI
[images]
path = $work/album
[autoplay]
enabled = $2
interval = 0.2
transition = 1.0
[indicator]
enabled = false
INI
    valgrind --tool=callgrind --callgrind-out-file="$work/$1.out" "$work/carouseld" run \
        --config "$work/$1.ini" --display offscreen:640x400 > "$work/$1.log" 2>&1 &
    local pid=$!
    sleep "$seconds"
    kill -TERM "$pid"
    wait "$pid" || true
}
run sliding true &
run resting false &
wait
total() { grep -m1 '^summary:' "$work/$1.out" | awk '{print $2}'; }
frames() { grep -o 'presented [0-9]* frames' "$work/$1.log" | awk '{print $2}'; }
s_ins=$(total sliding); r_ins=$(total resting)
s_frames=$(frames sliding); r_frames=$(frames resting)
echo "sliding: $s_ins instructions, $s_frames frames; resting: $r_ins instructions, $r_frames frames"
echo "loop work per slide frame: $(( (s_ins - r_ins) / (s_frames - r_frames) )) instructions"
