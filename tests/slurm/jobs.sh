# tests/slurm/jobs.sh - the sbatch templates on a real single-node Slurm that this test starts and
# stops itself (tests/common/slurm.sh): slurm/train.sbatch with 2 ranks through srun (auto) and
# through mpirun, which must train the same model; its failures for a missing config and a
# missing strux; slurm/sweep.sbatch as a 3-task job array over a grid, and scripts/sweep-summary
# ranking the tasks by the held-out metric. Run by `make check-slurm` (needs root; installs
# slurm-wlm and munge through scripts/install-deps --slurm).
. tests/common/tap.sh
. tests/common/slurm.sh
trap 'slurm_stop; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

# The templates must work without the test runner's Open MPI settings.
unset OMPI_MCA_rmaps_base_oversubscribe OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
export STRUX # the jobs get the submitting environment: STRUX points at this build

slurm_start 2>"$WORK/start.err"
ok $? "a private Slurm (munged, slurmctld, slurmd) starts and its node is idle"
diag <"$WORK/start.err"
[ -n "$SLURM_DIR" ] || exit 1
daemons=$(slurm_pids)

SUB=$WORK/submit # the submit directory: runs/ and the job output files land here
mkdir -p "$SUB"
sed "s|\.\./shared/data|$STRUX_DATA|" configs/yeast.ini >"$SUB/yeast.ini"

# ---- train.sbatch, 2 ranks, launcher chosen by the template (srun --mpi=pmix here)
slurm_submit "$SUB" id_srun -n 2 "$STRUX_ROOT/slurm/train.sbatch" yeast.ini --set solver.epochs=3
ok $? "train.sbatch -n 2 (auto launcher) finishes with exit 0"
run=$SUB/runs/$id_srun
[ "$(job_states "$id_srun")" = COMPLETED ]
ok $? "job $id_srun is COMPLETED"
grep -q "2 rank(s) via srun" "$SUB/strux-train-$id_srun.out" &&
    grep -q "OPENBLAS_NUM_THREADS=1" "$SUB/strux-train-$id_srun.out"
ok $? "auto picks srun (this Slurm has mpi/pmix); one BLAS thread per rank"
diag <"$SUB/strux-train-$id_srun.out"
"$STRUX" inspect "$run/model.h5" >"$WORK/inspect.out" 2>&1 &&
    grep -q "on 2 rank(s)" "$WORK/inspect.out" && grep -q "epochs = 3" "$WORK/inspect.out"
ok $? "runs/<jobid>/model.h5 is readable by strux inspect (2 ranks, 3 epochs)"
[ "$(wc -l <"$run/metrics.jsonl")" -eq 3 ] && grep -q '"test_hamming_loss": 0\.' "$run/metrics.jsonl"
ok $? "runs/<jobid>/metrics.jsonl has one line per epoch with the held-out metric"
"$PY" -c "import json; d = json.load(open('$run/test_metrics.json')); assert d['n'] == 917" &&
    [ "$(grep -c ' epoch [0-9]/3 ' "$run/train.log")" -eq 3 ] && grep -q "train yeast.ini" "$run/command.txt"
ok $? "test_metrics.json, train.log (one line per epoch) and command.txt are there"

# ---- the same through mpirun: same model (the result does not depend on the launcher)
STRUX_LAUNCH=mpirun slurm_submit "$SUB" id_mpirun -n 2 "$STRUX_ROOT/slurm/train.sbatch" yeast.ini \
    --set solver.epochs=3
ok $? "train.sbatch -n 2 with STRUX_LAUNCH=mpirun finishes with exit 0"
[ "$(job_states "$id_mpirun")" = COMPLETED ] && grep -q "2 rank(s) via mpirun" "$SUB/strux-train-$id_mpirun.out"
ok $? "job $id_mpirun is COMPLETED, launched by mpirun"
"$PY" - "$run/model.h5" "$SUB/runs/$id_mpirun/model.h5" <<'EOF' 2>&1 | diag
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1])["weights"][:]
b = h5py.File(sys.argv[2])["weights"][:]
assert h5py.File(sys.argv[2]).attrs["n_ranks"] == 2
assert np.abs(a - b).max() <= 1e-12 * np.abs(a).max(), np.abs(a - b).max()
EOF
ok ${PIPESTATUS[0]} "srun and mpirun jobs train the same model"

# ---- failures are clear
slurm_submit "$SUB" id_bad -n 1 "$STRUX_ROOT/slurm/train.sbatch" nope.ini
[ "$(job_states "$id_bad")" = FAILED ] &&
    grep -q "strux job: config file 'nope.ini' not found" "$SUB/strux-train-$id_bad.out"
ok $? "a missing config fails the job with a message naming it"
STRUX=/nonexistent/strux slurm_submit "$SUB" id_nostrux -n 1 "$STRUX_ROOT/slurm/train.sbatch" yeast.ini
[ "$(job_states "$id_nostrux")" = FAILED ] &&
    grep -q "strux job: strux not found at '/nonexistent/strux'" "$SUB/strux-train-$id_nostrux.out"
ok $? "a missing strux fails the job with a message saying how to point at it"
slurm_submit "$SUB" id_badset -n 1 "$STRUX_ROOT/slurm/train.sbatch" yeast.ini --set solver.lamda=1
[ "$(job_states "$id_badset")" = FAILED ] &&
    scontrol show job -o "$id_badset" | grep -q 'ExitCode=2:0' &&
    grep -q "unknown key 'solver.lamda'" "$SUB/strux-train-$id_badset.out"
ok $? "a bad override fails the job with exit 2 and strux's message in the job output"

# ---- sweep.sbatch: a 3-setting grid as a job array, then the summary
cat >"$SUB/grid.txt" <<'EOF'
# lambda sweep on yeast
solver.lambda=1e-1 solver.epochs=2

solver.lambda=1e-3 solver.epochs=3
solver.lambda=1e-5 solver.epochs=2 solver.batch=64
EOF
n=$(grep -cEv '^[[:space:]]*(#|$)' "$SUB/grid.txt")
STRUX_LAUNCH=mpirun slurm_submit "$SUB" id_sweep --array=1-"$n" -n 1 "$STRUX_ROOT/slurm/sweep.sbatch" \
    grid.txt yeast.ini --set output.eval_every=0
ok $? "sweep.sbatch --array=1-$n finishes with exit 0"
states=$(job_states "$id_sweep" | sort | uniq -c | tr -s ' ')
[ "$states" = " 3 COMPLETED" ]
ok $? "the 3 array tasks are COMPLETED ($states)"
sweep=$SUB/runs/sweep-$id_sweep
for k in 1 2 3; do
    [ -f "$sweep/$k/model.h5" ] && [ -s "$sweep/$k/test_metrics.json" ] &&
        [ -s "$sweep/$k/metrics.jsonl" ] || false
done
ok $? "each task wrote its model, metrics and test metrics into its own folder"
grep -q "solver.lambda=1e-5" "$sweep/3/command.txt" && grep -q "solver.batch=64" "$sweep/3/command.txt" &&
    [ "$(wc -l <"$sweep/2/metrics.jsonl")" -eq 3 ]
ok $? "task 3 ran with the third setting, task 2 with its 3 epochs"
expect_ok "sweep-summary" -- "$PY" scripts/sweep-summary "$sweep"
cp "$WORK/out" "$WORK/summary.out"
"$PY" - "$sweep" <<'EOF' 2>&1 | diag
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/summary.csv")))
assert len(rows) == 3, rows
h = [float(r["hamming_loss"]) for r in rows]
assert h == sorted(h), h
for r in rows:  # every row carries its own task's held-out value and setting
    t = json.load(open(f"{d}/{r['task']}/test_metrics.json"))
    assert float(r["hamming_loss"]) == t["hamming_loss"], (r, t)
    assert open(f"{d}/{r['task']}/setting.txt").read().split()[0] == \
        "solver.lambda=" + r["solver.lambda"]
assert [r["rank"] for r in rows] == ["1", "2", "3"]
md = open(d + "/summary.md").read().splitlines()
assert "sorted by hamming_loss (ascending; best first)" in md[0], md[0]
assert sum(l.startswith("| ") for l in md) == 4, md   # header + 3 rows
EOF
ok ${PIPESTATUS[0]} "summary.csv and summary.md: 3 rows sorted by hamming_loss ascending, values from each task"
diag <"$WORK/summary.out"
"$PY" scripts/sweep-summary "$sweep" --metric micro_f1 --csv "$WORK/f1.csv" --md "$WORK/f1.md" >/dev/null &&
    "$PY" -c "
import csv
f = [float(r['micro_f1']) for r in csv.DictReader(open('$WORK/f1.csv'))]
assert f == sorted(f, reverse=True), f
assert 'micro_f1 (descending' in open('$WORK/f1.md').readline()"
ok $? "--metric micro_f1 sorts descending"
expect_fail 2 "no metric 'accuracy'; known: " "an unknown metric lists the known ones" -- \
    "$PY" scripts/sweep-summary "$sweep" --metric accuracy

# sweep.sbatch outside an array, and a task beyond the grid
slurm_submit "$SUB" id_noarray -n 1 "$STRUX_ROOT/slurm/sweep.sbatch" grid.txt yeast.ini
[ "$(job_states "$id_noarray")" = FAILED ] &&
    cat "$SUB"/strux-sweep-"$id_noarray"_*.out | grep -q "not an array job: submit with sbatch --array=1-N"
ok $? "sweep.sbatch outside a job array fails and says how to submit it"
slurm_submit "$SUB" id_over --array=4 -n 1 "$STRUX_ROOT/slurm/sweep.sbatch" grid.txt yeast.ini
grep -q "grid.txt has 3 setting(s); array task 4 has none (submit with --array=1-3)" \
    "$SUB/strux-sweep-${id_over}_4.out"
ok $? "an array task beyond the grid fails with the right --array range"

# ---- the daemons stop, and none is left behind
slurm_stop
sleep 0.5
left=""
for p in $daemons; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
[ -n "$daemons" ] && [ -z "$left" ]
ok $? "munged, slurmctld and slurmd are stopped (pids $(echo $daemons))"
