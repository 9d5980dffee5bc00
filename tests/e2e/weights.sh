# tests/e2e/weights.sh - per-example loss weights (data.weights): weight 2 on an example trains
# the same problem as the example twice, so every dual solver run to a relative duality gap of
# 1e-10 reaches the same primal objective (to 1e-9 relative) on 100 yeast rows with the first row
# doubled either way (λ = 0.1; bcfw at λ = 1, where its O(1/k) tail reaches the gap); a weights
# file with the wrong length, a negative or a non-numeric weight stops every rank with file:line
# (exit 3) and writes nothing.
. tests/common/tap.sh
zcat "$STRUX_DATA/yeast/yeast_train.svm.gz" | head -n 100 >"$WORK/a.svm"
{ head -n 1 "$WORK/a.svm"; cat "$WORK/a.svm"; } >"$WORK/dup.svm"
{ echo 2; for _ in $(seq 2 100); do echo 1; done; } >"$WORK/w.txt"
COMMON=(--quiet --set data.test= --set data.n_labels=14 --set data.dim=103 --set solver.tol=1e-10
    --set solver.epochs=20000 --set output.eval_every=0 --set output.metrics=)

primal() { $PY -c 'import h5py,sys; print(repr(float(h5py.File(sys.argv[1], "r")["training/primal"][-1])))' "$1"; }

for case in sdca:0.1 cutting_plane:0.1 bcfw:1; do
    IFS=: read -r s lambda <<<"$case"
    "$STRUX" train configs/yeast.ini "${COMMON[@]}" --set solver.type=$s --set solver.lambda=$lambda \
        --set data.train="$WORK/dup.svm" --set output.model="$WORK/dup.h5" 2>"$WORK/err" &&
        "$STRUX" train configs/yeast.ini "${COMMON[@]}" --set solver.type=$s \
            --set solver.lambda=$lambda --set data.train="$WORK/a.svm" \
            --set data.weights="$WORK/w.txt" --set output.model="$WORK/w.h5" 2>>"$WORK/err"
    ok $? "$s: trains the doubled example and the weighted one"
    a=$(primal "$WORK/dup.h5")
    b=$(primal "$WORK/w.h5")
    $PY -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-9 * abs(a))" "$a" "$b"
    ok $? "$s: weight 2 equals the example twice (primal $a vs $b)"
done

bad() { # bad NAME CONTENT PATTERN
    printf "$2" >"$WORK/$1"
    expect_fail 3 "$3" "a weights file with $1 is refused" -- \
        $MPIRUN -np 2 "$STRUX" train configs/yeast.ini --set data.train="$WORK/a.svm" \
        --set data.test= --set data.weights="$WORK/$1" --set output.model="$WORK/bad.h5"
}
bad "too_few" "1\n1\n" "too_few: 2 weights for the 100 examples of"
bad "a_negative_weight" "1\n-1\n" "a_negative_weight:2: '-1' is not a loss weight"
bad "nan" "nan\n" "nan:1: 'nan' is not a loss weight"
[ ! -e "$WORK/bad.h5" ]
ok $? "nothing written"
