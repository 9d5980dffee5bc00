# tests/e2e/bias.sh - model.bias: regularised (the data.bias feature regularised like any weight,
# LIBLINEAR's -B: covered against liblinear-train by dual_solvers.sh), free (its weights left out
# of the regulariser: the objective's norm excludes them, and on data whose labels need a large
# offset the free bias is visibly larger than the regularised one), none (no bias column: the
# model is one column narrower, and predict/eval/strux_model.py read the data that way); a dual
# solver refuses model.bias = free naming the flag, before any data is read.
. tests/common/tap.sh
C=configs/yeast.ini
COMMON=(--quiet --set solver.type=sgd --set solver.epochs=30 --set solver.lambda=0.1
    --set output.metrics= --set data.test=)
for b in regularised free none; do
    "$STRUX" train $C "${COMMON[@]}" --set model.bias=$b --set output.model="$WORK/$b.h5" 2>"$WORK/err"
    ok $? "model.bias = $b trains (sgd)"
done
$PY - "$WORK" <<'PY'
import sys, h5py, numpy as np
w = {b: h5py.File(f"{sys.argv[1]}/{b}.h5", "r")["weights"][:] for b in ("regularised", "free", "none")}
d = {b: w[b].shape[1] for b in w}
assert d["regularised"] == d["free"] == d["none"] + 1, d
breg, bfree = np.abs(w["regularised"][:, -1]), np.abs(w["free"][:, -1])
print(f"# mean |bias|: regularised {breg.mean():.4f}, free {bfree.mean():.4f}")
# yeast's labels are rare (about 30% positive): the hinge wants negative offsets, which the
# regulariser at λ = 0.1 shrinks and the free bias does not
assert bfree.mean() > 1.5 * breg.mean(), (breg.mean(), bfree.mean())
PY
ok $? "the free bias is visibly larger than the regularised one; none has no bias column"
"$STRUX" eval --model "$WORK/none.h5" --data "$STRUX_DATA/yeast/yeast_test.svm.gz" >"$WORK/none.json" 2>"$WORK/err" &&
    $PY scripts/strux_model.py predict --model "$WORK/none.h5" --data "$STRUX_DATA/yeast/yeast_test.svm.gz" \
        --out "$WORK/py.txt" && "$STRUX" predict --model "$WORK/none.h5" \
        --data "$STRUX_DATA/yeast/yeast_test.svm.gz" --out "$WORK/c.txt" 2>>"$WORK/err" &&
    cmp -s "$WORK/py.txt" "$WORK/c.txt"
ok $? "a model without bias column evaluates, and strux_model.py predicts it as strux predict does"
expect_fail 2 "model.bias = free needs a solver with flag free_bias .*solver.type = sdca lacks it: solvers with it: sgd" \
    "sdca refuses model.bias = free" -- \
    "$STRUX" train $C --set solver.type=sdca --set model.bias=free --set output.model="$WORK/x.h5"
expect_fail 2 "model.bias = free needs the bias feature: data.bias is 0" \
    "model.bias = free without a bias feature is refused" -- \
    "$STRUX" train $C --set solver.type=sgd --set model.bias=free --set data.bias=0 \
    --set output.model="$WORK/x.h5"
[ ! -e "$WORK/x.h5" ]
ok $? "nothing written"
