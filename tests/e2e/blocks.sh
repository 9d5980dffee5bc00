# tests/e2e/blocks.sh - rank-count invariance of the dual solvers at a fixed solver.blocks: SDCA
# and BCFW at solver.blocks = 4 train the same weights at -np 1, 2 and 4 (1e-9 relative after a
# fixed number of epochs: only the order of the sum over blocks differs, ~1e-15); the cutting
# plane to 1e-6 (its working sets make discrete decisions, plane added or not, that can amplify
# that rounding: 1.3e-8 seen after 8 epochs); a
# checkpoint written at -np 2 resumes at -np 4 and at -np 1 to the uninterrupted run's model;
# solver.blocks below the rank count is refused before any data is read.
. tests/common/tap.sh
C=configs/yeast.ini
COMMON=(--quiet --set output.eval_every=0 --set solver.epochs=8 --set solver.tol=0
    --set solver.blocks=4 --set data.test= --set output.metrics=)

close() { # close A.h5 B.h5 [TOL]: weights equal to TOL (1e-9) relative
    $PY - "$1" "$2" "${3:-1e-9}" <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["weights"][:]
b = h5py.File(sys.argv[2], "r")["weights"][:]
rel = np.abs(a - b).max() / np.abs(a).max()
print(f"# max relative weight difference {rel:.3g}")
sys.exit(0 if a.shape == b.shape and rel <= float(sys.argv[3]) else 1)
PY
}

for s in sdca bcfw cutting_plane; do
    for np in 1 2 4; do
        $MPIRUN -np $np "$STRUX" train $C "${COMMON[@]}" --set solver.type=$s \
            --set output.model="$WORK/${s}_$np.h5" 2>"$WORK/err"
        ok $? "$s -np $np at solver.blocks = 4 trains"
    done
    tol=1e-9
    [ $s = cutting_plane ] && tol=1e-6
    out=$(close "$WORK/${s}_1.h5" "$WORK/${s}_2.h5" $tol && close "$WORK/${s}_1.h5" "$WORK/${s}_4.h5" $tol)
    ok $? "$s: -np 1, 2 and 4 give the same weights ($tol relative)"
    echo "$out" | diag
done

# a checkpoint after epoch 4 of an -np 2 run resumes at -np 4 and at -np 1
$MPIRUN -np 2 "$STRUX" train $C "${COMMON[@]}" --set solver.type=sdca \
    --set output.checkpoint_every=4 --set output.checkpoint="$WORK/ck.h5" \
    --set output.model="$WORK/ck_full.h5" 2>"$WORK/err"
ok $? "-np 2 run with a checkpoint after epoch 4"
for np in 4 1; do
    cp "$WORK/ck.h5" "$WORK/ck_$np.h5"
    $MPIRUN -np $np "$STRUX" train --resume "$WORK/ck_$np.h5" --quiet \
        --set output.model="$WORK/resumed_$np.h5" --set output.checkpoint="$WORK/ck_$np.h5" \
        2>"$WORK/err"
    rc=$?
    [ $rc -eq 0 ] && close "$WORK/ck_full.h5" "$WORK/resumed_$np.h5" >"$WORK/diff"
    ok $? "the -np 2 checkpoint resumes at -np $np to the uninterrupted run's weights"
    cat "$WORK/diff" "$WORK/err" 2>/dev/null | head -n 5 | diag
done

expect_fail 2 "solver.blocks = 2 data blocks cannot be shared by 4 ranks" \
    "solver.blocks below the rank count is refused" -- \
    $MPIRUN -np 4 "$STRUX" train $C --set solver.type=sdca --set solver.blocks=2 \
    --set output.model="$WORK/x.h5"
[ ! -e "$WORK/x.h5" ]
ok $? "nothing written"
