# tests/slurm/swiki.sh - slurm/swiki.sbatch on a real single-node Slurm started by this test
# (tests/common/slurm.sh), on a SWIKI-shaped set: `strux gen --shape swiki --scale 0.01` (the
# 503-node DAG and 3463 features of that scale) cut to its first 1000 rows, as LSHTC text. The job
# converts the text once, trains nhsvm with SDCA in rounds of 200 examples (solver.sync_every; the
# multi-label DAG oracle solves its LPs), gets SIGUSR1 mid-training (scancel --signal=USR1
# --batch: a forced time limit without waiting a Slurm minute), stops at the next round boundary
# with a checkpoint (between two rounds of an epoch, or after the epoch when the signal lands in
# its last round: where is up to the signal's timing, so both are accepted; tests/mpi/rounds.c
# stops mid-epoch at a chosen example), requeues itself, does not convert again, resumes, and
# ends COMPLETED with the model of an uninterrupted -np 2 run on the text (1e-9 relative). Also:
# outside Slurm the template refuses to run. Run by `make check-slurm`.
. tests/common/tap.sh
. tests/common/slurm.sh
trap 'slurm_stop; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

unset OMPI_MCA_rmaps_base_oversubscribe
export STRUX

SUB=$WORK/submit
mkdir -p "$SUB"
(cd "$SUB" && "$STRUX" gen sw.svm --shape swiki --scale 0.01 --rows 1000 2>"$WORK/gen.err")
ok $? "strux gen --shape swiki --scale 0.01 --rows 1000 writes the text and its DAG"
diag <"$WORK/gen.err"
cat >"$SUB/swiki.ini" <<EOF
[data]
train = sw.svm
bias = 1
normalize = l2
[task]
type = hierarchy
hierarchy = $SUB/sw.hier
model = nhsvm
[surrogate]
type = margin
[solver]
type = sdca
lambda = 1e-5
epochs = ${SWIKI_EPOCHS:-5}
tol = 0
blocks = 4
sync_every = 200
certify_every = 5
[output]
eval_every = 0
EOF

(cd "$SUB" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -np 2 "$STRUX" train swiki.ini --quiet --set output.model="$WORK/reference.h5" \
    --set output.metrics= >/dev/null 2>"$WORK/ref.err")
ok $? "the uninterrupted reference run trains on the text (-np 2)"
diag <"$WORK/ref.err"

expect_fail 2 "strux job: not a Slurm job: submit with sbatch" "outside Slurm the template refuses" -- \
    env -u SLURM_JOB_ID bash slurm/swiki.sbatch "$SUB/swiki.ini"

slurm_start 2>"$WORK/start.err"
ok $? "a private Slurm (munged, slurmctld, slurmd) starts and its node is idle"
diag <"$WORK/start.err"
[ -n "$SLURM_DIR" ] || exit 1

# (--time=30: the template signals 600 s before the limit, after this test)
job=$(cd "$SUB" && sbatch --parsable -n 2 --time=30 "$STRUX_ROOT/slurm/swiki.sbatch" swiki.ini)
run=$SUB/runs/$job
state=""
held=0
signalled=0
for _ in $(seq 1 2000); do # at most 400 s
    info=$(scontrol show job -o "$job")
    state=$(echo "$info" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
    # the forced limit: once a few epochs are logged, the signal a time limit would send
    # (once: a signal that reaches a run still starting, before strux catches it, ends the job)
    if [ "$signalled" -eq 0 ] && [ "$state" = RUNNING ] && [ -f "$run/metrics.jsonl" ] &&
        [ "$(wc -l <"$run/metrics.jsonl")" -ge 3 ]; then
        scancel --signal=USR1 --batch "$job" 2>"$WORK/scancel.err"
        signalled=1
    fi
    # release the requeue hold once the node is idle (as tests/slurm/resume.sh does)
    if [ "$state" = PENDING ] && echo "$info" | grep -q 'Reason=BeginTime' &&
        [ "$(sinfo -h -N -o %t)" = idle ]; then
        held=$((held + 1))
        [ "$held" -ge 25 ] && scontrol update JobId="$job" StartTime=now 2>/dev/null && held=0
    else
        held=0
    fi
    sleep 0.2
done
[ "$state" = COMPLETED ]
ok $? "swiki.sbatch -n 2 ends COMPLETED ($state)"
info=$(scontrol show job -o "$job")
restarts=$(echo "$info" | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
[ "${restarts:-0}" -ge 1 ]
ok $? "the job requeued itself after the signal (Restarts=$restarts)"
log=$SUB/strux-swiki-$job.out
[ "$(grep -c "data.train: converting sw.svm to runs/data/sw.h5" "$log")" -eq 1 ] &&
    grep -q "data.train: runs/data/sw.h5 is newer than sw.svm; not converted again" "$log"
ok $? "the text is converted once; the resumed run reads the container"
at="after epoch"
grep -qE "strux job $job: stopped at example" "$log" && at="at example [0-9]+ of 1000 of epoch"
grep -qE "strux job $job: stopped $at [0-9]+.*; requeueing" "$log" &&
    grep -q "resuming from runs/$job/checkpoint.h5" "$log" &&
    grep -qE "resumed from runs/$job/checkpoint.h5 $at" "$run/train.log"
ok $? "the signal stopped training at a round boundary ($at); the next run resumed there"
diag <"$log"
"$PY" - "$WORK/reference.h5" "$run/model.h5" "$run/metrics.jsonl" <<'EOF' 2>&1 | diag
import json, sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["weights"][:]
b = h5py.File(sys.argv[2], "r")["weights"][:]
rel = np.abs(a - b).max() / np.abs(a).max()
print(f"max relative weight difference {rel:.3g}")
assert rel <= 1e-9, rel
epochs = [json.loads(l)["epoch"] for l in open(sys.argv[3])]
assert epochs == list(range(1, len(epochs) + 1)), epochs
EOF
ok ${PIPESTATUS[0]} "the final model equals the uninterrupted run's to 1e-9; metrics.jsonl has every epoch once"
