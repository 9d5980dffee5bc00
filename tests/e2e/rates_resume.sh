# tests/e2e/rates_resume.sh - rate-constrained training stopped inside its MM (issue 15: "SIGTERM
# mid-MM resumes at that step"): the MM's state (step, searches, cuts and their iterates, the
# anchor, Alg. 3's bias cuts) rides in checkpoints, so a run resumed from a periodic checkpoint
# written mid-MM (free bias, -np 2, from the checkpoint's stored config alone) and one stopped by
# SIGTERM in its second MM step both end with the uninterrupted run's model, /rates and metrics
# log (timings aside), bit for bit. The p%-rule problem of tests/common/rates_fixture.sh.
. tests/common/tap.sh
. tests/common/rates_fixture.sh
rates_gen 400 "$WORK/small.svm"
rates_ini "$WORK/small.svm" >"$WORK/small.ini"
Q=(--quiet --set output.progress=never)
$MPIRUN -np 2 "$STRUX" train "$WORK/small.ini" "${Q[@]}" --set model.bias=free \
    --set output.model="$WORK/f2.h5" --set output.metrics="$WORK/f2.jsonl" 2>/dev/null
ok $? "free bias at -np 2: the uninterrupted run"
same_run() { # same_run A B: models, /rates and metrics logs bit-identical (timings aside)
    $PY - "$1" "$2" <<'PY'
import json, sys, h5py, numpy as np
a, b = (h5py.File(s + ".h5", "r") for s in sys.argv[1:3])
ok = np.array_equal(a["weights"][:], b["weights"][:])
for k in ("v", "mix_mu", "mix_weights", "train_ramp", "train_value"):
    ok = ok and np.array_equal(a["rates"][k][:], b["rates"][k][:])
timing = {"time_s", "comm_s", "lp_s", "step_s", "mm_comm_s"}
ra, rb = ([json.loads(l) for l in open(s + ".jsonl")] for s in sys.argv[1:3])
same_log = len(ra) == len(rb) and all(
    {k: v for k, v in x.items() if k not in timing} == {k: v for k, v in y.items() if k not in timing}
    for x, y in zip(ra, rb))
steps = sum(r["mm_step"] is not None for r in ra)
print(f"# weights and /rates identical: {ok}; metrics logs identical: {same_log} "
      f"({len(ra)} records, {steps} MM steps)")
sys.exit(0 if ok and same_log else 1)
PY
}
$MPIRUN -np 2 "$STRUX" train "$WORK/small.ini" "${Q[@]}" --set model.bias=free \
    --set output.checkpoint_every=700 --set output.checkpoint="$WORK/ck.h5" \
    --set output.model="$WORK/c.h5" --set output.metrics="$WORK/c.jsonl" 2>/dev/null &&
    $MPIRUN -np 2 "$STRUX" train --resume "$WORK/ck.h5" --set output.progress=never \
        --set output.model="$WORK/r.h5" --set output.metrics="$WORK/r.jsonl" 2>"$WORK/r.err" &&
    grep -qE "resumed from .*ck.h5 after epoch [0-9]+00$" "$WORK/r.err" && same_run "$WORK/f2" "$WORK/r"
ok $? "free bias -np 2: resumed from the last periodic checkpoint (mid-MM, its stored config) = the uninterrupted run"

rates_gen 1500 "$WORK/big.svm"
rates_ini "$WORK/big.svm" >"$WORK/big.ini"
BIG=(--set rates.eps=1e-5 --set model.bias=free)
"$STRUX" train "$WORK/big.ini" "${Q[@]}" "${BIG[@]}" --set output.model="$WORK/full.h5" \
    --set output.metrics="$WORK/full.jsonl" 2>/dev/null
# SIGTERM on entering epoch 700 (MM step 1 ends at epoch 583 and step 2 at 1321; the run lasts
# about a second, so a timed kill could land after its end): the fault-injection hook of dist/comm.c
STRUX_FAULT_SIGTERM_AT="epoch 700" "$STRUX" train "$WORK/big.ini" "${Q[@]}" "${BIG[@]}" \
    --set output.model="$WORK/t.h5" --set output.metrics="$WORK/t.jsonl" >/dev/null 2>"$WORK/t.err"
rc=$?
grep -q '"mm_step": 1' "$WORK/t.jsonl" && ! grep -q '"mm_step": 2' "$WORK/t.jsonl" &&
    grep -q "SIGTERM: stopped after epoch 700 of" "$WORK/t.err" && [ $rc -eq 0 ] && [ ! -e "$WORK/t.h5" ]
ok $? "SIGTERM in MM step 2 stops with a checkpoint, exit 0, no model"
"$STRUX" train --resume "$WORK/t.ckpt.h5" "${Q[@]}" 2>/dev/null && same_run "$WORK/full" "$WORK/t"
ok $? "the resumed run = the uninterrupted one (weights, /rates, metrics log), bit for bit"

exit $((TAP_FAILED > 0))
