# tests/e2e/sgd_reference.sh - SGD against an independent reference. Margin rescaling with Hamming
# loss on independent labels is one binary hinge SVM per label, so LIBLINEAR's dual CD
# (liblinear-train -s 3, C = 1/(λn), -B 1) gives the exact optimum of the same objective.
# Pegasos after 20 epochs must be within 2% of that optimum and as accurate on the test split.
. tests/common/tap.sh
D=$STRUX_DATA/yeast
$PY tests/common/liblinear_ref.py "$D/yeast_train.svm.gz" 1e-3 "$D/yeast_test.svm.gz" >"$WORK/ref.json"
ok $? "LIBLINEAR reference runs"
"$STRUX" train configs/yeast.ini --quiet --set solver.type=sgd --set output.model="$WORK/y.h5" \
    --set output.metrics="$WORK/y.jsonl" >"$WORK/test.json"
ok $? "strux trains yeast (SGD, margin rescaling)"
$PY - "$WORK/ref.json" "$WORK/y.jsonl" "$WORK/test.json" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))
last = [json.loads(l) for l in open(sys.argv[2])][-1]
test = json.load(open(sys.argv[3]))
print(f"# LIBLINEAR objective {ref['objective']:.6f}  strux {last['primal']:.6f}  "
      f"ratio {last['primal'] / ref['objective']:.4f}")
print(f"# test Hamming loss LIBLINEAR {ref['hamming_loss']:.4f}  strux {test['hamming_loss']:.4f}")
ok = ref['objective'] <= last['primal'] * (1 + 1e-6) and last['primal'] <= 1.02 * ref['objective']
ok = ok and test['hamming_loss'] <= ref['hamming_loss'] + 0.005 and test['hamming_loss'] <= 0.205
sys.exit(0 if ok else 1)
PY
ok $? "SGD objective within 2% of LIBLINEAR's optimum; test Hamming loss <= 0.205 and within 0.005 of LIBLINEAR"
