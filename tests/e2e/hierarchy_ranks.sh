# tests/e2e/hierarchy_ranks.sh - the hierarchy task gives the same answer at -np 1, 2 and 4 (split
# out of hierarchy.sh to keep each file well under a minute on a loaded machine), on small cuts of
# the shared data (the first 200 rows of imclef07a: single-label tree; of funcat_cellcycle:
# multi-label tree with paths that end at internal nodes, so stop leaves) and on a seeded random
# multi-label DAG:
#   - all four models (flat, hsvm, nhsvm, ssvm with an α update after each epoch) with sgd on both
#     trees, nhsvm with sdca at solver.blocks = 4 on the multi-label one, and nhsvm on the DAG
#     (the LP started at the incumbent, task.lp_start = warm: answers do not depend on earlier
#     calls) at -np 1, 2 and 4: the same weights and objective (1e-9 relative) and the same
#     test_* scores at every rank count (2 epochs: every example's oracle and update runs twice);
#   - every model alone predicts (it holds its hierarchy, stop leaves included) at -np 1 and 4,
#     the same labels. data.n_labels is never set: task hierarchy takes it from the hierarchy.
# (ssvm's α bit for bit on every rank after every update: tests/mpi/hier_ssvm.sh.)
. tests/common/tap.sh
IM=$STRUX_DATA/imclef07a
FC=$STRUX_DATA/funcat_cellcycle
gzip -dc "$IM/ImCLEF07A_train.svm.gz" | head -n 200 >"$WORK/im.svm"
gzip -dc "$IM/ImCLEF07A_test.svm.gz" | head -n 100 >"$WORK/im_test.svm"
gzip -dc "$FC/cellcycle_FUN_train.svm.gz" | head -n 200 >"$WORK/fc.svm"
gzip -dc "$FC/cellcycle_FUN_test.svm.gz" | head -n 100 >"$WORK/fc_test.svm"
# a random DAG (ids 0..29, root 0, some second parents) and multi-label rows planted on it
$PY tests/common/hier_fixture.py dag "$WORK" 14 30 8 0.3 10 0.5 dag.svm:150:1/1/2 dag_test.svm:60:1/1/2
ok $? "random DAG data written"
printf '[surrogate]\ntype = margin\n' >"$WORK/h.ini"

train() { # train NP NAME TRAIN HIER TEST [--set ...]: model $WORK/NAME.h5 (predictions NAME.pred
    local np=$1 name=$2 tr=$3 hier=$4 te=$5 # at -np 1 and 4)
    shift 5
    local run="$MPIRUN -np $np"
    [ $np = 1 ] && run= # one rank: no launcher (the same code, a singleton communicator)
    $run "$STRUX" train "$WORK/h.ini" --quiet --set data.train="$tr" --set data.test="$te" \
        --set task.type=hierarchy --set task.hierarchy="$hier" --set solver.lambda=1e-3 \
        --set solver.epochs=2 --set solver.tol=0 --set solver.seed=3 --set data.bias=1 \
        --set output.eval_every=0 --set output.model="$WORK/$name.h5" \
        --set output.metrics="$WORK/$name.jsonl" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || return 1
    [ $np = 2 ] && return 0
    $run "$STRUX" predict --model "$WORK/$name.h5" --data "$te" \
        --out "$WORK/$name.pred" 2>>"$WORK/$name.err"
}

close() { # close A B: weights and final objective of A and B equal to 1e-9 relative, test
    $PY - "$WORK/$1" "$WORK/$2" <<'PY' # scores identical, predictions identical where both were written
import sys, h5py, numpy as np, json, os
a = h5py.File(sys.argv[1] + ".h5", "r")["weights"][:]
b = h5py.File(sys.argv[2] + ".h5", "r")["weights"][:]
rel = np.abs(a - b).max() / max(np.abs(a).max(), 1e-300)
last = lambda p: [json.loads(l) for l in open(p + ".jsonl") if l.strip()][-1]
ta = {k: v for k, v in last(sys.argv[1]).items() if k.startswith("test_")}
tb = {k: v for k, v in last(sys.argv[2]).items() if k.startswith("test_")}
ja, jb = last(sys.argv[1])["primal"], last(sys.argv[2])["primal"]
same = len(ta) > 0 and ta == tb and abs(ja - jb) <= 1e-9 * abs(ja)
pa, pb = sys.argv[1] + ".pred", sys.argv[2] + ".pred"
if os.path.exists(pb):
    same = same and open(pa).read() == open(pb).read() and len(open(pa).read().split()) > 0
print(f"# max relative weight difference {rel:.3g}, objective {ja:.12g} / {jb:.12g}, test scores "
      f"{'and predictions ' if os.path.exists(pb) else ''}{'identical' if same else 'differ'} {ta}")
sys.exit(0 if a.shape == b.shape and rel <= 1e-9 and same else 1)
PY
}

for data in im fc; do
    if [ $data = im ]; then H=$IM/ImCLEF07A.hier; else H=$FC/cellcycle_FUN.hier; fi
    runs="nhsvm:sgd:1,2,4 flat:sgd:1,2,4 hsvm:sgd:1,2,4 ssvm:sgd:1,2,4"
    [ $data = fc ] && runs="$runs nhsvm:sdca:1,2,4" # sdca on one model keeps the test short
    for run in $runs; do
        IFS=: read -r model solver nps <<<"$run"
        name=${data}_${model}_${solver}
        for np in ${nps//,/ }; do
            train $np "${name}_$np" "$WORK/$data.svm" "$H" "$WORK/${data}_test.svm" \
                --set task.model=$model --set solver.type=$solver --set solver.blocks=4 \
                --set task.alpha_every=1 --set task.alpha_tol=0 ||
                { ok 1 "$data $model $solver -np $np trains and predicts"; head -n 5 "$WORK/${name}_$np.err" | diag; }
        done
        out=$(for np in ${nps//,/ }; do [ $np = 1 ] || close ${name}_1 ${name}_$np || exit 1; done)
        ok $? "$data $model $solver: -np ${nps//,/, } give the same weights, objective, scores and predictions"
        echo "$out" | diag
    done
done
for np in 1 2 4; do
    train $np "dag_$np" "$WORK/dag.svm" "$WORK/dag.hier" "$WORK/dag_test.svm" \
        --set task.model=nhsvm --set solver.type=sgd ||
        { ok 1 "DAG nhsvm -np $np trains and predicts"; head -n 5 "$WORK/dag_$np.err" | diag; }
done
out=$(close dag_1 dag_2 && close dag_1 dag_4)
ok $? "DAG nhsvm (LP from the incumbent): -np 1, 2, 4 give the same weights, objective, scores and predictions"
echo "$out" | diag
grep -q "test_jaccard" "$WORK/dag_1.jsonl" && grep -q "test_jaccard" "$WORK/fc_nhsvm_sgd_1.jsonl" &&
    grep -q "test_accuracy" "$WORK/im_nhsvm_sgd_1.jsonl"
ok $? "imclef is read as single-label, funcat and the DAG as multi-label"
