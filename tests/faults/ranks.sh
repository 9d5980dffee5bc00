# tests/faults/ranks.sh - a rank that stops answering or dies ends the job within seconds instead
# of leaving the others spinning: SIGSTOP of one rank of an -np 2 and an -np 4 run trips the
# others' stall watchdog (run.stall_timeout = 5: the job ends with status 1, names the waiting
# call and the phase, and names the stopped rank, found by asking every rank, as the one that
# never reached the collective); kill -9 of one rank ends the job through mpirun, which names the
# process; the periodic checkpoint written before the kill loads (inspect) and resumes to the end.
. tests/common/tap.sh
C=configs/yeast.ini
LONG=(--set solver.type=sgd --set solver.batch=1 --set solver.epochs=100000 --set data.test=
    --set output.metrics="$WORK/m.jsonl" --set output.model="$WORK/m.h5" --set solver.tol=0)

# start_job NP [--set ...]: mpirun -np NP in the background, until 3 epochs are logged; sets JOB
# and RANKS (the ranks' pids)
start_job() {
    local np=$1
    shift
    rm -f "$WORK/m.jsonl"
    $MPIRUN -np "$np" "$STRUX" train $C "${LONG[@]}" "$@" >"$WORK/out" 2>"$WORK/err" &
    JOB=$!
    for _ in $(seq 1200); do
        [ -f "$WORK/m.jsonl" ] && [ "$(wc -l <"$WORK/m.jsonl")" -ge 3 ] && break
        sleep 0.05
    done
    RANKS=$(pgrep -P "$JOB" -f "bin/strux train")
}

# pid_of_rank K: the pid among RANKS whose MPI rank is K (from its environment)
pid_of_rank() {
    for p in $RANKS; do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" &&
            echo "$p"
    done
}

# wait_job SECONDS: the job's exit status, or 124 if it is still running after SECONDS
wait_job() {
    for _ in $(seq $(($1 * 10))); do
        kill -0 "$JOB" 2>/dev/null || { wait "$JOB"; return $?; }
        sleep 0.1
    done
    kill -9 "$JOB" $RANKS 2>/dev/null
    wait "$JOB" 2>/dev/null
    return 124
}

# stall NP K: SIGSTOP rank K of an -np NP run; the watchdog must end the job and name rank K
stall() {
    local np=$1 k=$2
    start_job "$np" --set run.stall_timeout=5
    [ "$(echo $RANKS | wc -w)" -eq "$np" ]
    ok $? "np $np: $np ranks running"
    local victim
    victim=$(pid_of_rank "$k")
    t0=$(date +%s)
    kill -STOP $victim
    wait_job 90
    rc=$?
    kill -CONT $RANKS 2>/dev/null
    kill -9 $RANKS 2>/dev/null
    [ $rc -eq 1 ] && [ $(($(date +%s) - t0)) -le 45 ]
    ok $? "np $np: SIGSTOP of rank $k: the job ends with status 1 within 45 s (status $rc after $(($(date +%s) - t0)) s)"
    grep -qE "strux: rank [0-9]+: MPI_[A-Za-z]+ \(collective #[0-9]+\) has waited [0-9]+ s \(run.stall_timeout = 5 s\) during (epoch [0-9]+|the certificate after epoch [0-9]+)\." "$WORK/err"
    ok $? "np $np: the watchdog names the waiting call, its collective number and the phase"
    grep -qE "\. Rank $k never reached it: no answer within [0-9]+ s \(stopped, killed or hung\)\." "$WORK/err"
    ok $? "np $np: the watchdog names the stopped rank $k as the one that never reached the collective"
    local named
    named=$(grep -oE "Ranks? [0-9, and]+ never reached" "$WORK/err" | grep -oE "[0-9]+" | sort -u |
        tr '\n' ' ')
    [ "$named" = "$k " ]
    ok $? "np $np: ... and no other rank (named: $named)"
    if [ "$np" -gt 2 ]; then # the other np - 2 ranks wait too (in the same collective or not:
        # a rank that finished its part of an allreduce may have entered the next one)
        local line waiting
        line=$(grep -m 1 "has waited" "$WORK/err")
        waiting=$( (echo "$line" | grep -oE "Ranks? [0-9, and]+ waits? in collective" |
            grep -oE "[0-9]+( |,)" ; echo "$line" | grep -oE "Rank [0-9]+ waits in MPI" |
            grep -oE "[0-9]+") | grep -oE "[0-9]+" | sort -u | wc -l)
        [ "$waiting" -eq $((np - 2)) ]
        ok $? "np $np: ... and the $((np - 2)) others as waiting ($waiting named)"
    fi
    grep "has waited" "$WORK/err" | head -n 2 | diag
}
stall 2 1
stall 4 2

start_job 2 --set output.checkpoint_every=2 --set output.checkpoint="$WORK/ck.h5"
for _ in $(seq 600); do [ -f "$WORK/ck.h5" ] && break; sleep 0.05; done
t0=$(date +%s)
kill -9 $(echo $RANKS | cut -d' ' -f2)
wait_job 60
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $(($(date +%s) - t0)) -le 30 ]
ok $? "kill -9 of one rank: the job ends within 30 s (status $rc)"
grep -qiE "signal 9|killed" "$WORK/err"
ok $? "mpirun names the killed process"
grep -iE "signal 9|killed" "$WORK/err" | head -n 2 | diag
"$STRUX" inspect "$WORK/ck.h5" >/dev/null 2>&1 &&
    $MPIRUN -np 2 "$STRUX" train --resume "$WORK/ck.h5" --quiet --set solver.epochs=20 \
        --set output.model="$WORK/resumed.h5" --set output.metrics= 2>"$WORK/err2" &&
    [ -f "$WORK/resumed.h5" ]
ok $? "the last checkpoint before the kill loads and resumes"
head -n 3 "$WORK/err2" | diag
