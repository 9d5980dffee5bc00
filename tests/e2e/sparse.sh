# tests/e2e/sparse.sh - the sparse weight layout and pruning (issue 13) on a `strux gen` synthetic
# set (600 rows x 3000 features x 200 labels, 10 non-zeros and 2 labels a row): sdca and sgd with
# model.layout = sparse give label_major double's weights bit for bit (so the same predictions);
# the sparse model's bytes stay within 2 x nnz x (4 + 8) plus 44 a row (the log line); `strux
# inspect` counts the file's non-zeros per row (min/median/max) and in total as numpy does;
# model.prune = t writes the unpruned weights with every |w| < t set to 0 (same trajectory), says
# how many it dropped, and the pruned model predicts.
. tests/common/tap.sh
"$STRUX" gen "$WORK/d.h5" --rows 600 --features 3000 --labels 200 --nnz 10 --labels-per-row 2 \
    --seed 7 2>/dev/null
ok $? "gen writes the synthetic set"
cat >"$WORK/s.ini" <<INI
[data]
train = $WORK/d.h5
bias = 1
[task]
type = multilabel
[surrogate]
type = margin
[solver]
lambda = 1e-3
epochs = 3
tol = 0
seed = 1
[output]
metrics =
INI
for s in sdca sgd; do
    for lay in label_major sparse; do
        "$STRUX" train "$WORK/s.ini" --set solver.type=$s --set model.layout=$lay \
            --set output.model="$WORK/${s}_$lay.h5" 2>"$WORK/${s}_$lay.err"
        ok $? "$s trains with model.layout = $lay"
    done
    $PY - "$WORK/${s}_label_major.h5" "$WORK/${s}_sparse.h5" <<'PY' >"$WORK/cmp"
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r")["weights"][:], h5py.File(sys.argv[2], "r")["weights"][:]
print(f"# {np.count_nonzero(a)} of {a.size} weights non-zero; max difference {np.abs(a - b).max()}")
sys.exit(0 if np.array_equal(a, b) else 1)
PY
    ok $? "$s: sparse weights equal label_major double's bit for bit"
    diag <"$WORK/cmp"
    line=$(grep "sparse model:" "$WORK/${s}_sparse.err")
    nnz=$(echo "$line" | sed -E 's/.*: ([0-9]+) non-zeros in ([0-9]+) bytes.*/\1/')
    bytes=$(echo "$line" | sed -E 's/.*: ([0-9]+) non-zeros in ([0-9]+) bytes.*/\2/')
    [ -n "$nnz" ] && [ "$bytes" -le $((2 * nnz * 12 + 200 * 44)) ]
    ok $? "$s: sparse model bytes $bytes <= 2 x $nnz non-zeros x 12 + 44 a row"
done

"$STRUX" inspect "$WORK/sdca_sparse.h5" >"$WORK/inspect" 2>&1
ok $? "inspect reads the model"
$PY - "$WORK/sdca_sparse.h5" "$WORK/inspect" <<'PY' >"$WORK/cmp"
import sys, re, h5py, numpy as np
w = h5py.File(sys.argv[1], "r")["weights"][:]
per = np.count_nonzero(w, axis=1)
want = (f"non-zeros    {per.sum()} of {w.size} row weights ({100 * per.sum() / w.size:.2f}%); "
        f"per row min {per.min()}, median {np.median(per):g}, max {per.max()}")
got = [l for l in open(sys.argv[2]) if l.startswith("non-zeros")]
print("# want:", want)
print("# got: ", got[0].strip() if got else None)
sys.exit(0 if got and got[0].strip() == want else 1)
PY
ok $? "inspect's non-zeros per row and in total match numpy's count"
diag <"$WORK/cmp"

for lay in label_major sparse; do
    "$STRUX" train "$WORK/s.ini" --set solver.type=sdca --set model.layout=$lay \
        --set model.prune=0.002 --set output.model="$WORK/pruned_$lay.h5" 2>"$WORK/err"
    ok $? "model.prune = 0.002 trains ($lay)"
    grep -qE "model.prune = 0.002 dropped [1-9][0-9]* of" "$WORK/err"
    ok $? "$lay: the log says how many weights were dropped"
    $PY - "$WORK/sdca_label_major.h5" "$WORK/pruned_$lay.h5" <<'PY' >"$WORK/cmp"
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r")["weights"][:], h5py.File(sys.argv[2], "r")["weights"][:]
want = np.where(np.abs(a) < 0.002, 0.0, a)
print(f"# {np.count_nonzero(a)} -> {np.count_nonzero(b)} non-zeros")
sys.exit(0 if np.array_equal(want, b) and np.count_nonzero(b) < np.count_nonzero(a) else 1)
PY
    ok $? "$lay: the pruned file is the unpruned weights with |w| < 0.002 set to 0"
    diag <"$WORK/cmp"
done
"$STRUX" predict --model "$WORK/pruned_sparse.h5" --data "$WORK/d.h5" --out "$WORK/p.txt" \
    2>"$WORK/err" && [ "$(wc -l <"$WORK/p.txt")" -eq 600 ]
ok $? "the pruned model predicts the 600 rows"
echo "1..$TAP_N"
