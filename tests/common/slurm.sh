# tests/common/slurm.sh - a private single-node Slurm for the tests in tests/slurm (sourced after
# tap.sh). slurm_start runs munged with its own key and socket, and slurmctld + slurmd for this
# host on unused localhost ports, with every state, spool, log and pid file in one temporary folder
# (../shared/notes/slurm-single-node.md); it exports SLURM_CONF so sbatch, squeue and scontrol
# talk to it. slurm_stop cancels what is left, stops the three daemons by the pids in their pid
# files (TERM, then KILL after 15 s) and removes the folder; the caller's EXIT trap must call it,
# so no daemon outlives the test, whatever happens. slurm_submit submits and waits for a job. Needs root and the Debian packages slurm-wlm
# and munge (scripts/install-deps --slurm).

SLURM_DIR=""

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

slurm_start() {
    local t p ctld_port=""
    [ "$(id -u)" -eq 0 ] || {
        echo "slurm_start: the private Slurm runs its daemons as root; run as root" >&2
        return 1
    }
    for t in munged slurmctld slurmd sbatch; do
        command -v "$t" >/dev/null || {
            echo "slurm_start: $t is missing (scripts/install-deps --slurm installs it)" >&2
            return 1
        }
    done
    SLURM_DIR=$(mktemp -d /tmp/strux-slurm.XXXXXX) || return 1
    chmod 711 "$SLURM_DIR" # munged wants its socket folder searchable, not writable, by others
    mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool"
    for p in 16817 16917 17017 17117 17217 17317; do
        if port_free "$p" && port_free $((p + 1)); then
            ctld_port=$p
            break
        fi
    done
    [ -n "$ctld_port" ] || {
        echo "slurm_start: no free port pair from 16817 to 17318" >&2
        return 1
    }

    dd if=/dev/urandom of="$SLURM_DIR/munge.key" bs=1024 count=1 status=none
    chmod 400 "$SLURM_DIR/munge.key"
    munged --force --socket="$SLURM_DIR/munge.sock" --key-file="$SLURM_DIR/munge.key" \
        --pid-file="$SLURM_DIR/munged.pid" --log-file="$SLURM_DIR/munged.log" \
        --seed-file="$SLURM_DIR/munged.seed" || return 1
    munge -S "$SLURM_DIR/munge.sock" -n | unmunge -S "$SLURM_DIR/munge.sock" |
        grep -q 'STATUS: *Success' || {
        echo "slurm_start: munge credentials do not round-trip" >&2
        return 1
    }

    local host
    host=$(hostname)
    cat >"$SLURM_DIR/slurm.conf" <<EOF
ClusterName=struxtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_DIR/munge.sock
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/filetxt
JobCompLoc=$SLURM_DIR/jobcomp.txt
MinJobAge=3600
NodeName=$host CPUs=$(nproc) RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF="$SLURM_DIR/slurm.conf"
    slurmctld -f "$SLURM_CONF" || return 1
    slurmd -f "$SLURM_CONF" || return 1
    for _ in $(seq 1 120); do
        [ "$(sinfo -h -N -o '%t' 2>/dev/null)" = idle ] && return 0
        sleep 0.5
    done
    echo "slurm_start: the node did not become idle in 60 s; sinfo: $(sinfo 2>&1)" >&2
    tail -n 20 "$SLURM_DIR/slurmctld.log" "$SLURM_DIR/slurmd.log" >&2
    return 1
}

stop_pid_file() { # pid-file: TERM the daemon, KILL it after 15 s
    local f=$1 pid
    [ -f "$f" ] || return 0
    pid=$(cat "$f" 2>/dev/null)
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 150); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
}

slurm_stop() {
    [ -n "$SLURM_DIR" ] && [ -d "$SLURM_DIR" ] || return 0
    if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_DIR/slurmctld.pid" ]; then
        local jobs
        jobs=$(squeue -h -o %A 2>/dev/null | sort -u)
        [ -z "$jobs" ] || scancel $jobs 2>/dev/null
        for _ in $(seq 1 100); do
            [ -z "$(squeue -h 2>/dev/null)" ] && break
            sleep 0.2
        done
    fi
    stop_pid_file "$SLURM_DIR/slurmd.pid"
    stop_pid_file "$SLURM_DIR/slurmctld.pid"
    stop_pid_file "$SLURM_DIR/munged.pid"
    rm -rf "$SLURM_DIR"
    SLURM_DIR=""
}

# The pids of the daemons (for a test that they are gone after slurm_stop).
slurm_pids() {
    local f
    for f in "$SLURM_DIR"/munged.pid "$SLURM_DIR"/slurmctld.pid "$SLURM_DIR"/slurmd.pid; do
        [ -f "$f" ] && cat "$f"
    done
}

# slurm_submit DIR OUTVAR sbatch-args...: sbatch from DIR, then wait (polling faster than
# sbatch --wait) until the job, or every task of an array job, has ended, at most
# SLURM_JOB_TIMEOUT seconds (default 300); OUTVAR gets the job id; the status is 0 iff everything
# COMPLETED. sbatch's stderr is left in $WORK/sbatch.err.
slurm_submit() {
    local dir=$1 var=$2 id states
    shift 2
    id=$(cd "$dir" && sbatch --parsable "$@" 2>"$WORK/sbatch.err" | cut -d';' -f1)
    printf -v "$var" '%s' "$id"
    [ -n "$id" ] || return 1
    for _ in $(seq 1 $((${SLURM_JOB_TIMEOUT:-300} * 5))); do
        states=$(job_states "$id")
        # ended = every state is terminal; PENDING, RUNNING, SIGNALING, REQUEUED, ... are not
        if [ -n "$states" ] && ! echo "$states" |
            grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)$'; then
            ! echo "$states" | grep -qv '^COMPLETED$'
            return
        fi
        sleep 0.2
    done
    echo "slurm_submit: job $id did not end within ${SLURM_JOB_TIMEOUT:-300} s" >&2
    return 1
}

# job_states ID: the JobState of the job, or of every task of an array job, one per line.
job_states() {
    scontrol show job -o "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2
}
