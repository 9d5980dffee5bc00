# tests/e2e/binary.sh - the binary task (issue 15): LIBSVM binary labels (+1/1, -1/0, a line
# starting with a space unlabeled); the unconstrained linear SVM (SDCA, one exact coordinate step
# per example) against LIBLINEAR -s 3 -B 1 at C = 1/(λn) on a9a: objective to 1e-4 relative, test
# predictions identical wherever LIBLINEAR's (stopped at its iteration cap) are certified, at most
# 0.1% differ; `strux eval` metrics (error rate, precision, recall, F1, positive rate) recomputed
# from the predictions; unlabeled rows count in the positive rate only; a bad label is file:line.
. tests/common/tap.sh
A=$STRUX_DATA/a9a
LAMBDA=3.0711587481957e-05 # 1/n: LIBLINEAR's C = 1

$PY tests/common/liblinear_binary_ref.py "$A/a9a.svm.gz" $LAMBDA "$A/a9a.t.svm.gz" \
    "$WORK/ll.txt" >"$WORK/ll.json"
ok $? "LIBLINEAR reference on a9a"
"$STRUX" train configs/a9a.ini --quiet --set solver.lambda=$LAMBDA --set solver.tol=1e-5 \
    --set solver.blocks=0 --set output.eval_every=0 --set output.model="$WORK/a9a.h5" \
    --set output.metrics="$WORK/a9a.jsonl" >"$WORK/a9a.json" 2>"$WORK/err"
ok $? "sdca trains the binary SVM on a9a to gap 1e-5"
"$STRUX" predict --model "$WORK/a9a.h5" --data "$A/a9a.t.svm.gz" --out "$WORK/pred.txt" 2>/dev/null
$PY - "$WORK/ll.json" "$WORK/a9a.jsonl" "$WORK/ll.txt" "$WORK/pred.txt" "$A/a9a.t.svm.gz" \
    $LAMBDA <<'PY'
import json, sys
import numpy as np
sys.path.insert(0, "tests/common")
from liblinear_binary_ref import read
ref = json.load(open(sys.argv[1]))
last = [json.loads(l) for l in open(sys.argv[2])][-1]
rel = abs(last["primal"] - ref["objective"]) / ref["objective"]
print(f"# objective LIBLINEAR {ref['objective']:.9f} sdca {last['primal']:.9f} "
      f"(relative difference {rel:.2e}; sdca dual {last['dual']:.9f})")
ours = [l.strip() for l in open(sys.argv[4])]
theirs = [l.strip() for l in open(sys.argv[3])]
scores = np.loadtxt(sys.argv[3] + ".scores")
_, rows = read(sys.argv[5])
xnorm = [np.sqrt(1 + sum(v * v for _, v in f)) for f in rows]
# LIBLINEAR's w lies within r = sqrt(2 (J_ll - D) / λ) of the optimum (D = sdca's dual ≤ J*):
# its sign is certified where |w·x| > r·||x||
r = np.sqrt(2 * max(ref["objective"] - last["dual"], 0) / float(sys.argv[6]))
differ = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
bad = [i for i in differ if abs(scores[i]) > r * xnorm[i]]
print(f"# {len(differ)} of {len(ours)} test predictions differ; LIBLINEAR |scores| there "
      f"{[round(abs(scores[i]), 5) for i in differ]}; uncertified below {r:.3g}·||x||; "
      f"certified disagreements {len(bad)}")
ok = rel <= 1e-4 and len(ours) == len(theirs) and not bad and len(differ) <= 1e-3 * len(ours)
sys.exit(0 if ok else 1)
PY
ok $? "a9a: sdca objective within 1e-4 of LIBLINEAR's; test predictions agree wherever LIBLINEAR's are certified (at most 0.1% differ)"

# eval metrics against the predictions, on a file with 0/1 labels and unlabeled rows
zcat "$A/a9a.t.svm.gz" | head -n 400 | awk 'NR % 7 == 0 { sub(/^[^ ]+/, ""); print; next }
    NR % 5 == 0 { sub(/^\+1/, "1"); sub(/^-1/, "0") } { print }' >"$WORK/mixed.svm"
"$STRUX" eval --model "$WORK/a9a.h5" --data "$WORK/mixed.svm" >"$WORK/eval.json" 2>"$WORK/err" &&
    "$STRUX" predict --model "$WORK/a9a.h5" --data "$WORK/mixed.svm" --out "$WORK/mp.txt" 2>/dev/null
ok $? "eval and predict read +1/-1, 1/0 and unlabeled rows"
$PY - "$WORK/eval.json" "$WORK/mp.txt" "$WORK/mixed.svm" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))
pred = [1 if l.strip() == "+1" else -1 for l in open(sys.argv[2])]
truth = []
for l in open(sys.argv[3]):
    t = l.split()[0] if not l[0].isspace() else None
    truth.append(None if t is None else (1 if t in ("+1", "1") else -1))
lab = [(p, t) for p, t in zip(pred, truth) if t is not None]
tp = sum(p == 1 and t == 1 for p, t in lab)
fp = sum(p == 1 and t == -1 for p, t in lab)
fn = sum(p == -1 and t == 1 for p, t in lab)
want = {"error_rate": (fp + fn) / len(lab), "precision": tp / (tp + fp), "recall": tp / (tp + fn),
        "f1": 2 * tp / (2 * tp + fp + fn), "positive_rate": pred.count(1) / len(pred),
        "n": len(pred), "n_labeled": len(lab)}
print(f"# eval {ev}\n# want {want}")
sys.exit(0 if all(abs(ev[k] - v) <= 5e-7 for k, v in want.items()) and len(lab) < len(pred) else 1)
PY
ok $? "eval: error rate, precision, recall, F1 over labeled rows, positive rate over all rows"

printf -- '+1 1:1\n-1 2:1\n2 1:1\n' >"$WORK/bad.svm"
expect_fail 3 "bad.svm:3: label '2' is not a binary label" "a label other than +1/1/-1/0 is refused with file:line" -- \
    "$STRUX" train configs/a9a.ini --quiet --set data.train="$WORK/bad.svm" --set data.test= \
    --set data.dim=0 --set solver.blocks=0 --set output.model="$WORK/bad.h5" --set output.metrics=
[ ! -e "$WORK/bad.h5" ]
ok $? "nothing written after a bad label"
exit $((TAP_FAILED > 0))
