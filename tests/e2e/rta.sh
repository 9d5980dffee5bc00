# tests/e2e/rta.sh - the rta task (random spanning-tree ensemble, issue 17) end to end on yeast:
#  - sgd and bcfw (margin rescaling, solver.blocks = 4) train it for a few epochs at -np 1 and 2;
#    each epoch's objective agrees to 1e-9 relative between the rank counts, and `strux predict`
#    writes identical test predictions (the trees come from the model file's /rta group);
#  - `strux eval` reports the multi-label metrics plus cert_rate in [0, 1], and with one tree every
#    prediction is certified (cert_rate = 1);
#  - slack rescaling with the angular search (wedge queries) is refused before any data is read,
#    exit 2, naming the missing flag; task.trees and task.kbest outside [1, 1024] likewise;
#  - training data with one label is an input error (exit 3) at -np 1 and 2, nothing written.
. tests/common/tap.sh
D=$STRUX_DATA/yeast
COMMON=(--quiet --set task.type=rta --set task.trees=5 --set task.kbest=4 --set solver.blocks=4
    --set solver.epochs=4 --set output.eval_every=0)

for s in sgd bcfw; do
    for np in 1 2; do
        timeout 300 $MPIRUN -np $np "$STRUX" train configs/yeast.ini "${COMMON[@]}" \
            --set solver.type=$s --set output.model="$WORK/${s}_$np.h5" \
            --set output.metrics="$WORK/${s}_$np.jsonl" >"$WORK/${s}_$np.json" \
            2>"$WORK/${s}_$np.err"
        ok $? "rta with $s trains yeast at -np $np"
        $MPIRUN -np $np "$STRUX" predict --model "$WORK/${s}_$np.h5" \
            --data "$D/yeast_test.svm.gz" --out "$WORK/${s}_pred$np.txt" 2>>"$WORK/${s}_$np.err"
        ok $? "rta $s model predicts at -np $np"
    done
    $PY - "$WORK/${s}_1.jsonl" "$WORK/${s}_2.jsonl" <<'PY'
import json, sys
a, b = ([json.loads(l) for l in open(p)] for p in sys.argv[1:])
ok = len(a) == len(b) == 4
for r, q in zip(a, b):
    rel = abs(r["primal"] - q["primal"]) / abs(r["primal"])
    print(f"# epoch {r['epoch']}: objective {r['primal']:.10g} vs {q['primal']:.10g}, rel {rel:.2e}")
    ok = ok and rel <= 1e-9
sys.exit(0 if ok else 1)
PY
    ok $? "rta $s: every epoch's objective at -np 2 equals -np 1 to 1e-9 relative"
    cmp -s "$WORK/${s}_pred1.txt" "$WORK/${s}_pred2.txt" &&
        [ "$(wc -l <"$WORK/${s}_pred1.txt")" -eq 917 ]
    ok $? "rta $s: the 917 test predictions at -np 2 are identical to -np 1"
done

"$STRUX" eval --model "$WORK/bcfw_1.h5" --data "$D/yeast_test.svm.gz" >"$WORK/eval.json" \
    2>"$WORK/eval.err"
ok $? "strux eval on the rta model"
$PY - "$WORK/eval.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"# {r}")
ok = all(k in r for k in ("hamming_loss", "micro_f1", "n", "cert_rate"))
sys.exit(0 if ok and r["n"] == 917 and 0 <= r["cert_rate"] <= 1 else 1)
PY
ok $? "eval: multi-label metrics and cert_rate in [0, 1] over 917 examples"

"$STRUX" train configs/yeast.ini "${COMMON[@]}" --set task.trees=1 --set solver.epochs=1 \
    --set output.model="$WORK/one.h5" --set output.metrics="$WORK/one.jsonl" >"$WORK/one.json" \
    2>"$WORK/one.err"
ok $? "rta with one tree trains"
"$STRUX" eval --model "$WORK/one.h5" --data "$D/yeast_test.svm.gz" | grep -q '"cert_rate": 1.000000'
ok $? "one tree: every prediction is certified (cert_rate 1)"

expect_fail 2 "asks wedge queries \(flag wedge\), which this task does not answer" \
    "slack rescaling with the angular search is refused for rta, before data is read" -- \
    "$STRUX" train configs/yeast_slack.ini --set task.type=rta \
    --set data.train="$WORK/missing.svm" --set output.model="$WORK/slack.h5" \
    --set output.metrics="$WORK/slack.jsonl"
[ ! -e "$WORK/slack.h5" ] && [ ! -e "$WORK/slack.jsonl" ]
ok $? "the refused run wrote no model and no metrics"
for kv in task.trees=0 task.trees=1025 task.kbest=0 task.kbest=1025; do
    expect_fail 2 "${kv%%=*}" "$kv is a config error before data is read" -- \
        "$STRUX" train configs/yeast.ini --set task.type=rta --set "$kv" \
        --set data.train="$WORK/missing.svm" --set output.model="$WORK/bad.h5" \
        --set output.metrics="$WORK/bad.jsonl"
done
printf '0 1:0.5 2:1\n0 1:1\n' >"$WORK/one_label.svm"
for np in 1 2; do
    expect_fail 3 "one_label.svm: 1 label\(s\): the rta task needs at least 2 labels" \
        "training data with one label is an input error at -np $np, nothing written" -- \
        $MPIRUN -np $np "$STRUX" train configs/yeast.ini --quiet --set task.type=rta \
        --set data.train="$WORK/one_label.svm" --set data.test= \
        --set output.model="$WORK/one_label.h5" --set output.metrics="$WORK/one_label.jsonl"
    [ ! -e "$WORK/one_label.h5" ] && [ ! -e "$WORK/one_label.jsonl" ]
    ok $? "one label at -np $np: no model and no metrics written"
done
