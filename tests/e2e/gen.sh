# tests/e2e/gen.sh - `strux gen`: the HDF5 container it writes (shapes by h5dump -H), SGD on a
# generated training set beating the all-zero predictor clearly on a test set of the same planted
# model (same --seed, --row-offset past the training rows) at -np 1 and 2, byte-identical .svm
# output for the same seed, the .svm and HDF5 outputs holding the same rows, rows independent of
# how generation is split, and bad arguments failing with exit code 2 and a message.
. tests/common/tap.sh
SIZE="--features 1000 --labels 10 --nnz 20 --labels-per-row 2"

expect_ok "help gen" -- "$STRUX" help gen
grep -q "strux gen OUTPUT --rows N --features D --labels L" "$WORK/out"
ok $? "help gen prints the usage line"
expect_ok "strux help lists gen" -- "$STRUX" help
grep -q "^strux gen OUTPUT" "$WORK/out"
ok $? "strux help names gen"

expect_ok "gen a training set (HDF5)" -- "$STRUX" gen "$WORK/tr.h5" --rows 3000 $SIZE --seed 3
grep -qE "tr.h5: 3000 rows from row 0, 1000 features, 10 labels, 60000 non-zeros, [0-9.]+ labels per row, seed 3; generated in" "$WORK/err"
ok $? "gen logs one line with the sizes and times"
expect_ok "gen a test set of the same model (--row-offset 3000)" -- \
    "$STRUX" gen "$WORK/te.h5" --rows 1000 $SIZE --seed 3 --row-offset 3000
h5dump -H "$WORK/tr.h5" >"$WORK/dump" 2>&1
ok $? "h5dump -H reads the container"
$PY - "$WORK/dump" <<'PY' 2>&1 | diag
import re, sys
shapes, group, dataset = {}, "", ""
for line in open(sys.argv[1]):
    if m := re.match(r'\s*GROUP "(\w+)"', line):
        group = m.group(1)
    elif m := re.match(r'\s*DATASET "(\w+)"', line):
        dataset = m.group(1)
    elif m := re.match(r'\s*DATASPACE\s+SIMPLE \{ \( (\d+) \)', line):
        shapes[f"{group}/{dataset}"] = int(m.group(1))
want = {"X/indptr": 3001, "X/indices": 60000, "X/data": 60000, "Y/indptr": 3001}
assert all(shapes.get(k) == v for k, v in want.items()), shapes
PY
ok ${PIPESTATUS[0]} "h5dump -H: X/indptr 3001, X/indices and X/data 60000, Y/indptr 3001"
$PY - "$WORK/tr.h5" <<'PY' 2>&1 | diag
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
assert f.attrs["format"] == b"strux-csr", f.attrs["format"]  # fixed-length: bytes
assert (f.attrs["n_rows"], f.attrs["dim"], f.attrs["n_labels"]) == (3000, 1000, 10)
ptr, idx, val = f["X/indptr"][:], f["X/indices"][:], f["X/data"][:]
assert (np.diff(ptr) == 20).all()
rows = np.repeat(np.arange(3000), 20)
assert (np.diff(idx)[np.diff(rows) == 0] > 0).all(), "columns ascend within rows"
norms = np.sqrt(np.bincount(rows, weights=val.astype(float) ** 2))
assert np.abs(norms - 1).max() < 1e-5 and (val > 0).all()
m = len(f["Y/indices"]) / 3000
assert 1.8 < m < 2.2, m
PY
ok ${PIPESTATUS[0]} "the container's attributes, ascending columns, unit rows, 2 labels per row"

cat >"$WORK/gen.ini" <<INI
[data]
train = $WORK/tr.h5
test = $WORK/te.h5
bias = 1
[task]
type = multilabel
[surrogate]
type = margin
[solver]
type = sgd
lambda = 1e-5
epochs = 10
batch = 16
seed = 1
[output]
model = $WORK/m.h5
metrics = $WORK/m.jsonl
INI
for np in 1 2; do
    $MPIRUN -np $np "$STRUX" train "$WORK/gen.ini" --quiet >"$WORK/t$np.json" 2>"$WORK/t$np.err"
    ok $? "SGD trains on the generated set at -np $np (each rank reads its rows of the container)"
    $PY - "$WORK/t$np.json" "$WORK/te.h5" <<'PY' 2>&1 | diag
import json, sys, h5py
m = json.load(open(sys.argv[1]))
f = h5py.File(sys.argv[2], "r")
zero = len(f["Y/indices"]) / (f.attrs["n_rows"] * f.attrs["n_labels"])
print(f"test Hamming loss {m['hamming_loss']:.4f}, all-zero predictor {zero:.4f}")
assert m["n"] == 1000 and m["hamming_loss"] < 0.6 * zero
PY
    ok ${PIPESTATUS[0]} "test Hamming loss at -np $np is below 0.6 x the all-zero predictor's"
done

expect_ok "gen .svm" -- "$STRUX" gen "$WORK/a.svm" --rows 200 $SIZE --seed 5
expect_ok "gen .svm again" -- "$STRUX" gen "$WORK/b.svm" --rows 200 $SIZE --seed 5
cmp -s "$WORK/a.svm" "$WORK/b.svm"
ok $? "the same seed writes byte-identical .svm files"
head -n 1 "$WORK/a.svm" | grep -qx "200 1000 10" && [ "$(wc -l <"$WORK/a.svm")" -eq 201 ]
ok $? ".svm: the 'N D L' header and one line per row"
"$STRUX" gen "$WORK/c.svm" --rows 200 $SIZE --seed 6 2>/dev/null && ! cmp -s "$WORK/a.svm" "$WORK/c.svm"
ok $? "another seed writes another file"
"$STRUX" gen "$WORK/h1.svm" --rows 80 $SIZE --seed 5 2>/dev/null &&
    "$STRUX" gen "$WORK/h2.svm" --rows 120 $SIZE --seed 5 --row-offset 80 2>/dev/null &&
    cat <(tail -n +2 "$WORK/h1.svm") <(tail -n +2 "$WORK/h2.svm") | cmp -s - <(tail -n +2 "$WORK/a.svm")
ok $? "rows 0-79 and 80-199 generated apart equal rows 0-199 generated at once"
"$STRUX" gen "$WORK/a.h5" --rows 200 $SIZE --seed 5 2>/dev/null &&
    "$STRUX" convert "$WORK/a.svm" "$WORK/a_conv.h5" 2>/dev/null &&
    $PY - "$WORK/a.h5" "$WORK/a_conv.h5" <<'PY' 2>&1 | diag
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for name in ("X/indptr", "X/indices", "X/data", "Y/indptr", "Y/indices"):
    assert np.array_equal(a[name][:], b[name][:]), name
for k in ("n_rows", "dim", "n_labels"):
    assert a.attrs[k] == b.attrs[k], k
PY
ok ${PIPESTATUS[0]} "the .svm output converted to HDF5 equals the HDF5 output"
expect_ok "gen under mpirun -np 2 (rank 0 writes)" -- \
    $MPIRUN -np 2 "$STRUX" gen "$WORK/np2.svm" --rows 200 $SIZE --seed 5
cmp -s "$WORK/a.svm" "$WORK/np2.svm"
ok $? "gen at -np 2 writes the same file"

U="usage: strux gen OUTPUT --rows N --features D --labels L"
expect_fail 2 "gen: --rows, --features and --labels are required" "missing --rows" -- \
    "$STRUX" gen "$WORK/x.h5" --features 10 --labels 3
expect_fail 2 "$U" "usage errors print the usage line" -- "$STRUX" gen "$WORK/x.h5" --features 10
expect_fail 2 "gen: OUTPUT is missing" "missing OUTPUT" -- "$STRUX" gen --rows 5 --features 10 --labels 3
expect_fail 2 "gen: --rows needs an integer in \[1, " "non-numeric --rows" -- \
    "$STRUX" gen "$WORK/x.h5" --rows 5k --features 10 --labels 3
expect_fail 2 "gen: --features needs an integer in \[1, " "zero features" -- \
    "$STRUX" gen "$WORK/x.h5" --rows 5 --features 0 --labels 3
expect_fail 2 "gen: nnz = 11; it must be in \[1, features = 10\]" "nnz above the feature count" -- \
    "$STRUX" gen "$WORK/x.h5" --rows 5 --features 10 --labels 3 --nnz 11
expect_fail 2 "gen: labels per row = 2; it must be in \(0, 1.5\]" "too many labels per row" -- \
    "$STRUX" gen "$WORK/x.h5" --rows 5 --features 10 --labels 3 --labels-per-row 2
expect_fail 2 "gen: noise = -1; it must be finite" "negative noise" -- \
    "$STRUX" gen "$WORK/x.h5" --rows 5 --features 10 --labels 3 --noise -1
expect_fail 2 "gen: --noise needs a finite number, got 'lots'" "non-numeric noise" -- \
    "$STRUX" gen "$WORK/x.h5" --rows 5 --features 10 --labels 3 --noise lots
expect_fail 2 "gen: unknown option '--row'" "unknown option" -- \
    "$STRUX" gen "$WORK/x.h5" --row 5 --features 10 --labels 3
expect_fail 2 "gen: --seed needs a value" "option without its value" -- \
    "$STRUX" gen "$WORK/x.h5" --rows 5 --features 10 --labels 3 --seed
expect_fail 2 "gen: more than one OUTPUT" "two outputs" -- \
    "$STRUX" gen "$WORK/x.h5" "$WORK/y.h5" --rows 5 --features 10 --labels 3
expect_fail 2 "gen: nnz = 11" "a bad argument under mpirun -np 2 ends every rank" -- \
    $MPIRUN -np 2 "$STRUX" gen "$WORK/x.h5" --rows 5 --features 10 --labels 3 --nnz 11
[ ! -e "$WORK/x.h5" ]
ok $? "failed runs write nothing"
expect_fail 4 "cannot create" "an unwritable OUTPUT is a file error (exit 4)" -- \
    "$STRUX" gen /proc/strux-gen.h5 --rows 5 --features 10 --labels 3
exit $TAP_FAILED
