# tests/e2e/resume.sh - checkpoints and resume: a run stopped by SIGTERM (one rank) or SIGUSR1
# (sent to mpirun, which forwards it to every rank) writes its checkpoint after the current epoch,
# exits 0 and says how to resume; the resumed run ends with the model of the uninterrupted run to
# 1e-9 relative (every solver; slack rescaling so that the searches' warm-start state matters)
# and rewrites the metrics log to match it; periodic checkpoints are valid model files; a
# checkpoint resumes at another rank count (solver.blocks = 0: fewer ranks keep its blocks and
# its path, more ranks re-block with a warning); resuming from a plain model, or from a missing
# file fails with the reason.
. tests/common/tap.sh
C=configs/yeast_slack.ini
COMMON=(--quiet --set output.eval_every=0 --set solver.epochs=40 --set solver.tol=0)

same_weights() { # same_weights A.h5 B.h5
    $PY - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["weights"][:]
b = h5py.File(sys.argv[2], "r")["weights"][:]
rel = np.abs(a - b).max() / np.abs(a).max()
print(f"# max relative weight difference {rel:.3g}")
sys.exit(0 if a.shape == b.shape and rel <= 1e-9 else 1)
PY
}

# interrupt NAME SIGNAL LAUNCHER...: start training, send SIGNAL once 5 epochs are logged
interrupt() {
    local name=$1 sig=$2
    shift 2
    "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    local pid=$!
    for _ in $(seq 600); do
        [ -f "$WORK/$name.jsonl" ] && [ "$(wc -l <"$WORK/$name.jsonl")" -ge 5 ] && break
        sleep 0.05
    done
    kill -"$sig" "$pid"
    wait "$pid"
}

for case in sgd:1:TERM bcfw:1:TERM sdca:2:USR1 cutting_plane:2:USR1; do
    IFS=: read -r s np sig <<<"$case"
    run=($MPIRUN -np "$np" "$STRUX" train) # no timeout(1) in front: the signal goes to mpirun
    [ "$np" -eq 1 ] && run=("$STRUX" train)
    "${run[@]}" $C "${COMMON[@]}" --set solver.type=$s --set output.model="$WORK/full_$s.h5" \
        --set output.metrics="$WORK/full_$s.jsonl" >/dev/null 2>&1
    ok $? "$s -np $np: uninterrupted run"
    interrupt "$s" "$sig" "${run[@]}" $C "${COMMON[@]}" --set solver.type=$s \
        --set output.model="$WORK/$s.h5" --set output.metrics="$WORK/$s.jsonl"
    ok $? "$s -np $np: SIG$sig stops the run with exit status 0"
    grep -qE "SIG$sig: stopped after epoch [0-9]+ of 40 and wrote the checkpoint .*/$s.ckpt.h5; resume with: strux train --resume .*/$s.ckpt.h5" "$WORK/$s.err"
    ok $? "$s -np $np: the message names the checkpoint and the resume command"
    [ -f "$WORK/$s.ckpt.h5" ] && [ ! -f "$WORK/$s.h5" ] && ! ls "$WORK" | grep -q '\.tmp\.'
    ok $? "$s -np $np: a checkpoint, no final model, no temporary file"
    "${run[@]}" --resume "$WORK/$s.ckpt.h5" --quiet >/dev/null 2>"$WORK/$s.resume.err"
    ok $? "$s -np $np: resumes from the checkpoint alone (its stored config)"
    same_weights "$WORK/full_$s.h5" "$WORK/$s.h5"
    ok $? "$s -np $np: the resumed model equals the uninterrupted one to 1e-9"
    cmp -s <(cut -d, -f1-2 "$WORK/full_$s.jsonl") <(cut -d, -f1-2 "$WORK/$s.jsonl")
    ok $? "$s -np $np: the metrics log matches the uninterrupted run epoch by epoch"
done

"$STRUX" train $C "${COMMON[@]}" --set solver.type=bcfw --set solver.epochs=30 \
    --set output.checkpoint_every=10 --set output.checkpoint="$WORK/every.h5" \
    --set output.model="$WORK/e.h5" --set output.metrics= >/dev/null 2>&1
h5dump -a /checkpoint/epoch "$WORK/every.h5" 2>/dev/null | grep -q "(0): 20"
ok $? "output.checkpoint_every = 10 leaves the checkpoint of epoch 20 of 30 (h5dump)"
"$STRUX" eval --model "$WORK/every.h5" --data "$STRUX_DATA/yeast/yeast_test.svm.gz" \
    >"$WORK/every.json" 2>/dev/null && grep -q '"hamming_loss"' "$WORK/every.json"
ok $? "a checkpoint is a model file: strux eval scores it"

# another rank count (solver.blocks = 0, one block per rank of the first run): fewer ranks share
# the checkpoint's blocks and end with the unbroken run's model; more ranks re-block (one per
# rank) from the checkpoint's dual point and say that the path changes
$MPIRUN -np 2 "$STRUX" train $C "${COMMON[@]}" --set solver.type=sdca --set solver.epochs=8 \
    --set output.checkpoint_every=4 --set output.checkpoint="$WORK/two.ckpt.h5" \
    --set output.model="$WORK/two.h5" --set output.metrics= >/dev/null 2>&1
"$STRUX" train --resume "$WORK/two.ckpt.h5" --set output.model="$WORK/two_on_one.h5" \
    --set output.metrics= >"$WORK/two_on_one.out" 2>&1 &&
    grep -q "2 data block(s) (solver.blocks = 0: one per rank of the run that wrote it), 1 rank(s) now: the ranks share the checkpoint's blocks" "$WORK/two_on_one.out" &&
    same_weights "$WORK/two.h5" "$WORK/two_on_one.h5"
ok $? "a -np 2 checkpoint resumed at -np 1 keeps its 2 data blocks and ends with the unbroken model"
$MPIRUN -np 2 "$STRUX" train --resume "$WORK/every.h5" --set output.model="$WORK/one_on_two.h5" \
    >"$WORK/one_on_two.out" 2>&1 && [ -f "$WORK/one_on_two.h5" ] &&
    grep -q "was written with 1 data block(s), this run has 2: it continues from the checkpoint's dual point" "$WORK/one_on_two.out"
ok $? "a -np 1 checkpoint resumed at -np 2 continues with one block per rank and says the path changes"
expect_fail 3 "a model without checkpoint state \(no /checkpoint group\)" \
    "resuming from a plain model is refused" -- \
    "$STRUX" train $C --resume "$WORK/e.h5" --set solver.type=bcfw --set output.model="$WORK/x.h5"
expect_fail 3 "not an HDF5 file" "resuming from a missing file is refused" -- \
    "$STRUX" train --resume "$WORK/none.h5"
expect_fail 2 "a checkpoint of task multilabel with solver bcfw; this run has task multilabel with solver sdca" \
    "resuming with another solver is refused" -- \
    "$STRUX" train $C --resume "$WORK/every.h5" --set solver.type=sdca --set output.model="$WORK/x.h5"

# a checkpoint remembers its training data and the options that shape its trajectory (issue 18):
# an SGD checkpoint (no dual blocks to catch it) resumed on data with one value changed, or with
# another λ, is refused; limits and outputs may change
"$STRUX" train $C "${COMMON[@]}" --set solver.type=sgd --set solver.epochs=4 \
    --set output.checkpoint_every=2 --set output.checkpoint="$WORK/sgd.h5" \
    --set output.model="$WORK/s.h5" --set output.metrics= >/dev/null 2>&1
zcat "$STRUX_DATA/yeast/yeast_train.svm.gz" | sed '1s/ 1:[^ ]*/ 1:0.125/' >"$WORK/changed.svm"
expect_fail 2 "sgd.h5: written for other training data \(fingerprint [0-9a-f]+; this run's .*changed.svm has [0-9a-f]+\)" \
    "an SGD checkpoint resumed on other training data is refused" -- \
    "$STRUX" train --resume "$WORK/sgd.h5" --set data.train="$WORK/changed.svm" \
    --set output.model="$WORK/x.h5"
expect_fail 2 "sgd.h5: written with solver.lambda = 0.001; this run has solver.lambda = 0.5" \
    "a resume with another λ is refused" -- \
    "$STRUX" train --resume "$WORK/sgd.h5" --set solver.lambda=0.5 --set output.model="$WORK/x.h5"
"$STRUX" train --resume "$WORK/sgd.h5" --quiet --set solver.epochs=6 --set output.model="$WORK/x.h5" \
    --set output.metrics= 2>"$WORK/err"
ok $? "a resume with other limits and outputs runs"
