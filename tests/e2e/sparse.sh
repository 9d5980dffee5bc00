# tests/e2e/sparse.sh - the sparse weight layout and pruning (issue 13) on a `strux gen` synthetic
# set (600 rows x 3000 features x 200 labels, 10 non-zeros and 2 labels a row): sdca and sgd with
# model.layout = sparse give label_major double's weights bit for bit (so the same predictions);
# the sparse model's bytes stay within 2 x nnz x (4 + 8) plus 44 a row (the log line); `strux
# inspect` counts the file's non-zeros per row (min/median/max) and in total as numpy does;
# model.prune = t writes the unpruned weights with every |w| < t set to 0 (same trajectory), says
# how many it dropped, and the pruned model predicts. output.weights = csr writes /weights_csr:
# strux predict (into a sparse model) and scripts/strux_model.py give the dense file's
# predictions, inspect names it, float32 data with output.precision = float; a CSR file with an
# unsorted or out-of-range column, a row pointer array that disagrees with its data, a
# decreasing one or a NaN is refused with exit 3 naming the dataset and the first bad entry.
# Sparse syncs: sdca at solver.blocks = 4 gives the -np 1 weights at -np 2 and 4 (1e-9
# relative), moving under half the bytes (comm_bytes) of label_major's dense allreduce.
. tests/common/tap.sh
. tests/common/sparse_fixture.sh
{
    sparse_ini
    cat <<INI
[solver]
lambda = 1e-3
epochs = 3
tol = 0
seed = 1
[output]
metrics =
INI
} >"$WORK/s.ini"
for s in sdca sgd; do
    for lay in label_major sparse; do
        "$STRUX" train "$WORK/s.ini" --set solver.type=$s --set model.layout=$lay \
            --set output.model="$WORK/${s}_$lay.h5" 2>"$WORK/${s}_$lay.err"
        ok $? "$s trains with model.layout = $lay"
    done
    $PY - "$WORK/${s}_label_major.h5" "$WORK/${s}_sparse.h5" <<'PY' >"$WORK/cmp"
import sys, numpy as np
from strux_model import Model
a, b = Model(sys.argv[1]).weights, Model(sys.argv[2]).weights
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
import sys, numpy as np
from strux_model import Model
w = Model(sys.argv[1]).weights
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
import sys, numpy as np
from strux_model import Model
a, b = Model(sys.argv[1]).weights, Model(sys.argv[2]).weights
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

# sparse syncs
for np in 1 2 4; do
    for lay in label_major sparse; do
        $MPIRUN -np $np "$STRUX" train "$WORK/s.ini" --set solver.type=sdca --set solver.blocks=4 \
            --set model.layout=$lay --set output.model="$WORK/np${np}_$lay.h5" 2>"$WORK/err"
        ok $? "sdca $lay at -np $np (solver.blocks = 4) trains"
    done
done
for np in 2 4; do
    $PY - "$WORK/np1_sparse.h5" "$WORK/np${np}_sparse.h5" "$WORK/np${np}_label_major.h5" \
        <<'PY' >"$WORK/cmp"
import sys, h5py, numpy as np
from strux_model import Model
a, b, d = (h5py.File(p, "r") for p in sys.argv[1:4])
wa, wb = Model(a.filename).weights, Model(b.filename).weights
rel = np.abs(wa - wb).max() / np.abs(wa).max()
sb, sd = b["training/comm_bytes"][-1], d["training/comm_bytes"][-1]
print(f"# weights {rel:.2e} relative to -np 1; comm_bytes sparse {sb:.0f}, label_major {sd:.0f}")
sys.exit(0 if rel <= 1e-9 and sb < sd / 2 else 1)
PY
    ok $? "-np $np: sparse syncs give the -np 1 weights with under half the dense bytes"
    diag <"$WORK/cmp"
done

# CSR model files
"$STRUX" gen "$WORK/d.svm" --rows 600 --features 3000 --labels 200 --nnz 10 --labels-per-row 2 \
    --seed 7 2>/dev/null
for prec in double float; do
    "$STRUX" train "$WORK/s.ini" --set solver.type=sgd --set model.layout=sparse \
        --set output.weights=csr --set output.precision=$prec \
        --set output.model="$WORK/csr_$prec.h5" 2>"$WORK/err" &&
        "$STRUX" train "$WORK/s.ini" --set solver.type=sgd --set model.layout=sparse \
            --set output.weights=dense --set output.precision=$prec \
            --set output.model="$WORK/dense_$prec.h5" 2>>"$WORK/err"
    ok $? "output.weights = csr and dense ($prec) train"
    h5dump -H "$WORK/csr_$prec.h5" >"$WORK/h" && grep -q "weights_csr" "$WORK/h" &&
        ! grep -q 'DATASET "weights"' "$WORK/h"
    ok $? "$prec: the file holds /weights_csr and no /weights"
    want=H5T_IEEE_F64LE
    [ $prec = float ] && want=H5T_IEEE_F32LE
    h5dump -H -d /weights_csr/data "$WORK/csr_$prec.h5" | grep -q $want
    ok $? "$prec: /weights_csr/data is $want"
    "$STRUX" predict --model "$WORK/csr_$prec.h5" --data "$WORK/d.svm" --out "$WORK/pc.txt" \
        2>"$WORK/err" &&
        "$STRUX" predict --model "$WORK/dense_$prec.h5" --data "$WORK/d.svm" \
            --out "$WORK/pd.txt" 2>>"$WORK/err" && cmp -s "$WORK/pc.txt" "$WORK/pd.txt"
    ok $? "$prec: strux predict gives the dense file's predictions from the CSR file"
    $PY scripts/strux_model.py predict --model "$WORK/csr_$prec.h5" --data "$WORK/d.svm" \
        --out "$WORK/py.txt" 2>>"$WORK/err" && cmp -s "$WORK/py.txt" "$WORK/pd.txt"
    ok $? "$prec: strux_model.py reads the CSR file and predicts the same"
done
"$STRUX" inspect "$WORK/csr_double.h5" | grep -q "stored as double CSR (/weights_csr)"
ok $? "inspect names the CSR storage"
bad() { # NAME PYTHON-EDIT PATTERN
    cp "$WORK/csr_double.h5" "$WORK/bad.h5"
    $PY - "$WORK/bad.h5" <<PY
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r+")
g = f["weights_csr"]
ptr, idx, val = g["indptr"][:], g["indices"][:], g["data"][:]
$2
for k, v in (("indptr", ptr), ("indices", idx), ("data", val)):
    del g[k]
    g[k] = v
PY
    expect_fail 3 "$3" "a CSR model with $1 is refused (exit 3) naming it" \
        -- "$STRUX" predict --model "$WORK/bad.h5" --data "$WORK/d.svm" --out "$WORK/x.txt"
}
bad "an unsorted row" "r = int(np.argmax(np.diff(ptr) > 1)); a = ptr[r]; idx[a], idx[a + 1] = idx[a + 1], idx[a]" \
    "weights_csr/indices' entry [0-9]+ \\(row [0-9]+\\) is [0-9]+ after [0-9]+: a row's columns must ascend"
bad "a column out of range" "idx[5] = 3001" \
    "weights_csr/indices' entry 5 \\(row 0\\) is 3001, outside \\[0, dim = 3001\\)"
bad "a row pointer that disagrees with its data" "ptr[-1] -= 1" \
    "weights_csr/indptr' ends at [0-9]+ but 'weights_csr/indices' and 'weights_csr/data' hold"
bad "a decreasing row pointer" "ptr[3] = ptr[4] + 1" \
    "weights_csr/indptr' is not a row pointer array: .*indptr\\[3\\]"
bad "a NaN" "val[7] = np.nan" "weights_csr/data' holds a non-finite value \\(nan\\) at entry 7"
bad "fewer values than indices" "val = val[:-1]" "weights_csr/data' has [0-9]+ entries but"
echo "1..$TAP_N"
