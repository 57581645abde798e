#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer and runs them.
#
#   scripts/fuzz.sh                  every target, 10 minutes each (by hand)
#   scripts/fuzz.sh png 3600         one target for an hour
#   scripts/fuzz.sh all 20           every target 20 s (what scripts/test.sh runs)
#
# Targets (Sources/CarouselFuzzing, one input format each): config, control,
# exif, jpeg, png, webp, gif, heif, avif, simulate. Each starts from its committed seeds
# (Fuzz/corpus/TARGET) and every input that ever failed
# (Fuzz/regressions/TARGET); what it learns stays in .build-fuzz/corpus/TARGET
# for the next run on this machine. A failing input (a trap, a sanitizer
# report, a broken property, a timeout or running out of memory) is written
# to Fuzz/crashes/ and the run fails. Fix the bug, then move the input to
# Fuzz/regressions/TARGET/: `swift test` replays it from then on.
#
# The last line is "fuzz: N passed, M failed"; each target's line says how
# many inputs it tried.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(config control exif jpeg png webp gif heif avif simulate)
target=${1:-all}
seconds=${2:-600}
if [ "$target" != all ] && [[ ! " ${targets[*]} " == *" $target "* ]]; then
  echo "usage: scripts/fuzz.sh [all|${targets[*]// /|}] [SECONDS]" >&2
  exit 2
fi
# heif is left out of `all` (what scripts/test.sh runs): Debian 12's libheif
# 1.15 crashes inside its grid decoding on some damaged HEICs the target finds
# within minutes (SIGSEGV, an uncaught std::system_error when it cannot start a
# thread per tile, gigabytes allocated; heif-convert crashes on the same
# files), which no check of ours before the call prevents. That is why the
# daemon never calls libheif in its own process: HEIF and AVIF are decoded in a
# helper process (DecodingProcess), where such a crash is one skipped picture.
# What it found is kept in Fuzz/libheif-crashes, and DecodingProcessTests and
# the daemon's tests decode it through the helper. Run the target by name
# (scripts/fuzz.sh heif 60) to look for more, and our own HEIF code's bugs.
if [ "$target" = all ]; then
  all=()
  for t in "${targets[@]}"; do [ "$t" = heif ] || all+=("$t"); done
  targets=("${all[@]}")
else
  targets=("$target")
fi

# Swift code is instrumented by -sanitize=fuzzer,address (libFuzzer's main
# comes with it; CAROUSEL_FUZZING leaves out the replayer's main), the C
# shims (CImageCodecs, CPlatform) by clang's fuzzer-no-link and address.
# Release, as libFuzzer is meant to run: several times the inputs per second
# of a debug build, and Swift's overflow and bounds checks stay in.
# -enable-testing: the EXIF target reads ExifReader, internal to its room.
# The system libraries (libjpeg, libpng, libwebp, giflib, libheif and its
# codecs) are not instrumented: the shims' calls into them and every buffer
# we hand them are. A crash inside libheif or libde265 is still a crash of
# the target, and worth a Debian bug report with the input.
echo "fuzz: building (.build-fuzz)" >&2
swift build --scratch-path .build-fuzz -c release --product carousel-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing -Xswiftc -DCAROUSEL_FUZZING \
  -Xcc -fsanitize=fuzzer-no-link,address >&2
binary=.build-fuzz/release/carousel-fuzz

mkdir -p Fuzz/crashes .build-fuzz/logs
passed=0
failed=0
for t in "${targets[@]}"; do
  corpus=.build-fuzz/corpus/$t
  log=.build-fuzz/logs/$t.log
  mkdir -p "$corpus" "Fuzz/regressions/$t"
  # Long enough inputs to reach the paths past a limit: the control
  # socket's 4096-byte line, a decoder's second scanline pass.
  case $t in
    control) max_len=12000 ;;
    jpeg|png|webp|gif|heif|avif) max_len=16384 ;;
    exif) max_len=4096 ;;
    *) max_len=8192 ;;
  esac
  dict=()
  [ -f "Fuzz/dict/$t.dict" ] && dict=("-dict=Fuzz/dict/$t.dict")
  status=0
  # The first folder is where libFuzzer adds what it finds; the committed ones are only read.
  # Swift's own crash backtracer is off: libFuzzer prints the stack, and the
  # backtracer's reads of memory trip AddressSanitizer's shadow gap.
  # Fuzz/lsan.supp: leaks inside third-party decoders (each with its reason).
  CAROUSEL_FUZZ_TARGET=$t SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=Fuzz/lsan.supp "$binary" "$corpus" "Fuzz/corpus/$t" "Fuzz/regressions/$t" \
    "${dict[@]}" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="Fuzz/crashes/$t-" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
  if [ "$status" -eq 0 ]; then
    echo "fuzz $t: ${runs:-?} inputs in ${seconds} s, $(find "$corpus" -type f | wc -l) in its corpus, 0 failures"
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "fuzz $t: FAILED after ${runs:-?} inputs (exit $status); what went wrong, from $log:"
    grep -m 6 -E 'Fatal error|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY|ALARM|out-of-memory' "$log" | cut -c1-400 | sed 's/^/  /'
    input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    if [ -n "$input" ]; then
      echo "  the input: $input"
      echo "  again: CAROUSEL_FUZZ_TARGET=$t LSAN_OPTIONS=suppressions=Fuzz/lsan.supp $binary $input"
      echo "  without sanitizers: swift build --product carousel-fuzz && .build/debug/carousel-fuzz $t $input"
      echo "  once fixed: git mv/add it as Fuzz/regressions/$t/NAME (swift test replays it)"
    fi
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
