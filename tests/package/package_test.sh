#!/usr/bin/env bash
# Usage: package_test.sh BUILD_DIR SOURCE_DIR CXX BUILD_TYPE "SANITIZE_FLAGS"
set -euo pipefail
build=$1 src=$2 cxx=$3 type=${4:-RelWithDebInfo} san=${5:-}
fail() { echo "FAIL: $*"; exit 1; }
d=$(mktemp -d /tmp/npuforge-package-test.XXXXXX)
trap 'rm -rf "$d"' EXIT
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

cmake --install "$build" --prefix "$d/prefix" > "$d/install.log" || { tail "$d/install.log"; fail "cmake --install"; }
for f in bin/npuforge lib/libnpuforge_sim.a lib/cmake/npuforge/npuforgeConfig.cmake lib/pkgconfig/npuforge.pc \
         include/npuforge/sim/checkers.h share/npuforge/configs/gen/default.yaml; do
  [ -e "$d/prefix/$f" ] || fail "not installed: $f"
done
"$d/prefix/bin/npuforge" isa > /dev/null || fail "the installed CLI does not run"

# The example, configured from a copy outside any npuforge tree, sees only the installed package.
cp -r "$src/examples/external-testbench" "$d/tb"
cmake -S "$d/tb" -B "$d/tb/build" -DCMAKE_PREFIX_PATH="$d/prefix" -DCMAKE_BUILD_TYPE="$type" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$san" > "$d/tb.log" 2>&1 || { cat "$d/tb.log"; fail "configure"; }
cmake --build "$d/tb/build" -j 2 >> "$d/tb.log" 2>&1 || { tail -40 "$d/tb.log"; fail "build"; }
if grep -E "warning:" "$d/tb.log"; then fail "the example builds with warnings"; fi
grep -rq "$build\|$src" "$d/tb/build/CMakeCache.txt" && fail "the example's build refers to the npuforge tree"
"$d/tb/build/external_testbench" --seed 3 > "$d/clean.out" || { cat "$d/clean.out"; fail "clean run failed"; }
grep -q '^PASS' "$d/clean.out" || fail "clean run did not pass"
cat "$d/clean.out"
# A planted scratchpad bug (a write-address bit stuck at 0) must be caught by the checkers.
set +e
"$d/tb/build/external_testbench" --seed 3 --stuck-bit 9 > "$d/stuck.out"
rc=$?
set -e
cat "$d/stuck.out"
[ $rc = 1 ] || fail "stuck-bit run: exit $rc, expected 1"
grep -q 'ddr-mismatch' "$d/stuck.out" || fail "the checkers missed the stuck bit"

# pkg-config: one file linked against the checker library by flags alone.
cat > "$d/pc.cc" <<'CC'
#include <cstdio>
#include "sim/checkers.h"
#include "sim/semantics.h"
// libsystemc.so (listed by the .pc for the SystemC model) calls the program's sc_main, so a
// program linking it must define one even when it never starts a simulation.
extern "C" int sc_main(int, char**) { return 0; }
int main() {
  const auto& isa = npuforge::isa::builtin_isa();
  const npuforge::sim::Semantics sem(isa);
  npuforge::bundle::Program p;
  p.isa = &isa;
  p.instrs.push_back(npuforge::isa::Instruction::make(isa.require("halt")));
  npuforge::sim::Checkers c(p, sem);
  c.on_start(0, 0);
  c.on_finish(0, 1);
  c.on_end();
  std::printf("%zu instructions, %s\n", isa.instructions().size(), c.clean() ? "clean" : "findings");
  return c.clean() ? 0 : 1;
}
CC
export PKG_CONFIG_PATH=$d/prefix/lib/pkgconfig
# shellcheck disable=SC2046,SC2086
"$cxx" -std=c++20 $san "$d/pc.cc" -o "$d/pc" $(pkg-config --cflags --libs npuforge) || fail "pkg-config build"
"$d/pc" || fail "pkg-config program"
echo "PASS: installed package used by CMake (find_package) and by pkg-config"
