# tests/e2e/sparse_duals.sh - sdca's hinge duals as sparse lists (solver.dual_blocks = sparse,
# issue 12) and its per-label shrinking and stopping (solvers/shrink.c), on medical (45 labels):
#  - sparse lists against LIBLINEAR's dual CD run per label (liblinear-train -s 3, C = 1/(λn),
#    -B 1): the objective after a solve to gap 1e-5 within 1e-4 of LIBLINEAR's;
#  - sparse against the dense blocks on the same trajectory (the lists hold α, the dense blocks
#    c = −σα/(λn), which round differently): primal and dual after 30 epochs to 1e-10, weights to
#    1e-9 relative; without shrinking the same; shrinking on and off the same optimum (both
#    solved to gap 1e-5);
#  - -np 1, 2, 4 at solver.blocks = 4: the same weights bit for bit (the per-label thresholds are
#    reduced over ranks); a checkpoint resumes bit for bit (the lists and the shrinking state
#    travel in it);
#  - refused before the data is read (exit 2): sparse lists for a loss that is not a sum of binary
#    hinges (slack rescaling), and under [constraints].
. tests/common/tap.sh
M=$STRUX_DATA/medical
C=(configs/medical.ini --quiet --set data.test= --set output.eval_every=0)

train() { # train NAME [--set ...]: model NAME.h5, metrics NAME.jsonl
    local name=$1
    shift
    "$STRUX" train "${C[@]}" "$@" --set output.model="$WORK/$name.h5" \
        --set output.metrics="$WORK/$name.jsonl" >/dev/null 2>"$WORK/$name.err"
}

# agree A B TOL_OBJ TOL_W: last primal and dual of A and B within TOL_OBJ, weights within TOL_W
agree() {
    $PY - "$WORK/$1" "$WORK/$2" "$3" "$4" <<'PY'
import json, sys, h5py, numpy as np
a, b, t_obj, t_w = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
ra, rb = ([json.loads(l) for l in open(p + ".jsonl")][-1] for p in (a, b))
wa, wb = (h5py.File(p + ".h5", "r")["weights"][:] for p in (a, b))
d_obj = max(abs(ra[k] - rb[k]) / abs(ra[k]) for k in ("primal", "dual"))
d_w = np.abs(wa - wb).max() / np.abs(wa).max()
print(f"# primal {ra['primal']!r} / {rb['primal']!r}, dual {ra['dual']!r} / {rb['dual']!r}: "
      f"relative {d_obj:.3g}; weights {d_w:.3g}")
sys.exit(0 if d_obj <= t_obj and d_w <= t_w else 1)
PY
}

LIBLINEAR_EPS=1e-8 $PY tests/common/liblinear_ref.py "$M/medical_train.svm.gz" 1e-3 >"$WORK/ll.json"
ok $? "LIBLINEAR reference on medical"
train ll --set solver.dual_blocks=sparse --set solver.tol=1e-5 --set solver.epochs=3000
ok $? "sdca with sparse dual lists trains medical to gap 1e-5"
$PY - "$WORK/ll.json" "$WORK/ll.jsonl" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))["objective"]
last = [json.loads(l) for l in open(sys.argv[2])][-1]
rel = abs(last["primal"] - ref) / ref
print(f"# LIBLINEAR {ref:.9f}, sdca sparse {last['primal']:.9f} (dual {last['dual']:.9f}): {rel:.2e}")
sys.exit(0 if rel <= 1e-4 and last["gap"] <= 1e-5 * last["primal"] else 1)
PY
ok $? "sparse lists: the objective is LIBLINEAR's (1e-4)"

E=(--set solver.epochs=30 --set solver.tol=0)
for sh in true false; do
    train dense_$sh "${E[@]}" --set solver.dual_blocks=dense --set solver.shrinking=$sh &&
        train sparse_$sh "${E[@]}" --set solver.dual_blocks=sparse --set solver.shrinking=$sh
    ok $? "dense and sparse blocks train 30 epochs (shrinking $sh)"
    out=$(agree dense_$sh sparse_$sh 1e-10 1e-9)
    ok $? "shrinking $sh: sparse lists follow the dense blocks' trajectory (1e-10, weights 1e-9)"
    echo "$out" | diag
done
train opt_false --set solver.dual_blocks=sparse --set solver.tol=1e-5 --set solver.epochs=3000 \
    --set solver.shrinking=false
out=$(agree ll opt_false 2e-5 1e-1)
ok $? "shrinking on and off reach one optimum (both at gap 1e-5: objectives within 2e-5)"
echo "$out" | diag

B=(--set solver.dual_blocks=sparse --set solver.blocks=4 --set solver.epochs=20 --set solver.tol=0)
for np in 1 2 4; do
    $MPIRUN -np $np "$STRUX" train "${C[@]}" "${B[@]}" --set output.model="$WORK/np$np.h5" \
        --set output.metrics="$WORK/np$np.jsonl" >/dev/null 2>"$WORK/np$np.err"
    ok $? "-np $np trains with sparse lists at solver.blocks = 4"
done
for np in 2 4; do
    out=$(agree np1 np$np 0 0)
    ok $? "-np $np: the weights and objectives of -np 1, bit for bit"
    echo "$out" | diag
done

R=(--set solver.dual_blocks=sparse --set solver.tol=0)
train full "${R[@]}" --set solver.epochs=12 --set output.checkpoint_every=6 \
    --set output.checkpoint="$WORK/ck.h5" &&
    "$STRUX" train --resume "$WORK/ck.h5" --quiet --set output.model="$WORK/resumed.h5" \
        --set output.metrics="$WORK/resumed.jsonl" --set output.checkpoint="$WORK/ck2.h5" \
        >/dev/null 2>"$WORK/resume.err"
ok $? "a sparse-list run of 12 epochs checkpoints after 6; the checkpoint resumes"
out=$(agree full resumed 0 0)
ok $? "the resumed run ends bit-identical to the uninterrupted one"
echo "$out" | diag

expect_fail 2 "solver.dual_blocks = sparse keeps the duals of a sum of binary hinges.*hinge_parts" \
    "sparse lists for slack rescaling are refused, naming the flag" \
    -- "$STRUX" train configs/medical_slack.ini --set solver.type=sdca \
    --set solver.dual_blocks=sparse --set output.model="$WORK/x.h5"
! grep -q "train data" "$WORK/err" && [ ! -f "$WORK/x.h5" ]
ok $? "refused before the data is read, nothing written"
expect_fail 2 "\[constraints\] needs the inner SVM's duals as coefficients" \
    "sparse lists under [constraints] are refused" \
    -- "$STRUX" train configs/adult_fairness.ini --set solver.dual_blocks=sparse \
    --set output.model="$WORK/x.h5"
echo "1..$TAP_N"
