# tests/e2e/cli.sh - the strux command as a user meets it: help and version, usage and config
# errors (unknown section/key listing the valid ones, bad values naming where they were set),
# --set overrides, convert + training from HDF5 equal to training from text, predict/eval output,
# inspect, h5dump and h5py reading the model, and docs/config.md in step with `strux help config`.
. tests/common/tap.sh
D=$STRUX_DATA/yeast

expect_ok "--version" -- "$STRUX" --version
grep -qE '^strux [0-9]+\.[0-9]+\.[0-9]+$' "$WORK/out"
ok $? "--version prints 'strux X.Y.Z'"
expect_ok "help lists the commands" -- "$STRUX" help
for c in train predict eval convert inspect help; do grep -q "strux $c" "$WORK/out" || false; done
ok $? "help names train, predict, eval, convert, inspect, help"
expect_ok "help train" -- "$STRUX" help train
expect_fail 2 "unknown command 'trian'" "unknown command is a usage error" -- "$STRUX" trian
expect_fail 2 "usage: strux train CONFIG" "train without a config" -- "$STRUX" train
expect_fail 2 "cannot open the config file" "missing config file" -- "$STRUX" train "$WORK/none.ini"

printf '[data]\ntrain = %s/yeast_train.svm.gz\n[solver]\nepochs = 2\nlamda = 0.1\n' "$D" >"$WORK/typo.ini"
expect_fail 2 "typo.ini:5: unknown key 'solver.lamda'; valid keys of \[solver\]: solver.type, solver.lambda" \
    "unknown key names file:line and lists the valid keys" -- "$STRUX" train "$WORK/typo.ini"
printf '[data]\ntrain = x\n[solvr]\nepochs = 2\n' >"$WORK/sec.ini"
expect_fail 2 "sec.ini:4: unknown section \[solvr\]; valid sections: \[data\], \[task\], \[surrogate\], \[solver\], \[model\], \[output\]" \
    "unknown section lists the valid sections" -- "$STRUX" train "$WORK/sec.ini"
expect_fail 2 "--set: solver.lambda = -1 is outside" "bad --set value names its origin" -- \
    $MPIRUN -np 2 "$STRUX" train configs/yeast.ini --set solver.lambda=-1
expect_fail 2 "task.type = 'sequence' is unknown; valid types: multilabel" \
    "unknown task lists the valid ones" -- "$STRUX" train configs/yeast.ini --set task.type=sequence
printf '[data]\ntrain = %s/yeast_train.svm.gz\n' "$D" >"$WORK/min.ini"
expect_fail 2 "solver.type = 'newton' is unknown; valid: sgd, bcfw, sdca, cutting_plane" "unknown solver" -- \
    "$STRUX" train "$WORK/min.ini" --set solver.type=newton

# --set overrides win over the file; the resolved config is stored in the model
expect_ok "train yeast with --set overrides" -- "$STRUX" train configs/yeast.ini \
    --set solver.type=sgd --set solver.epochs=3 --set solver.lambda=0.002 --set output.model="$WORK/y.h5" \
    --set output.metrics="$WORK/y.jsonl"
[ "$(wc -l <"$WORK/y.jsonl")" -eq 3 ]
ok $? "metrics log has one line per epoch"
grep -q '"epoch": 3, "primal": ' "$WORK/y.jsonl" && grep -q '"oracle_calls": 4500' "$WORK/y.jsonl"
ok $? "metrics lines carry epoch, objective and oracle calls"
grep -q '"hamming_loss": ' "$WORK/out" && grep -q '"n": 917' "$WORK/out"
ok $? "train prints the test metrics as one JSON object"
expect_ok "inspect" -- "$STRUX" inspect "$WORK/y.h5"
grep -q "lambda = 0.002" "$WORK/out" && grep -q "epochs = 3" "$WORK/out" &&
    grep -q "task         multilabel" "$WORK/out" && grep -q "Class14" "$WORK/out"
ok $? "inspect shows task, label names and the resolved config with the overrides"
h5dump -a /task -a /n_ranks -d /weights "$WORK/y.h5" >"$WORK/dump" 2>&1 &&
    grep -q '"multilabel"' "$WORK/dump" && grep -q 'DATASPACE  SIMPLE { ( 14, 104 )' "$WORK/dump"
ok $? "h5dump reads the model (task, weights 14 x 104)"
$PY -c "
import h5py, sys
f = h5py.File('$WORK/y.h5', 'r')
# fixed-length strings (docs/model-format.md): h5py gives bytes
assert f.attrs['format'] == b'strux-model' and f.attrs['task'].decode() == 'multilabel'
assert f['weights'].shape == (14, 104) and f['training/primal'].shape == (3,)
assert 'lambda = 0.002' in f['config'][()].decode()
assert f['label_names'][0].decode() == 'Class1'
" 2>&1 | diag
ok ${PIPESTATUS[0]} "h5py reads the model's attributes, weights, curve, config and label names"
expect_fail 3 "not an HDF5 file" "inspect of a non-model" -- "$STRUX" inspect tests/fixtures/good.svm

# predict and eval
expect_ok "predict" -- "$STRUX" predict --model "$WORK/y.h5" --data "$D/yeast_test.svm.gz" \
    --out "$WORK/pred.txt"
[ "$(wc -l <"$WORK/pred.txt")" -eq 917 ] && grep -qE '^[0-9]+(,[0-9]+)*$' "$WORK/pred.txt"
ok $? "predict writes one comma-separated label set per example"
expect_fail 2 "usage: strux predict" "predict without --out" -- \
    "$STRUX" predict --model "$WORK/y.h5" --data "$D/yeast_test.svm.gz"
expect_ok "eval" -- "$STRUX" eval --model "$WORK/y.h5" --data "$D/yeast_test.svm.gz"
$PY -c "
import json
d = json.load(open('$WORK/out'))
assert set(d) == {'hamming_loss', 'subset_accuracy', 'micro_f1', 'macro_f1', 'example_f1', 'n'}, d
assert d['n'] == 917 and 0 < d['hamming_loss'] < 0.3
"
ok $? "eval prints one JSON object with the multilabel metrics"

# convert: training from the HDF5 container gives the same model as from text
expect_ok "convert yeast train to HDF5" -- "$STRUX" convert "$D/yeast_train.svm.gz" "$WORK/yt.h5"
h5dump -a /format "$WORK/yt.h5" | grep -q strux-csr
ok $? "the container is HDF5 (h5dump)"
expect_ok "train from the HDF5 container with 2 ranks" -- $MPIRUN -np 2 "$STRUX" train \
    configs/yeast.ini --set data.train="$WORK/yt.h5" --set solver.type=sgd --set solver.epochs=3 \
    --set solver.lambda=0.002 --set output.model="$WORK/yh.h5" --set output.metrics=
$PY -c "
import h5py, numpy as np
a = h5py.File('$WORK/y.h5')['weights'][:]; b = h5py.File('$WORK/yh.h5')['weights'][:]
assert np.abs(a - b).max() <= 1e-9 * np.abs(a).max()
"
ok $? "model trained from HDF5 at np 2 equals the model trained from text at np 1"
expect_fail 2 "usage: strux convert" "convert without output" -- "$STRUX" convert "$D/yeast_train.svm.gz"
expect_fail 3 "bad_nan.svm:2" "convert reports bad input with file and line" -- \
    "$STRUX" convert tests/fixtures/bad_nan.svm "$WORK/bad.h5"
[ ! -e "$WORK/bad.h5" ]
ok $? "failed convert leaves no output"

# docs/config.md is generated from the key tables
"$STRUX" help config | diff -u docs/config.md - | diag
ok ${PIPESTATUS[1]} "docs/config.md matches 'strux help config' (regenerate with: strux help config > docs/config.md)"

# data.scale = maxabs: factors are folded into the weights, so the saved model scores raw data
# exactly as the scaled in-memory model did
E=$STRUX_DATA/emotions
$MPIRUN -np 2 "$STRUX" train configs/emotions.ini --quiet --set solver.epochs=5 \
    --set output.model="$WORK/e.h5" --set output.metrics= >"$WORK/e_train.json"
ok $? "emotions trains with data.scale = maxabs at np 2"
"$STRUX" eval --model "$WORK/e.h5" --data "$E/emotions_test.svm.gz" >"$WORK/e_eval.json" 2>/dev/null
cmp -s "$WORK/e_train.json" "$WORK/e_eval.json"
ok $? "the exported (folded) model scores raw test data as the scaled model did"
mkdir -p "$WORK/confdir"
expect_fail 4 "confdir: is a directory, not a config file" "a directory as the config is refused" -- \
    "$STRUX" train "$WORK/confdir"
