# tests/e2e/hierarchy.sh - the hierarchy task end to end at one rank on a small cut of imclef07a
# (the first 200 rows: a single-label tree); the rank-count checks are in hierarchy_ranks.sh:
#   - flat = the multiclass task on the same rows with leaf k as class k (an independent
#     implementation of the Crammer-Singer SVM): the same objective after 4 sgd epochs (1e-9
#     relative) and the same predictions;
#   - data.n_labels is not needed: the model trained on the cut (whose largest node id is below the
#     tree's) predicts the whole test file, which names nodes the cut never does;
#   - data.normalize = l2 = the same rows l2-normalised beforehand (in Python, rounded to float32
#     as strux reads them): the same weights and test scores, the same predictions from the raw
#     test file (the model applies the normalisation itself), and scripts/strux_model.py predicts
#     a multilabel model trained with it as strux does (hierarchy models: hier_consumers.sh);
#   - predict --format paths prints the predicted leaf's root path with the names of the model's
#     data.label_names (the shared .labels layout) or, without names, the ids joined by '/';
#   - bad input ends every rank (-np 2) with one message, the exit code and no model: no
#     task.hierarchy, a label that is not a node (file and line named), two most specific nodes
#     under task.labels = single, a path ending at an internal node under task.partial_paths =
#     error; ssvm on a DAG, refused before, trains (the α update's convex extension of §4.3).
. tests/common/tap.sh
IM=$STRUX_DATA/imclef07a
gzip -dc "$IM/ImCLEF07A_train.svm.gz" | head -n 200 >"$WORK/im.svm"
gzip -dc "$IM/ImCLEF07A_test.svm.gz" | head -n 100 >"$WORK/im_test.svm"
printf '0 1\n0 2\n1 3\n2 3\n' >"$WORK/dag.hier" # node 3 has two parents
printf '1,3 1:1\n2 1:2\n' >"$WORK/dag.svm"
printf '[surrogate]\ntype = margin\n' >"$WORK/h.ini"

train() { # train NAME TRAIN HIER TEST [--set ...]: model $WORK/NAME.h5, predictions NAME.pred
    local name=$1 tr=$2 hier=$3 te=$4
    shift 4
    "$STRUX" train "$WORK/h.ini" --quiet --set data.train="$tr" --set data.test="$te" \
        --set task.type=hierarchy --set task.hierarchy="$hier" --set solver.lambda=1e-3 \
        --set solver.epochs=4 --set solver.tol=0 --set solver.seed=3 --set data.bias=1 \
        --set output.eval_every=0 --set output.model="$WORK/$name.h5" \
        --set output.metrics="$WORK/$name.jsonl" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || return 1
    # the model holds its hierarchy: predict needs nothing else
    "$STRUX" predict --model "$WORK/$name.h5" --data "$te" --out "$WORK/$name.pred" 2>>"$WORK/$name.err"
}

close() { # close A B: weights of A.h5 and B.h5 equal to 1e-9 relative, predictions identical
    $PY - "$WORK/$1" "$WORK/$2" <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1] + ".h5", "r")["weights"][:]
b = h5py.File(sys.argv[2] + ".h5", "r")["weights"][:]
rel = np.abs(a - b).max() / max(np.abs(a).max(), 1e-300)
import json, os
last = lambda p: [json.loads(l) for l in open(p + ".jsonl") if l.strip()][-1]
ta = {k: v for k, v in last(sys.argv[1]).items() if k.startswith("test_")}
tb = {k: v for k, v in last(sys.argv[2]).items() if k.startswith("test_")}
same = len(ta) > 0 and ta == tb
if os.path.exists(sys.argv[1] + ".pred"):
    same = same and open(sys.argv[1] + ".pred").read() == open(sys.argv[2] + ".pred").read()
print(f"# max relative weight difference {rel:.3g}, test scores and predictions "
      f"{'identical' if same else 'differ'} {ta}")
sys.exit(0 if a.shape == b.shape and rel <= 1e-9 and same else 1)
PY
}

# flat = multiclass with leaf k as class k (leaves in the task's node order: depth, then id)
$PY - "$WORK" "$IM/ImCLEF07A.hier" <<'PY'
import sys
w, hier = sys.argv[1], sys.argv[2]
par = {}
for line in open(hier):
    p, c = map(int, line.split()); par[c] = p
kids = set(par.values())
def depth(n): return 1 if n not in par else 1 + depth(par[n])
leaves = sorted((n for n in par if n not in kids), key=lambda n: (depth(n), n))
pos = {l: k for k, l in enumerate(leaves)}
for src, dst in (("im.svm", "im_mc.svm"), ("im_test.svm", "im_mc_test.svm")):
    with open(w + "/" + dst, "w") as f:
        for line in open(w + "/" + src):
            lab, rest = line.split(" ", 1)
            leaf = [n for n in map(int, lab.split(",")) if n not in kids]
            f.write(f"{pos[leaf[0]]} {rest}")
open(w + "/leaves", "w").write("\n".join(map(str, leaves)) + "\n")
PY
train flat "$WORK/im.svm" "$IM/ImCLEF07A.hier" "$WORK/im_test.svm" --set task.model=flat \
    --set solver.type=sgd
ok $? "imclef cut: flat trains"
"$STRUX" train "$WORK/h.ini" --quiet --set data.train="$WORK/im_mc.svm" --set data.test= \
    --set task.type=multiclass --set solver.lambda=1e-3 --set solver.epochs=4 --set solver.tol=0 \
    --set solver.seed=3 --set data.bias=1 --set data.n_labels=63 --set output.eval_every=0 \
    --set output.model="$WORK/mc.h5" --set output.metrics="$WORK/mc.jsonl" --set solver.type=sgd \
    >"$WORK/mc.out" 2>"$WORK/mc.err" &&
    "$STRUX" predict --model "$WORK/mc.h5" --data "$WORK/im_mc_test.svm" --out "$WORK/mc.pred" \
        2>>"$WORK/mc.err"
ok $? "the same rows as multiclass train"
cat "$WORK/mc.err" | head -n 5 | diag
$PY - "$WORK" <<'PY'
import sys, json
w = sys.argv[1]
last = lambda p: [json.loads(l) for l in open(p) if l.strip()][-1]
a, b = last(w + "/flat.jsonl"), last(w + "/mc.jsonl")
rel = abs(a["primal"] - b["primal"]) / abs(b["primal"])
leaves = open(w + "/leaves").read().split()
mc = [leaves[int(l)] for l in open(w + "/mc.pred").read().split()]
fl = [max(map(int, l.split(",")), key=lambda n: leaves.index(str(n)) if str(n) in leaves else -1)
      for l in open(w + "/flat.pred").read().split()]
same = [str(x) for x in fl] == mc
print(f"# primal flat {a['primal']!r} multiclass {b['primal']!r} (relative {rel:.3g}); "
      f"predictions {'identical' if same else 'differ'}")
sys.exit(0 if rel <= 1e-9 and same and len(mc) == 100 else 1)
PY
ok $? "flat = multiclass: the same objective (1e-9) and predictions"

# data.n_labels derived from the hierarchy: the cut's nodes stop below the tree's largest id
top_cut=$(cut -d' ' -f1 "$WORK/im.svm" | tr , '\n' | sort -n | tail -n 1)
top_tree=$(awk '{ if ($1 > m) m = $1; if ($2 > m) m = $2 } END { print m }' "$IM/ImCLEF07A.hier")
"$STRUX" predict --model "$WORK/flat.h5" --data "$IM/ImCLEF07A_test.svm.gz" --out "$WORK/full.pred" \
    2>"$WORK/full.err" && [ "$(wc -l <"$WORK/full.pred")" = 1006 ] && [ "$top_cut" -lt "$top_tree" ] &&
    gzip -dc "$IM/ImCLEF07A_test.svm.gz" | cut -d' ' -f1 | tr , '\n' | sort -n | tail -n 1 |
    grep -qx "$top_tree"
ok $? "no data.n_labels: trained on nodes up to $top_cut, the model scores the test file's up to $top_tree"
head -n 3 "$WORK/full.err" | diag

# data.normalize = l2 against rows normalised beforehand
$PY - "$WORK" <<'PY'
import sys, numpy as np
w = sys.argv[1]
for src, dst in (("im.svm", "im_l2.svm"), ("im_test.svm", "im_test_l2.svm")):
    with open(w + "/" + dst, "w") as f:
        for line in open(w + "/" + src):
            lab, *toks = line.split()
            idx = [t.split(":")[0] for t in toks]
            v = np.array([np.float32(t.split(":")[1]) for t in toks], dtype=np.float64)
            ss = np.cumsum(v * v)[-1]
            v = (v * (1 / np.sqrt(ss))).astype(np.float32)
            f.write(lab + " " + " ".join(f"{i}:{float(x)!r}" for i, x in zip(idx, v)) + "\n")
PY
train l2 "$WORK/im.svm" "$IM/ImCLEF07A.hier" "$WORK/im_test.svm" --set task.model=nhsvm \
    --set solver.type=sgd --set data.normalize=l2 --set data.label_names="$IM/ImCLEF07A.labels" &&
    train pre "$WORK/im_l2.svm" "$IM/ImCLEF07A.hier" "$WORK/im_test_l2.svm" --set task.model=nhsvm \
        --set solver.type=sgd
ok $? "nhsvm trains with data.normalize = l2 and on the normalised rows"
out=$(close l2 pre)
ok $? "data.normalize = l2 = rows normalised beforehand: weights, test scores, predictions"
echo "$out" | diag
# predict --format paths: names from the model's data.label_names (the .labels layout), else ids
"$STRUX" predict --model "$WORK/l2.h5" --data "$WORK/im_test.svm" --out "$WORK/l2.paths" \
    --format paths 2>/dev/null &&
    "$STRUX" predict --model "$WORK/pre.h5" --data "$WORK/im_test_l2.svm" --out "$WORK/pre.paths" \
        --format paths 2>/dev/null &&
    $PY - "$WORK" "$IM/ImCLEF07A.labels" <<'PY'
import sys
w, labels = sys.argv[1], sys.argv[2]
path = {l.split()[0]: l.split()[4] for l in open(labels) if l.strip()}
ids = [l.split(",") for l in open(w + "/l2.pred").read().split()]
named = open(w + "/l2.paths").read().split()
plain = open(w + "/pre.paths").read().split()
# single-label: the closure is one root path, ascending ids = top down (ids grow with depth)
ok = len(ids) == len(named) == len(plain) == 100 and all(
    n == path[c[-1]] and p == "/".join(c) for c, n, p in zip(ids, named, plain))
print(f"# first: ids {','.join(ids[0])} -> {named[0]} (names) / {plain[0]} (ids)")
sys.exit(0 if ok else 1)
PY
ok $? "predict --format paths: the .labels path of the predicted leaf, or its ids joined by /"
expect_fail 2 "--format tree: expected ids or paths" "predict --format with another value" -- \
    "$STRUX" predict --model "$WORK/l2.h5" --data "$WORK/im_test.svm" --out "$WORK/x.pred" --format tree

# strux_model.py and data.normalize, on the multilabel task (hierarchy models: hier_consumers.sh)
"$STRUX" train "$WORK/h.ini" --quiet --set data.train="$WORK/im.svm" --set data.test= \
    --set task.type=multilabel --set data.n_labels=97 --set data.normalize=l2 --set solver.epochs=3 \
    --set output.model="$WORK/ml.h5" --set output.metrics= 2>"$WORK/ml.err" &&
    "$STRUX" predict --model "$WORK/ml.h5" --data "$WORK/im_test.svm" --out "$WORK/ml.pred" \
        2>>"$WORK/ml.err" &&
    $PY scripts/strux_model.py predict --model "$WORK/ml.h5" --data "$WORK/im_test.svm" \
        --out "$WORK/ml_py.pred" && cmp -s "$WORK/ml.pred" "$WORK/ml_py.pred"
ok $? "strux_model.py applies the model's data.normalize: predictions byte-identical to strux predict"

# bad input, at -np 2: one message, the exit code, no model
expect_fail 2 "task.hierarchy is not set" "no task.hierarchy" -- \
    $MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --set data.train="$WORK/im.svm" --set task.type=hierarchy \
    --set output.model="$WORK/bad1.h5"
[ ! -e "$WORK/bad1.h5" ]
ok $? "nothing written"
printf '1,11,999 1:1\n1,11,37 1:2\n' >"$WORK/badlab.svm"
expect_fail 3 "badlab.svm:1: label 999 is not a node" "a data label that is not a node" -- \
    $MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --set data.train="$WORK/badlab.svm" --set task.type=hierarchy \
    --set task.hierarchy="$IM/ImCLEF07A.hier" --set output.model="$WORK/bad2.h5"
[ ! -e "$WORK/bad2.h5" ]
ok $? "nothing written"
# ssvm on a DAG is no longer refused: the α update is the convex extension of §4.3, and the log
# says it is one
$MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --set data.train="$WORK/dag.svm" --set task.type=hierarchy \
    --set task.hierarchy="$WORK/dag.hier" --set task.model=ssvm --set task.alpha_every=1 \
    --set solver.epochs=3 --set output.model="$WORK/dag_ssvm.h5" >"$WORK/dag_ssvm.out" 2>&1 &&
    grep -q "convex extension of hierarchical.md §4.3, not in the thesis" "$WORK/dag_ssvm.out" &&
    [ "$(h5dump -a hierarchy "$WORK/dag_ssvm.h5" | grep -c '"dag"')" = 1 ]
ok $? "ssvm on a DAG trains at -np 2 (alpha by the convex extension, labelled as one in the log)"
printf '1,11,37,2 1:1\n1,11,37 1:2\n' >"$WORK/two.svm"
expect_fail 3 "two.svm: example 1 has 2 most specific nodes \((2 and 37|37 and 2)\) under task.labels = single" \
    "two most specific nodes under task.labels = single" -- \
    $MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --set data.train="$WORK/two.svm" --set task.type=hierarchy \
    --set task.hierarchy="$IM/ImCLEF07A.hier" --set task.labels=single --set output.model="$WORK/bad4.h5"
[ ! -e "$WORK/bad4.h5" ]
ok $? "nothing written"
printf '1,11,37 1:1\n1,11 1:2\n' >"$WORK/partial.svm"
expect_fail 3 "partial.svm: example 2: the path to node 11 ends at an internal node \(task.partial_paths = error\)" \
    "a partial path under task.partial_paths = error" -- \
    $MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --set data.train="$WORK/partial.svm" --set task.type=hierarchy \
    --set task.hierarchy="$IM/ImCLEF07A.hier" --set task.partial_paths=error --set output.model="$WORK/bad5.h5"
[ ! -e "$WORK/bad5.h5" ]
ok $? "nothing written"
