# tests/slurm/resume.sh - slurm/resume.sbatch on a real single-node Slurm started by this test
# (tests/common/slurm.sh): a 2-rank training longer than its 1-minute time limit gets SIGUSR1
# before the limit (--signal=B:USR1@40), checkpoints, requeues itself, resumes, and ends
# COMPLETED with the model of an uninterrupted run of the same config to 1e-9 relative; the job
# output and train.log tell the story. Also: outside Slurm the template refuses to run. Run by
# `make check-slurm` (root; slurm-wlm and munge from scripts/install-deps --slurm).
. tests/common/tap.sh
. tests/common/slurm.sh
trap 'slurm_stop; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

unset OMPI_MCA_rmaps_base_oversubscribe
export STRUX

SUB=$WORK/submit
mkdir -p "$SUB"
sed "s|\.\./shared/data|$STRUX_DATA|" configs/yeast_slack.ini >"$SUB/yeast_slack.ini"
# about 55 s of training at 2 ranks on 2 cores; Slurm signals a run about 30 s in (it checks
# time limits every 30 s), so there is at least one requeue. Slurm holds a requeued job about two
# minutes (its BeginTime); the test releases that hold (scontrol update StartTime=now) so that it
# takes 2-3 minutes whatever the number of requeues.
SET=(--set solver.type=cutting_plane --set solver.epochs=${RESUME_EPOCHS:-2000}
    --set solver.tol=0 --set solver.certify_every=10 --set output.eval_every=0)

# the reference: the same training without interruption
(cd "$SUB" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -np 2 "$STRUX" train yeast_slack.ini "${SET[@]}" --quiet \
    --set output.model="$WORK/reference.h5" --set output.metrics= >/dev/null 2>"$WORK/ref.err")
ok $? "the uninterrupted reference run trains (-np 2)"
diag <"$WORK/ref.err"

expect_fail 2 "strux job: not a Slurm job: submit with sbatch" "outside Slurm the template refuses" -- \
    env -u SLURM_JOB_ID bash slurm/resume.sbatch configs/yeast_slack.ini

slurm_start 2>"$WORK/start.err"
ok $? "a private Slurm (munged, slurmctld, slurmd) starts and its node is idle"
diag <"$WORK/start.err"
[ -n "$SLURM_DIR" ] || exit 1

job=$(cd "$SUB" && sbatch --parsable -n 2 --time=1 --signal=B:USR1@40 \
    "$STRUX_ROOT/slurm/resume.sbatch" yeast_slack.ini "${SET[@]}")
state=""
held=0
for _ in $(seq 1 2000); do # at most 400 s
    info=$(scontrol show job -o "$job")
    state=$(echo "$info" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
    # release the hold once the previous run has left the node (5 s of an idle node), not before:
    # a start while the node still cleans up that run fails the launch
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
ok $? "resume.sbatch -n 2 --time=1 ends COMPLETED ($state)"
info=$(scontrol show job -o "$job")
restarts=$(echo "$info" | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
echo "# job $job: $(echo "$info" | grep -oE 'JobState=[A-Z]+|Restarts=[0-9]+|RunTime=[0-9:]+' | tr '\n' ' ')" | diag
[ "${restarts:-0}" -ge 1 ]
ok $? "the job requeued itself at least once (Restarts=$restarts)"
run=$SUB/runs/$job
log=$SUB/strux-resume-$job.out
grep -q "SIGUSR1 before the time limit; asking strux to checkpoint" "$log" &&
    grep -qE "stopped (after epoch [0-9]+ of ${RESUME_EPOCHS:-2000}|at example [0-9]+ of [0-9]+ of epoch [0-9]+); requeueing" "$log" &&
    grep -q "resuming from runs/$job/checkpoint.h5" "$log" &&
    grep -qE "strux job: done after [0-9]+ run\(s\)" "$log"
ok $? "the job output shows signal, checkpoint, requeue, resume and the end"
diag <"$log"
grep -q "resumed from runs/$job/checkpoint.h5 after epoch" "$run/train.log"
ok $? "train.log records the resumed run"
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
