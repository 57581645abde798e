#!/usr/bin/env bash
# The C pixel kernels against their twins (scripts/kernels/twins.c), built
# for x86-64, arm64 and armhf and run on each: the Swift toolchain cannot be
# had for ARM here, so this is what proves the kernels there. The builds for
# other architectures than this machine's run under qemu-user.
#
#   scripts/kernels.sh             every target (what scripts/test.sh runs)
#   scripts/kernels.sh arm64       one: x86-64, arm64, armhf, armhf-vfpv3
#
# The targets:
#   x86-64       the AVX2 loop too, when the CPU has it
#   arm64        NEON from the vector extension (blend.c says why no intrinsics)
#   armhf        ARMv7 with NEON (a Raspberry Pi 2 or later in 32-bit mode)
#   armhf-vfpv3  ARMv7 without NEON: Debian armhf's baseline, where the
#                vector extension becomes scalar code
#
# Built with clang (the kernels use __builtin_convertvector, which GCC 12
# lacks): the Swift toolchain's, or $CC. For other architectures it takes
# Debian's cross C libraries, libgcc and linkers (scripts/setup.sh installs
# them), and links statically, so that qemu-user needs no sysroot.
#
# Each target prints the compiler, its flags and how it ran, then one line
# per kernel; the last line is "kernels: N passed, M failed" (a kernel on a
# target is one). Exits 1 if any kernel, build or run failed.
set -euo pipefail
cd "$(dirname "$0")/.."

out=.build-kernels
sources=(scripts/kernels/twins.c scripts/kernels/prefetch_lines.c
         Sources/CImageCodecs/blend.c Sources/CImageCodecs/box.c Sources/CImageCodecs/rows.c
         Sources/CImageCodecs/pack.c
         Sources/CFBDev/CFBDev.c)
flags=(-O2 -Wall -Wextra -Werror -ISources/CImageCodecs -ISources/CImageCodecs/include -ISources/CFBDev/include)

# target -> clang's flags, `uname -m` of a machine that runs it natively, qemu-user's program.
declare -A target_flags=(
  [x86-64]="--target=x86_64-linux-gnu"
  [arm64]="--target=aarch64-linux-gnu"
  [armhf]="--target=armv7a-linux-gnueabihf -mfpu=neon -mfloat-abi=hard"
  [armhf-vfpv3]="--target=armv7a-linux-gnueabihf -mfpu=vfpv3-d16 -mfloat-abi=hard"
)
declare -A target_machine=([x86-64]=x86_64 [arm64]=aarch64 [armhf]=armv7l [armhf-vfpv3]=armv7l)
declare -A target_qemu=([x86-64]=qemu-x86_64 [arm64]=qemu-aarch64 [armhf]=qemu-arm [armhf-vfpv3]=qemu-arm)
declare -A target_package=([x86-64]=amd64 [arm64]=arm64 [armhf]=armhf [armhf-vfpv3]=armhf)
all_targets=(x86-64 arm64 armhf armhf-vfpv3)

if (($#)); then
  targets=("$@")
  for t in "${targets[@]}"; do
    [ -n "${target_flags[$t]:-}" ] || { echo "kernels: no target $t (there are: ${all_targets[*]})" >&2; exit 2; }
  done
else
  targets=("${all_targets[@]}")
fi

cc=${CC:-clang}
if ! command -v "$cc" >/dev/null; then
  echo "kernels: $cc not found: the Swift toolchain's clang should be on PATH beside swift (or set CC to a clang)" >&2
  exit 1
fi
compiler="$(command -v "$cc") ($("$cc" --version | head -n 1))"
machine=$(uname -m)
mkdir -p "$out"

passed=0
failed=0
failures=()
per_target=()
for t in "${targets[@]}"; do
  binary="$out/twins-$t"
  # For this machine's own architecture clang's --target finds the native C
  # library (/usr/lib/gcc/TRIPLE), for others Debian's cross one
  # (/usr/lib/gcc-cross/TRIPLE): the same flags either way. Only how it runs differs.
  native=0
  if [ "${target_machine[$t]}" = "$machine" ]; then native=1; fi
  read -r -a tflags <<<"${target_flags[$t]}"
  echo "== $t: $compiler ${tflags[*]} ${flags[*]} -static"
  if ! "$cc" "${tflags[@]}" "${flags[@]}" -static "${sources[@]}" -o "$binary"; then
    echo "kernels: cannot build for $t (errors above); Debian's cross packages for it" \
         "(libc6-dev-${target_package[$t]}-cross, libgcc-12-dev-${target_package[$t]}-cross, binutils for it)" \
         "are in scripts/setup.sh" >&2
    failures+=("$t (build)")
    continue
  fi
  if ((native)); then
    run=("$binary")
    echo "   run natively on this $machine"
  else
    qemu=${target_qemu[$t]}
    if ! command -v "$qemu" >/dev/null; then
      echo "kernels: $qemu not found, cannot run the $t build: apt-get install qemu-user (scripts/setup.sh)" >&2
      failures+=("$t (no $qemu)")
      continue
    fi
    run=("$qemu" "$binary")
    echo "   run under $($qemu --version | head -n 1)"
  fi
  log="$out/twins-$t.log"
  status=0
  "${run[@]}" >"$log" 2>&1 || status=$?
  sed 's/^/   /' "$log"
  line=$(sed -n 's/^twins: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
  if [ -z "$line" ]; then
    echo "kernels: the $t build stopped before its summary (exit status $status)" >&2
    failures+=("$t (crashed)")
    continue
  fi
  read -r p f <<<"$line"
  passed=$((passed + p))
  failed=$((failed + f))
  per_target+=("$t $p")
  if ((status != 0 || f != 0)); then failures+=("$t ($f of $((p + f)) kernels)"); fi
done

if ((${#failures[@]})); then
  echo "kernels: FAILED on: ${failures[*]}" >&2
  # A target that could not run counts as a failure in the summary too.
  echo "kernels: $passed passed, $((failed > 0 ? failed : ${#failures[@]})) failed"
  exit 1
fi
summary=$(IFS=,; echo "${per_target[*]}")
echo "kernels: $passed passed, 0 failed (${summary//,/, })"
