# tests/e2e/hier_consumers.sh - scripts/strux_model.py predicts hierarchy models (issue 14) byte for
# byte as `strux predict` (--format ids, the closure's ascending file ids, and paths), from the model
# file alone (its /hierarchy: node order, parents; no hierarchy file is given to it), with its own
# numpy copy of the arithmetic of src/tasks/hier_infer.c. Cases, each model trained 4 epochs:
#   - imclef07a (single-label tree, data.normalize = l2), every 25th training row (400; the file is
#     sorted by label), all four models
#     (flat, hsvm, nhsvm, ssvm), on the whole test split (1006 rows);
#   - funcat_cellcycle (multi-label tree; training paths that end at internal nodes, so stop
#     leaves), first 300 training rows, all four models, on the first 400 test rows;
#   - --format paths: imclef07a with the names of its .labels file, funcat without names;
#   - a seeded single-label DAG, hsvm and nhsvm (leaf path sums over the ancestor sets);
#   - weight rows permuted: other predictions, still byte-identical (the script reads /weights);
#   - a multi-label DAG model is refused with a clear message and exit status 1.
. tests/common/tap.sh
IM=$STRUX_DATA/imclef07a
FC=$STRUX_DATA/funcat_cellcycle
gzip -dc "$IM/ImCLEF07A_train.svm.gz" | awk 'NR % 25 == 1' >"$WORK/im.svm" # 400 rows, 55 labels
gzip -dc "$IM/ImCLEF07A_test.svm.gz" >"$WORK/im_test.svm"
gzip -dc "$FC/cellcycle_FUN_train.svm.gz" | head -n 300 >"$WORK/fc.svm"
gzip -dc "$FC/cellcycle_FUN_test.svm.gz" | head -n 400 >"$WORK/fc_test.svm"
# a random DAG (ids 0..24, root 0, some second parents); single- and multi-label rows on it
$PY tests/common/hier_fixture.py dag "$WORK" 41 25 6 0.35 8 0.3 dag1.svm:200:1 \
    dag1_test.svm:300:1 dagm.svm:120:1/2
printf '[surrogate]\ntype = margin\n' >"$WORK/h.ini"

same() { # same NAME TEST [--format F]: strux predict and strux_model.py predict, the same bytes
    local name=$1 te=$2
    shift 2
    "$STRUX" predict --model "$WORK/$name.h5" --data "$te" --out "$WORK/$name.c.txt" "$@" \
        2>/dev/null &&
        $PY scripts/strux_model.py predict --model "$WORK/$name.h5" --data "$te" \
            --out "$WORK/$name.py.txt" "$@" &&
        cmp -s "$WORK/$name.c.txt" "$WORK/$name.py.txt" && [ -s "$WORK/$name.c.txt" ]
}
train() { # train NAME TRAIN HIER [--set ...]
    local name=$1 tr=$2 hier=$3
    shift 3
    "$STRUX" train "$WORK/h.ini" --quiet --set task.type=hierarchy --set task.hierarchy="$hier" \
        --set data.train="$tr" --set data.bias=1 --set solver.lambda=1e-4 --set solver.epochs=4 \
        --set solver.seed=2 --set output.metrics= --set output.model="$WORK/$name.h5" "$@" \
        >/dev/null 2>"$WORK/$name.err"
}
distinct() { echo "$(wc -l <"$WORK/$1.c.txt") lines, $(sort -u "$WORK/$1.c.txt" | wc -l) distinct labels"; }

for m in flat hsvm nhsvm ssvm; do
    train "im_$m" "$WORK/im.svm" "$IM/ImCLEF07A.hier" --set task.model=$m --set data.normalize=l2 \
        --set solver.lambda=1e-3 --set data.label_names="$IM/ImCLEF07A.labels"
    ok $? "imclef07a $m trains"
    same "im_$m" "$WORK/im_test.svm"
    ok $? "imclef07a $m (single-label tree): strux_model.py writes the bytes of strux predict ($(distinct "im_$m"))"
    train "fc_$m" "$WORK/fc.svm" "$FC/cellcycle_FUN.hier" --set task.model=$m \
        --set data.n_labels=100000
    ok $? "funcat $m trains"
    same "fc_$m" "$WORK/fc_test.svm"
    ok $? "funcat $m (multi-label tree, stop leaves): the bytes of strux predict ($(distinct "fc_$m"))"
done
cp "$WORK/im_nhsvm.h5" "$WORK/im_paths.h5"
same im_paths "$WORK/im_test.svm" --format paths && grep -q / "$WORK/im_paths.c.txt"
ok $? "imclef07a nhsvm --format paths (names from the model's data.label_names): the same bytes ($(head -n 1 "$WORK/im_paths.c.txt"), ...)"
cp "$WORK/fc_hsvm.h5" "$WORK/fc_paths.h5"
same fc_paths "$WORK/fc_test.svm" --format paths && grep -q , "$WORK/fc_paths.c.txt"
ok $? "funcat hsvm --format paths (no names: ids; several paths per row): the same bytes"
$PY - "$WORK/fc_nhsvm.h5" <<'PY'
import sys, h5py
ids = h5py.File(sys.argv[1], "r")["hierarchy/node_id"][:]
print(f"# {int((ids < -1).sum())} stop leaves of {len(ids)} nodes")
sys.exit(0 if (ids < -1).sum() > 0 else 1)
PY
ok $? "the funcat model holds virtual stop leaves (node_id < -1)"

for m in hsvm nhsvm; do # nhsvm's DAG alpha is 0 below depth 3 here: few distinct answers
    train dag1_$m "$WORK/dag1.svm" "$WORK/dag.hier" --set task.model=$m --set solver.lambda=1e-3
    ok $? "single-label DAG $m trains"
    same dag1_$m "$WORK/dag1_test.svm"
    ok $? "single-label DAG $m: the bytes of strux predict ($(distinct dag1_$m))"
done

# permuted weight rows (node n scored by row n+1): other predictions, still the same bytes
cp "$WORK/fc_nhsvm.h5" "$WORK/perm.h5"
$PY - "$WORK/perm.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    w = f["weights"][:]
    f["weights"][...] = np.roll(w, 1, axis=0)
PY
same perm "$WORK/fc_test.svm" && ! cmp -s "$WORK/perm.c.txt" "$WORK/fc_nhsvm.c.txt"
ok $? "permuted weight rows: other predictions, still byte-identical"

train dagm "$WORK/dagm.svm" "$WORK/dag.hier" --set task.model=nhsvm --set solver.lambda=1e-3 \
    --set task.lp_start=fresh
ok $? "multi-label DAG nhsvm trains"
$PY scripts/strux_model.py predict --model "$WORK/dagm.h5" --data "$WORK/dagm.svm" \
    >"$WORK/dagm.py.txt" 2>"$WORK/dagm.py.err"
rc=$?
[ $rc -eq 1 ] && grep -q "multi-label hierarchy model on a DAG.*use .strux predict." "$WORK/dagm.py.err" &&
    [ ! -s "$WORK/dagm.py.txt" ]
ok $? "a multi-label DAG model is refused: exit 1, a message naming the reason, no output"
diag <"$WORK/dagm.py.err"
