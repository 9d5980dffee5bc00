# tests/e2e/hierarchy.sh - the hierarchy task end to end on small cuts of the shared data (the
# first 400 rows of imclef07a: single-label tree; of funcat_cellcycle: multi-label tree with paths
# that end at internal nodes, so stop leaves) and on a seeded random multi-label DAG:
#   - flat = the multiclass task on the same rows with leaf k as class k (an independent
#     implementation of the Crammer-Singer SVM): the same objective after 4 sgd epochs (1e-9
#     relative) and the same predictions;
#   - -np 1, 2 and 4 train the same weights (1e-9 relative) and predict the same labels: flat,
#     hsvm and nhsvm on both trees with sgd, nhsvm also with sdca at solver.blocks = 4, nhsvm on the DAG
#     (task.lp_start = fresh);
#   - bad input ends every rank with one message and no model: no task.hierarchy, a label that is
#     not a node (file and example named), ssvm on a DAG (a node with two parents named).
. tests/common/tap.sh
IM=$STRUX_DATA/imclef07a
FC=$STRUX_DATA/funcat_cellcycle
gzip -dc "$IM/ImCLEF07A_train.svm.gz" | head -n 400 >"$WORK/im.svm"
gzip -dc "$IM/ImCLEF07A_test.svm.gz" | head -n 200 >"$WORK/im_test.svm"
gzip -dc "$FC/cellcycle_FUN_train.svm.gz" | head -n 400 >"$WORK/fc.svm"
gzip -dc "$FC/cellcycle_FUN_test.svm.gz" | head -n 200 >"$WORK/fc_test.svm"
# a random DAG (ids 0..29, root 0, some second parents) and multi-label rows planted on it
$PY - "$WORK" <<'PY'
import sys, random
w = sys.argv[1]
r = random.Random(14)
par = {0: []}
for i in range(1, 30):
    ps = {r.randrange(max(0, i - 8), i)}
    if i > 3 and r.random() < 0.3: ps.add(r.randrange(0, i))
    par[i] = sorted(ps)
with open(w + "/dag.hier", "w") as f:
    for c in range(1, 30):
        for p in par[c]: f.write(f"{p} {c}\n")
kids = {i: [c for c in par if i in par[c]] for i in par}
leaves = [i for i in par if not kids[i]]
def closure(s):
    out, st = set(), list(s)
    while st:
        n = st.pop()
        if n not in out: out.add(n); st.extend(par[n])
    return out
cent = {l: [r.gauss(0, 1) for _ in range(10)] for l in leaves}
for name, n in (("dag.svm", 300), ("dag_test.svm", 100)):
    with open(w + "/" + name, "w") as f:
        for _ in range(n):
            ls = r.sample(leaves, r.choice([1, 1, 2]))
            x = [sum(cent[l][j] for l in ls) + r.gauss(0, 0.5) for j in range(10)]
            lab = sorted(closure(ls) - {0})
            f.write(",".join(map(str, lab)) + " " + " ".join(f"{j+1}:{v:.4f}" for j, v in enumerate(x)) + "\n")
PY
ok $? "random DAG data written"
printf '[surrogate]\ntype = margin\n' >"$WORK/h.ini"

# data.n_labels: label ids are node ids, and a test file may name nodes the training cut does not
# (the readers take the label count from the training data otherwise)
nlab() { awk '{ if ($1 > m) m = $1; if ($2 > m) m = $2 } END { print m + 1 }' "$1"; }

train() { # train NP NAME TRAIN HIER TEST [--set ...]: model $WORK/NAME.h5, predictions NAME.pred
    local np=$1 name=$2 tr=$3 hier=$4 te=$5
    shift 5
    set -- --set data.n_labels=$(nlab "$hier") "$@"
    $MPIRUN -np $np "$STRUX" train "$WORK/h.ini" --quiet --set data.train="$tr" --set data.test="$te" \
        --set task.type=hierarchy --set task.hierarchy="$hier" --set solver.lambda=1e-3 \
        --set solver.epochs=4 --set solver.tol=0 --set solver.seed=3 --set data.bias=1 \
        --set output.eval_every=0 --set output.model="$WORK/$name.h5" \
        --set output.metrics="$WORK/$name.jsonl" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || return 1
    # the model holds its hierarchy (stop leaves included): predict needs nothing else
    $MPIRUN -np $np "$STRUX" predict --model "$WORK/$name.h5" --data "$te" \
        --out "$WORK/$name.pred" 2>>"$WORK/$name.err"
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
train 1 flat "$WORK/im.svm" "$IM/ImCLEF07A.hier" "$WORK/im_test.svm" --set task.model=flat \
    --set solver.type=sgd
ok $? "imclef cut: flat trains"
$MPIRUN -np 1 "$STRUX" train "$WORK/h.ini" --quiet --set data.train="$WORK/im_mc.svm" --set data.test= \
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
sys.exit(0 if rel <= 1e-9 and same and len(mc) == 200 else 1)
PY
ok $? "flat = multiclass: the same objective (1e-9) and predictions"

# -np 1, 2, 4
for data in im fc; do
    if [ $data = im ]; then H=$IM/ImCLEF07A.hier; else H=$FC/cellcycle_FUN.hier; fi
    for model in flat hsvm nhsvm; do
        solvers="sgd"
        [ $model = nhsvm ] && solvers="sgd sdca" # sdca on one model keeps the test short
        for solver in $solvers; do
            for np in 1 2 4; do
                train $np "${data}_${model}_${solver}_$np" "$WORK/$data.svm" "$H" \
                    "$WORK/${data}_test.svm" --set task.model=$model --set solver.type=$solver \
                    --set solver.blocks=4
                ok $? "$data $model $solver -np $np trains and predicts"
                [ $np = 1 ] || continue
                head -n 3 "$WORK/${data}_${model}_${solver}_$np.err" | diag
            done
            out=$(close "${data}_${model}_${solver}_1" "${data}_${model}_${solver}_2" &&
                close "${data}_${model}_${solver}_1" "${data}_${model}_${solver}_4")
            ok $? "$data $model $solver: -np 1, 2, 4 give the same weights and predictions"
            echo "$out" | diag
        done
    done
done
for np in 1 2 4; do
    train $np "dag_$np" "$WORK/dag.svm" "$WORK/dag.hier" "$WORK/dag_test.svm" \
        --set task.model=nhsvm --set solver.type=sgd --set task.lp_start=fresh
    ok $? "DAG nhsvm -np $np trains and predicts"
done
out=$(close dag_1 dag_2 && close dag_1 dag_4)
ok $? "DAG nhsvm: -np 1, 2, 4 give the same weights and predictions"
echo "$out" | diag
grep -q "test_jaccard" "$WORK/dag_1.jsonl" && grep -q "test_jaccard" "$WORK/fc_nhsvm_sgd_1.jsonl" &&
    grep -q "test_accuracy" "$WORK/im_nhsvm_sgd_1.jsonl"
ok $? "imclef is read as single-label, funcat and the DAG as multi-label"

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
expect_fail 2 "ssvm needs a tree.*but node [0-9]+ of .*dag.hier has two or more parents" \
    "ssvm on a DAG" -- \
    $MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --set data.train="$WORK/dag.svm" --set task.type=hierarchy \
    --set task.hierarchy="$WORK/dag.hier" --set task.model=ssvm --set output.model="$WORK/bad3.h5"
[ ! -e "$WORK/bad3.h5" ]
ok $? "nothing written"
