#!/usr/bin/env bash
# scripts/slurm-local.sh when Slurm does not come up: it must fail fast with the reason and the
# right exit code (3: cannot run here, 4: should run but did not come up), never hang, and leave
# nothing running. Broken daemons are planted by putting fake ones first on PATH.
# Usage: slurm_local_failure_test.sh SOURCE_DIR. Exit 77 = skipped (not root, Slurm missing).
set -uo pipefail
src=$1
script=$src/scripts/slurm-local.sh
fail() { echo "FAIL: $*"; exit 1; }
if [ "$(id -u)" != 0 ] || ! command -v slurmctld > /dev/null || ! command -v munged > /dev/null; then
  echo "SKIPPED: needs root and Slurm (slurmctld, munge) installed"
  [ "${NPUFORGE_REQUIRE_SLURM:-0}" = 1 ] && fail "NPUFORGE_REQUIRE_SLURM=1 but Slurm cannot run here"
  exit 77
fi
d=$(mktemp -d /tmp/npuforge-slurm-fail-test.XXXXXX)
chmod 0755 "$d"
trap 'bash "$script" down "$d/cluster" > /dev/null 2>&1; rm -rf "$d"' EXIT

# expect NAME EXIT_CODE MAX_SECONDS MESSAGE_REGEX [env and PATH for `up`...]
expect() {
  local name=$1 code=$2 max=$3 re=$4 start rc
  shift 4
  start=$SECONDS
  env "$@" timeout 120 bash "${run_script:-$script}" up "$d/cluster" > "$d/out" 2> "$d/err"
  rc=$?
  local took=$((SECONDS - start))
  [ $rc = "$code" ] || { cat "$d/out" "$d/err"; fail "$name: exit $rc, expected $code"; }
  [ $took -le "$max" ] || fail "$name: took $took s, expected at most $max s"
  grep -Eq "$re" "$d/err" || { cat "$d/err"; fail "$name: stderr lacks /$re/"; }
  # Nothing this `up` started may still run.
  local f pid
  for f in "$d/cluster/pids/slurmctld.pid" "$d/cluster/pids/slurmd.pid" "$d/cluster/munge/munged.pid"; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if [ -r "/proc/$pid/stat" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
      fail "$name: $(basename "$f" .pid) (pid $pid) still runs after the failed up"
    fi
  done
  echo "ok: $name: exit $rc in $took s: $(head -1 "$d/err")"
}

fake() {  # fake DIR PROGRAM BODY: a PROGRAM on DIR that runs BODY
  mkdir -p "$1"
  printf '#!/bin/sh\n%s\n' "$3" > "$1/$2"
  chmod +x "$1/$2"
}
fake "$d/dies" slurmctld 'echo "planted: slurmctld exits at once" >&2; exit 1'
fake "$d/hangs" slurmctld 'exec sleep 600'
fake "$d/slurmd-dies" slurmd 'exit 1'

expect "slurmctld dies" 4 15 "slurmctld died" PATH="$d/dies:$PATH"
expect "slurmctld never answers" 4 10 "slurmctld not up after 3 s" PATH="$d/hangs:$PATH" SLURM_LOCAL_TIMEOUT=3
expect "slurmd dies" 4 20 "slurmd died" PATH="$d/slurmd-dies:$PATH"
# Not installed: the daemons are in /usr/sbin, left off PATH.
expect "Slurm not on PATH" 3 5 "not found: install" PATH=/usr/bin:/bin
if command -v setpriv > /dev/null; then
  # A copy the unprivileged user can read: the source tree may sit in a directory only root
  # may enter (a clone under `mktemp -d`).
  install -m 0755 "$script" "$d/slurm-local.sh"
  run_script=$d/slurm-local.sh expect "not root" 3 5 "needs root" setpriv --reuid=65534 --regid=65534 --clear-groups
fi
# And the real thing still comes up afterwards.
out=$(timeout 120 bash "$script" up "$d/cluster" 2>&1) || fail "a real up after the failures: $out"
echo "ok: a real cluster comes up after the failures: $out"
echo PASS
