# tests/faults/ranks.sh - a rank that stops answering or dies ends the job within seconds instead
# of leaving the others spinning: SIGSTOP of one rank of an -np 2 run trips the other's stall
# watchdog (run.stall_timeout = 5: the job ends with status 1 and names the waiting call and the
# phase); kill -9 of one rank ends the job through mpirun, which names the process; the periodic
# checkpoint written before the kill loads (inspect) and resumes to the end.
. tests/common/tap.sh
C=configs/yeast.ini
LONG=(--set solver.type=sgd --set solver.batch=1 --set solver.epochs=100000 --set data.test=
    --set output.metrics="$WORK/m.jsonl" --set output.model="$WORK/m.h5" --set solver.tol=0)

# start_job: mpirun -np 2 in the background, until 3 epochs are logged; sets JOB and RANKS
start_job() {
    rm -f "$WORK/m.jsonl"
    $MPIRUN -np 2 "$STRUX" train $C "${LONG[@]}" "$@" >"$WORK/out" 2>"$WORK/err" &
    JOB=$!
    for _ in $(seq 600); do
        [ -f "$WORK/m.jsonl" ] && [ "$(wc -l <"$WORK/m.jsonl")" -ge 3 ] && break
        sleep 0.05
    done
    RANKS=$(pgrep -P "$JOB" -f "bin/strux train")
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

start_job --set run.stall_timeout=5
[ "$(echo $RANKS | wc -w)" -eq 2 ]
ok $? "two ranks running"
t0=$(date +%s)
kill -STOP $(echo $RANKS | cut -d' ' -f2)
wait_job 60
rc=$?
kill -CONT $RANKS 2>/dev/null
kill -9 $RANKS 2>/dev/null
[ $rc -eq 1 ] && [ $(($(date +%s) - t0)) -le 30 ]
ok $? "SIGSTOP of one rank: the job ends with status 1 within 30 s (status $rc after $(($(date +%s) - t0)) s)"
grep -qE "strux: rank [01]: MPI_[A-Za-z]+ has waited [0-9]+ s for another rank \(run.stall_timeout = 5 s\) during (epoch [0-9]+|the certificate after epoch [0-9]+): a rank stopped answering" "$WORK/err"
ok $? "the watchdog names the rank that waited, the call and the phase"
grep "has waited" "$WORK/err" | head -n 2 | diag

start_job --set output.checkpoint_every=2 --set output.checkpoint="$WORK/ck.h5"
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
