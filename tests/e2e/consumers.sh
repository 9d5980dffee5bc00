# tests/e2e/consumers.sh - programs that read strux models without the strux command:
# scripts/strux_model.py (h5py + numpy) as a command and as a module, and docs/example_predict.c
# built against a `make install` tree through pkg-config. Both must write exactly the bytes of
# `strux predict --out`: on yeast (dense, bias), emotions (data.scale = maxabs folded into the
# weights), medical (sparse), medical written as /weights_csr from a sparse model, and yeast
# without a bias feature.
. tests/common/tap.sh
SM=scripts/strux_model.py

train() { # name config [--set ...]: model $WORK/<name>.h5
    local name=$1 config=$2
    shift 2
    "$STRUX" train "$config" --quiet --set solver.epochs=4 --set output.metrics= \
        --set output.model="$WORK/$name.h5" "$@" >/dev/null
}

# ---- a make install tree, and the C example built against it
make -s BUILD="$BUILD" install PREFIX="$WORK/prefix" >"$WORK/install.log" 2>&1
ok $? "make install PREFIX=<tmp>"
[ -x "$WORK/prefix/bin/strux" ] && [ -f "$WORK/prefix/lib/libstrux.a" ] &&
    [ -f "$WORK/prefix/include/strux/task.h" ] && [ -f "$WORK/prefix/lib/pkgconfig/strux.pc" ]
ok $? "the tree holds bin/strux, lib/libstrux.a, include/strux/*.h and lib/pkgconfig/strux.pc"
# plain cc, no MPI: a predicting program needs only the library and its HDF5/BLAS dependencies
cc -std=c11 -Wall -Wextra -Werror docs/example_predict.c -o "$WORK/example_predict" \
    $(PKG_CONFIG_PATH="$WORK/prefix/lib/pkgconfig" pkg-config --cflags --libs strux) \
    >"$WORK/cc.log" 2>&1
ok $? "docs/example_predict.c builds with cc and pkg-config against the installed tree"
diag <"$WORK/cc.log"

check_set() { # name config test-data [--set ...]
    local name=$1 config=$2 data=$3
    shift 3
    train "$name" "$config" "$@"
    ok $? "train $name"
    "$STRUX" predict --quiet --model "$WORK/$name.h5" --data "$data" --out "$WORK/$name.strux"
    "$PY" $SM predict --model "$WORK/$name.h5" --data "$data" --out "$WORK/$name.py"
    cmp "$WORK/$name.strux" "$WORK/$name.py" 2>&1 | diag
    ok ${PIPESTATUS[0]} "$name: strux_model.py predict writes the bytes of strux predict"
    "$WORK/example_predict" "$WORK/$name.h5" "$data" >"$WORK/$name.c" 2>"$WORK/$name.c.err"
    cmp "$WORK/$name.strux" "$WORK/$name.c" 2>&1 | diag
    ok ${PIPESTATUS[0]} "$name: example_predict (installed library) writes the bytes of strux predict"
    [ "$(sort -u "$WORK/$name.strux" | wc -l)" -ge 5 ]
    ok $? "$name: the predictions vary (the comparison is not vacuous)"
}
check_set yeast configs/yeast.ini "$STRUX_DATA/yeast/yeast_test.svm.gz"
check_set emotions configs/emotions.ini "$STRUX_DATA/emotions/emotions_test.svm.gz"
check_set medical configs/medical.ini "$STRUX_DATA/medical/medical_test.svm.gz"
check_set yeast_nobias configs/yeast.ini "$STRUX_DATA/yeast/yeast_train.svm.gz" --set data.bias=0
check_set medical_csr configs/medical.ini "$STRUX_DATA/medical/medical_test.svm.gz" \
    --set output.weights=csr --set model.layout=sparse

# ---- as a module
"$PY" - "$WORK" "$STRUX_DATA/emotions/emotions_test.svm.gz" <<'EOF' 2>&1 | diag
import sys
sys.path.insert(0, "scripts")
import strux_model
w, data = sys.argv[1], sys.argv[2]
m = strux_model.load(w + "/emotions.h5")
assert m.task == "multilabel" and m.n_labels == 6 and m.bias == 1.0 and m.data_dim == 72, vars(m)
assert m.label_names[0] == "amazed-suprised", m.label_names
d = strux_model.read_libsvm(data, m.data_dim)
assert len(d) == 202 and m.scores(d).shape == (202, 6)
assert m.predict(d) == open(w + "/emotions.strux").read().splitlines()
EOF
ok ${PIPESTATUS[0]} "strux_model as a module: load, read_libsvm, scores, predict"

# ---- a task it does not know is a clear error, not a guess
cp "$WORK/yeast.h5" "$WORK/chain.h5"
"$PY" -c "import h5py; h5py.File('$WORK/chain.h5', 'r+').attrs['task'] = 'chain'"
expect_fail 1 "task 'chain' is not supported by strux_model.py \(supported: hierarchy, multilabel, rta\)" \
    "strux_model.py names the unsupported task and the supported ones" -- \
    "$PY" $SM predict --model "$WORK/chain.h5" --data "$STRUX_DATA/yeast/yeast_test.svm.gz"
"$STRUX" convert --quiet tests/fixtures/good.svm "$WORK/good.h5"
expect_fail 1 "good.h5: not a strux model" "strux_model.py refuses an HDF5 file that is no model" \
    -- "$PY" $SM info "$WORK/good.h5"
expect_fail 1 "libstrux.a: not an HDF5 file" "strux_model.py refuses a file that is not HDF5" -- \
    "$PY" $SM info "$WORK/prefix/lib/libstrux.a"
