# tests/faults/signals.sh - SIGTERM in every phase of a run (reading, set-up, an epoch, a
# certificate, a checkpoint write, the model write), delivered to every rank of an -np 2 run by
# the fault-injection hook STRUX_FAULT_SIGTERM_AT (dist/comm.c raises the signal when the rank
# enters the named phase): the run stops after the current epoch, or the current CoCoA+ round of
# one (yeast.ini syncs every 128 examples), with a checkpoint and exit 0, and
# the resumed run ends with the uninterrupted run's model bit for bit; a signal while the model is
# written comes after the last epoch, so that run just completes with the same model.
. tests/common/tap.sh
C=configs/yeast.ini
RUN=(--quiet --set solver.type=sdca --set solver.epochs=8 --set solver.tol=0 --set data.test=
    --set output.metrics= --set output.checkpoint_every=2)

same() { # same A.h5 B.h5: identical weights
    $PY -c 'import sys, h5py, numpy as np; a, b = (h5py.File(f, "r")["weights"][:] for f in sys.argv[1:3]); sys.exit(not np.array_equal(a, b))' "$1" "$2"
}

$MPIRUN -np 2 "$STRUX" train $C "${RUN[@]}" --set output.model="$WORK/full.h5" \
    --set output.checkpoint="$WORK/full.ckpt.h5" 2>"$WORK/err"
ok $? "the uninterrupted -np 2 run"
k=0
for phase in "reading the training data" "set-up" "epoch 3" "the certificate after epoch 3" \
    "the checkpoint write" "writing the model"; do
    k=$((k + 1))
    $MPIRUN -np 2 -x STRUX_FAULT_SIGTERM_AT="$phase" "$STRUX" train $C "${RUN[@]}" \
        --set output.model="$WORK/m$k.h5" --set output.checkpoint="$WORK/c$k.h5" 2>"$WORK/err$k"
    rc=$?
    if [ "$phase" = "writing the model" ]; then
        [ $rc -eq 0 ] && same "$WORK/full.h5" "$WORK/m$k.h5"
        ok $? "SIGTERM while $phase: the run completes with the uninterrupted model"
        continue
    fi
    [ $rc -eq 0 ] && grep -qE "stopped (after epoch|at example)" "$WORK/err$k" &&
        [ ! -e "$WORK/m$k.h5" ]
    ok $? "SIGTERM during $phase: stops after its epoch or round with a checkpoint, exit 0"
    grep -oE "SIGTERM: stopped (after epoch [0-9]* of 8|at example [0-9]* of [0-9]* of epoch [0-9]*)" \
        "$WORK/err$k" | head -n 1 | diag
    $MPIRUN -np 2 "$STRUX" train --resume "$WORK/c$k.h5" --quiet --set output.model="$WORK/m$k.h5" \
        2>>"$WORK/err$k" && same "$WORK/full.h5" "$WORK/m$k.h5"
    ok $? "SIGTERM during $phase: the resumed run ends with the uninterrupted model, bit for bit"
done
