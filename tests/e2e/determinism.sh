# tests/e2e/determinism.sh - the same yeast config at -np 1, 2 and 4 (oversubscribed): the models'
# weights agree to 1e-9 relative (max |a - b| / max |a|) and the test predictions are identical;
# the model written at the end of training, re-read by `strux predict`/`eval`, scores exactly as
# the in-memory model did (HDF5 round trip).
. tests/common/tap.sh
D=$STRUX_DATA/yeast
for np in 1 2 4; do
    timeout 300 $MPIRUN -np $np "$STRUX" train configs/yeast.ini --quiet \
        --set solver.type=sgd --set solver.epochs=8 --set output.model="$WORK/m$np.h5" \
        --set output.metrics="$WORK/m$np.jsonl" >"$WORK/train$np.json" 2>"$WORK/err$np"
    ok $? "yeast trains at -np $np"
    $MPIRUN -np $np "$STRUX" predict --model "$WORK/m$np.h5" --data "$D/yeast_test.svm.gz" \
        --out "$WORK/pred$np.txt" 2>>"$WORK/err$np"
    ok $? "predict at -np $np"
done
for np in 2 4; do
    $PY - "$WORK/m1.h5" "$WORK/m$np.h5" <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["weights"][:]
b = h5py.File(sys.argv[2], "r")["weights"][:]
rel = np.abs(a - b).max() / np.abs(a).max()
print(f"# max relative weight difference {rel:.3g}")
sys.exit(0 if a.shape == b.shape and rel <= 1e-9 else 1)
PY
    ok $? "weights at -np $np agree with -np 1 to 1e-9 relative"
    cmp -s "$WORK/pred1.txt" "$WORK/pred$np.txt"
    ok $? "test predictions at -np $np are identical to -np 1"
    diff <(cut -d, -f1-3 "$WORK/m1.jsonl") <(cut -d, -f1-3 "$WORK/m$np.jsonl") >/dev/null
    ok $? "epoch objectives at -np $np match -np 1"
done
[ "$(wc -l <"$WORK/pred1.txt")" -eq 917 ]
ok $? "one prediction per test example"
"$STRUX" eval --model "$WORK/m1.h5" --data "$D/yeast_test.svm.gz" >"$WORK/eval1.json" 2>/dev/null
cmp -s "$WORK/eval1.json" "$WORK/train1.json"
ok $? "HDF5 round trip: the re-read model scores exactly as at the end of training"
$MPIRUN -np 4 "$STRUX" eval --model "$WORK/m1.h5" --data "$D/yeast_test.svm.gz" \
    >"$WORK/eval4.json" 2>/dev/null
cmp -s "$WORK/eval1.json" "$WORK/eval4.json"
ok $? "eval at -np 4 prints the same metrics as at -np 1"
