#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer and runs them.
#
#   scripts/fuzz.sh gate             what scripts/test.sh runs: every target
#                                    but heif, a fixed number of inputs from a
#                                    fixed seed, so the same commit always gets
#                                    the same verdict
#   scripts/fuzz.sh gate avif        one target's gate run (to reproduce one)
#   scripts/fuzz.sh build            only the build (scripts/test.sh makes it
#                                    ahead, while other stages wait on servers)
#   scripts/fuzz.sh                  every target, 10 minutes each, random seeds (by hand)
#   scripts/fuzz.sh png 3600         one target for an hour, a random seed
#   scripts/fuzz.sh all 20           every target 20 s, random seeds
#
# Targets (Sources/CarouselFuzzing, one input format each): config, control,
# exif, faces, jpeg, png, webp, gif, heif, avif, simulate, clip. Each starts by replaying
# its committed seeds (Fuzz/corpus/TARGET) and every input that ever failed
# (Fuzz/regressions/TARGET), then mutates them.
#
# The gate's runs are deterministic: libFuzzer with -seed and -runs tries the
# same inputs in the same order on every machine, and it starts from the
# committed folders only (what it finds goes to a temporary folder that is
# removed). Each target's line prints its seed and input count and the one
# command that runs it again.
#
# Exploratory runs (a target name or `all`) take a random seed each, print
# it, and keep what they learn in .build-fuzz/corpus/TARGET for the next run
# on this machine. A failing input (a trap, a sanitizer report, a broken
# property, a timeout or running out of memory) is written to Fuzz/crashes/
# and the run fails. Fix the bug, then move the input to
# Fuzz/regressions/TARGET/: `swift test` and every gate run replay it from
# then on.
#
# Targets run side by side, one per core (each libFuzzer process is one
# thread; -runs and -seed make a run the same whatever runs beside it). Each
# target's lines are printed once it ends, in the order of `targets`.
# The last line is "fuzz: N passed, M failed"; each target's line says how
# many inputs it tried.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(config control exif faces jpeg png webp gif heif avif simulate clip)
# The gate: inputs per target (about 15-20 s each on a 2-core machine of
# 2026, most of it in the decoders' C libraries) and its fixed seed.
declare -A gate_runs=([config]=60000 [control]=20000 [exif]=600000 [faces]=20000 [jpeg]=40000 [png]=300000
                      [webp]=300000 [gif]=300000 [heif]=20000 [avif]=250000 [simulate]=50000
                      [clip]=3000)
gate_seed=20261126

gate=0
build_only=0
if [ "${1:-}" = build ]; then
  build_only=1
  shift
elif [ "${1:-}" = gate ]; then
  gate=1
  shift
fi
target=${1:-all}
seconds=${2:-600}
if [ "$target" != all ] && [[ ! " ${targets[*]} " == *" $target "* ]]; then
  echo "usage: scripts/fuzz.sh build | [gate] [all|${targets[*]// /|}] [SECONDS]" >&2
  exit 2
fi
# heif is left out of `all` and of the gate (what scripts/test.sh runs): Debian 12's libheif
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
# shims (CImageCodecs, CPlatform, CVideoLoader) by clang's fuzzer-no-link and address.
# Release, as libFuzzer is meant to run: several times the inputs per second
# of a debug build, and Swift's overflow and bounds checks stay in.
# The system libraries (libjpeg, libpng, libwebp, giflib, libheif and its
# codecs, FFmpeg's) are not instrumented: the shims' calls into them and every buffer
# we hand them are. A crash inside libheif or libde265 is still a crash of
# the target, and worth a Debian bug report with the input.
# The same holds for FFmpeg (clip): libFuzzer sees only our C and Swift's
# coverage (a few hundred edges), so it mutates the clip seeds blindly inside
# libavformat and libavcodec; the guard band, the sentinels and the checks of
# VideoDecoder's answers are what finds our bugs there.
echo "fuzz: building (.build-fuzz)" >&2
swift build --scratch-path .build-fuzz -c release --product carousel-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DCAROUSEL_FUZZING \
  -Xcc -fsanitize=fuzzer-no-link,address >&2
binary=.build-fuzz/release/carousel-fuzz
[ "$build_only" -eq 1 ] && exit 0

mkdir -p Fuzz/crashes .build-fuzz/logs

# run_target T: one target's run; prints its lines, fails when it did.
run_target() {
  local t=$1
  local log=.build-fuzz/logs/$t.log
  if [ "$gate" -eq 1 ]; then
    # What the gate finds is not kept: the next gate run starts where this one did.
    corpus=$(mktemp -d)
    seed=$gate_seed
    budget=(-runs="${gate_runs[$t]}")
    again="scripts/fuzz.sh gate $t"
  else
    corpus=.build-fuzz/corpus/$t
    seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    budget=(-max_total_time="$seconds")
    again="scripts/fuzz.sh $t $seconds (with -seed=$seed: see $log)"
  fi
  mkdir -p "$corpus" "Fuzz/regressions/$t"
  # Long enough inputs to reach the paths past a limit: the control
  # socket's 4096-byte line, a decoder's second scanline pass.
  case $t in
    control) max_len=12000 ;;
    jpeg|png|webp|gif|heif|avif|clip) max_len=16384 ;;
    exif) max_len=4096 ;;
    faces) max_len=8192 ;;
    *) max_len=8192 ;;
  esac
  dict=()
  [ -f "Fuzz/dict/$t.dict" ] && dict=("-dict=Fuzz/dict/$t.dict")
  # HEIF and AVIF decode under the cap of the daemon's decoding helper
  # (DecodingProcess.addressSpaceAllowance for the largest max_pixels the
  # target picks, 4 Mpx: the heap budget's floor, 256 MiB, and 512 MiB for
  # threads). Where the helper's address-space cap makes a larger allocation
  # fail, AddressSanitizer refuses it the same way, and the target checks
  # that no allocation got past it (DecoderProperties). CarouselFuzzingTests
  # keeps the two numbers equal.
  # On one CPU: dav1d and libde265 then decode on the calling thread, and a
  # decoder's threads racing cannot change what a run covers.
  asan=""
  cpus=()
  case $t in heif|avif) asan="allocator_may_return_null=1:max_allocation_size_mb=768"; cpus=(taskset -c 0) ;; esac
  # A gate input gets 30 s (a slow machine is no finding); by hand 10 s.
  timeout=10
  [ "$gate" -eq 1 ] && timeout=30
  status=0
  # The first folder is where libFuzzer adds what it finds; the committed ones are only read.
  # Swift's own crash backtracer is off: libFuzzer prints the stack, and the
  # backtracer's reads of memory trip AddressSanitizer's shadow gap.
  # Fuzz/lsan.supp: leaks inside third-party decoders (each with its reason).
  started=$(date +%s)
  # SWIFT_DETERMINISTIC_HASHING: Swift seeds its hashing anew in every
  # process, so a Set's or a Dictionary's order (and the code an input
  # covers) would differ from run to run with the same seed. -reload=0: the
  # corpus folders are read once, not every second. setarch -R: without
  # address randomisation, the pointers compared in the code under test (whose
  # values libFuzzer keeps to mutate with) are the same in every run.
  CAROUSEL_FUZZ_TARGET=$t SWIFT_BACKTRACE=enable=no SWIFT_DETERMINISTIC_HASHING=1 ASAN_OPTIONS="$asan" \
    LSAN_OPTIONS=suppressions=Fuzz/lsan.supp \
    "${cpus[@]}" setarch -R "$binary" "$corpus" "Fuzz/corpus/$t" "Fuzz/regressions/$t" \
    "${dict[@]}" -seed="$seed" "${budget[@]}" -reload=0 -max_len="$max_len" -timeout="$timeout" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="Fuzz/crashes/$t-" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
  # The gate's folder held only what this run found; a run by hand keeps adding to its own.
  if [ "$gate" -eq 1 ]; then
    learned="$(find "$corpus" -type f | wc -l) new inputs found"
    rm -rf "$corpus"
  else
    learned="$(find "$corpus" -type f | wc -l) in $corpus"
  fi
  if [ "$status" -eq 0 ]; then
    echo "fuzz $t: seed $seed, ${runs:-?} inputs in $(($(date +%s) - started)) s, $learned, 0 failures"
  else
    echo "fuzz $t: FAILED after ${runs:-?} inputs with seed $seed (exit $status); again: $again; what went wrong, from $log:"
    grep -m 6 -E 'Fatal error|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY|ALARM|out-of-memory' "$log" | cut -c1-400 | sed 's/^/  /'
    input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    if [ -n "$input" ]; then
      echo "  the input: $input"
      echo "  again: CAROUSEL_FUZZ_TARGET=$t SWIFT_DETERMINISTIC_HASHING=1 ASAN_OPTIONS=$asan LSAN_OPTIONS=suppressions=Fuzz/lsan.supp $binary $input"
      echo "  without sanitizers: swift build --product carousel-fuzz && .build/debug/carousel-fuzz $t $input"
      echo "  once fixed: git mv/add it as Fuzz/regressions/$t/NAME (swift test replays it)"
    fi
  fi
  return "$status"
}

# One target per core at a time; each one's lines and exit status kept for the end.
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
cores=$(nproc)
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$cores" ]; do wait -n || true; done
  # set +e: a step that fails inside is the target's failure, reported by its own lines.
  (set +e; run_target "$t" >"$results/$t" 2>&1; echo $? >"$results/$t.status") &
done
wait
passed=0
failed=0
for t in "${targets[@]}"; do
  cat "$results/$t"
  if [ "$(cat "$results/$t.status" 2>/dev/null)" = 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
