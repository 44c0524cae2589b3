#!/usr/bin/env bash
# A single-node Slurm cluster on localhost (munge + slurmctld + slurmd as root, everything in a
# scratch directory), for CI and for trying `npuforge regress --slurm` on one machine.
#
#   scripts/slurm-local.sh up DIR     start it; prints "export SLURM_CONF=DIR/etc/slurm.conf"
#   scripts/slurm-local.sh down DIR   cancel its jobs, stop the daemons it started (by pid)
#
# Needs root and Debian's slurmctld slurmd slurm-client munge (scripts/install-ci-extras.sh).
# `up` fails with the reason on stderr, having stopped whatever it started:
#   exit 3  Slurm cannot run here: not root, or a program is missing;
#   exit 4  it should run but did not come up: munge fails, a daemon dies, or the controller
#           or the node is not up within SLURM_LOCAL_TIMEOUT seconds (default 30).
# It wipes DIR first and picks the first free port pair from 6817/6818 upward, so several
# clusters can coexist.
set -uo pipefail

# Stops whatever this `up` started, then fails with the reason (exit code $1).
die_code() {
  local code=$1
  shift
  echo "slurm-local: $*" >&2
  [ -n "${D:-}" ] && down "$D"
  exit "$code"
}
cannot_run() { die_code 3 "$@"; }
die() { die_code 4 "$@"; }

# A Slurm client call in a wait loop: at most 3 s and the time left before the deadline. A
# client retries ~9 s while slurmctld does not answer; the loop re-checks the daemons between.
bounded() {
  local left=$((deadline - SECONDS))
  [ "$left" -lt 1 ] && left=1
  [ "$left" -gt 3 ] && left=3
  timeout "$left" "$@"
}

# A process is gone when /proc/PID/stat is missing or says zombie (kill -0 sees zombies).
alive() {
  local pid=$1 stat
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

stop_pid() {
  local pid=$1 t
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null
  for t in $(seq 50); do alive "$pid" || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
}

down() {
  local d=$1 f
  [ -d "$d" ] || return 0
  # Only a controller that answers (a hung one would block each client call ~9 s).
  if [ -f "$d/etc/slurm.conf" ] && [ -f "$d/pids/slurmctld.pid" ] && alive "$(cat "$d/pids/slurmctld.pid")" &&
    SLURM_CONF=$d/etc/slurm.conf timeout 3 scontrol ping 2>/dev/null | grep -q "is UP"; then
    SLURM_CONF=$d/etc/slurm.conf timeout 10 squeue -h -o %A 2>/dev/null | sort -u |
      SLURM_CONF=$d/etc/slurm.conf xargs -r timeout 10 scancel 2>/dev/null
  fi
  for f in slurmd slurmctld; do
    [ -f "$d/pids/$f.pid" ] && stop_pid "$(cat "$d/pids/$f.pid")"
  done
  [ -f "$d/munge/munged.pid" ] && stop_pid "$(cat "$d/munge/munged.pid")"
  return 0
}

up() {
  local d=$1 node port cpus state timeout_s
  [ "$(id -u)" = 0 ] || cannot_run "needs root (munged and slurmd run as root here)"
  for b in munged mungekey munge unmunge slurmctld slurmd sbatch squeue scontrol sinfo scancel; do
    command -v "$b" >/dev/null ||
      cannot_run "'$b' not found: install slurmctld slurmd slurm-client munge (scripts/install-ci-extras.sh)"
  done
  timeout_s=${SLURM_LOCAL_TIMEOUT:-30}
  # slurmd 22.05 initializes its cgroup plugin even with proctrack/linuxproc and task/none.
  mountpoint -q /sys/fs/cgroup ||
    cannot_run "no cgroup filesystem on /sys/fs/cgroup (slurmd needs one even without cgroup plugins)"
  down "$d"
  node=$(hostname -s)
  port=6817
  while ! port_free "$port" || ! port_free $((port + 1)); do
    port=$((port + 2))
    [ "$port" -lt 6917 ] || die "no free port pair between 6817 and 6917"
  done
  cpus=$(nproc)
  rm -rf "$d"
  mkdir -p "$d"/{etc,state/ctld,state/d,log,run,pids,munge} || die "cannot create $d"
  # munged refuses a socket directory others can write and a log under a world-writable parent.
  chmod 0755 "$d" && chmod 0711 "$d/munge"
  mungekey -c -k "$d/munge/munge.key" >/dev/null 2>&1 || die "mungekey failed"
  chmod 0400 "$d/munge/munge.key"
  timeout 20 munged --socket="$d/munge/munge.socket" --key-file="$d/munge/munge.key" --pid-file="$d/munge/munged.pid" \
    --log-file="$d/munge/munged.log" --seed-file="$d/munge/munged.seed" ||
    die "munged failed: $(tail -3 "$d/munge/munged.log" 2>/dev/null)"
  timeout 10 munge -S "$d/munge/munge.socket" -n | timeout 10 unmunge -S "$d/munge/munge.socket" >/dev/null 2>&1 ||
    die "munge does not authenticate: $(tail -3 "$d/munge/munged.log" 2>/dev/null)"
  cat > "$d/etc/slurm.conf" <<EOF
ClusterName=npuforge
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
StateSaveLocation=$d/state/ctld
SlurmdSpoolDir=$d/state/d
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=300
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$node CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$d/etc/slurm.conf
  # -D keeps them in the foreground so that $! is the daemon; their output would hold a pipe.
  slurmctld -D -i -f "$SLURM_CONF" >/dev/null 2>&1 &
  echo $! > "$d/pids/slurmctld.pid"
  deadline=$((SECONDS + timeout_s))
  until bounded scontrol ping 2>/dev/null | grep -q "is UP"; do
    alive "$(cat "$d/pids/slurmctld.pid")" || die "slurmctld died (log $d/log/slurmctld.log): $(tail -5 "$d/log/slurmctld.log" 2>/dev/null)"
    [ "$SECONDS" -lt "$deadline" ] ||
      die "slurmctld not up after $timeout_s s (log $d/log/slurmctld.log): $(tail -5 "$d/log/slurmctld.log" 2>/dev/null)"
    sleep 0.1
  done
  slurmd -D -f "$SLURM_CONF" >/dev/null 2>&1 &
  echo $! > "$d/pids/slurmd.pid"
  while :; do
    state=$(bounded sinfo -h -n "$node" -o %T 2>/dev/null)
    case $state in
      idle*) break ;;
      *inval*|*drain*|*down*) die "node $node is $state (log $d/log/slurmd.log): $(tail -5 "$d/log/slurmd.log" 2>/dev/null)" ;;
    esac
    alive "$(cat "$d/pids/slurmd.pid")" || die "slurmd died (log $d/log/slurmd.log): $(tail -5 "$d/log/slurmd.log" 2>/dev/null)"
    [ "$SECONDS" -lt "$deadline" ] || die "node $node not idle after $timeout_s s (state '$state')"
    sleep 0.1
  done
  echo "export SLURM_CONF=$SLURM_CONF"
}

[ $# = 2 ] || { echo "usage: $0 up|down DIR" >&2; exit 2; }
D=$2
case $1 in
  up) up "$D" ;;
  down) down "$D" ;;
  *) echo "usage: $0 up|down DIR" >&2; exit 2 ;;
esac
