# tests/e2e/tasks.sh - the multiclass, chain and pairwise tasks end to end on small subsets of
# real data: the converters (run here, so `make check` does not need `make data`), the chain task
# trained on 200 CoNLL-2000 sentences at -np 1, 2 and 4 (weights and transitions agree to 1e-9
# relative, predictions identical, eval of the saved model equals the training run's metrics),
# the conlleval chunk F1 against a span-set reference computed here from the predictions, OCR as
# chain and as multiclass letters, and yeast with the pairwise MRF (exact: -np 1 = -np 2; LP with
# fresh starts: -np 1 = -np 2; LP with warm starts).
. tests/common/tap.sh
C=$WORK/conll
$PY scripts/convert-conll2000 --data "$STRUX_DATA/conll2000" --out "$C" --max-train 200 \
    --max-test 100 2>"$WORK/conv.err"
ok $? "convert-conll2000 on 200 train / 100 test sentences"
[ "$(cut -d' ' -f2 "$C/conll2000_train.svmhmm" | uniq | wc -l)" -eq 200 ] &&
    [ "$(cut -d' ' -f2 "$C/conll2000_test.svmhmm" | uniq | wc -l)" -eq 100 ] &&
    grep -qx '[0-9]* B-NP' "$C/conll2000.tags" && grep -qx '[0-9]* O' "$C/conll2000.tags"
ok $? "one qid per sentence; the tag names file holds B-NP and O"
K=$(wc -l <"$C/conll2000.tags")
cat >"$WORK/chain.ini" <<INI
[data]
train = $C/conll2000_train.svmhmm
test = $C/conll2000_test.svmhmm
label_names = $C/conll2000.tags
n_labels = $K
[task]
type = chain
tags = $C/conll2000.tags
outside = O
[solver]
lambda = 1e-3
epochs = 4
batch = 8
INI
for np in 1 2 4; do
    timeout 300 $MPIRUN -np $np "$STRUX" train "$WORK/chain.ini" --quiet \
        --set output.model="$WORK/c$np.h5" --set output.metrics="$WORK/c$np.jsonl" \
        >"$WORK/c$np.json" 2>"$WORK/c$np.err"
    ok $? "chain trains on the CoNLL subset at -np $np"
    $MPIRUN -np $np "$STRUX" predict --model "$WORK/c$np.h5" --data "$C/conll2000_test.svmhmm" \
        --out "$WORK/cpred$np.txt" 2>>"$WORK/c$np.err"
    ok $? "chain predicts at -np $np"
done
for np in 2 4; do
    $PY - "$WORK/c1.h5" "$WORK/c$np.h5" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for name in ("weights", "extra"):
    x, y = a[name][:], b[name][:]
    rel = np.abs(x - y).max() / np.abs(x).max()
    print(f"# {name}: max relative difference {rel:.3g}")
    if x.shape != y.shape or not rel <= 1e-9:
        sys.exit(1)
PY
    ok $? "chain weights and transitions at -np $np agree with -np 1 to 1e-9 relative"
    cmp -s "$WORK/cpred1.txt" "$WORK/cpred$np.txt"
    ok $? "chain test predictions at -np $np are identical to -np 1"
done
$PY - "$WORK/c1.json" "$WORK/c1.h5" "$K" <<'PY' 2>&1 | diag
import json, sys, h5py
m = json.load(open(sys.argv[1]))
f = h5py.File(sys.argv[2], "r")
K = int(sys.argv[3])
assert f["extra"].shape == (K * K + 2 * K,), f["extra"].shape
assert f["weights"].shape[0] == K and f.attrs["task"] == b"chain"
assert m["n"] == 100 and m["chunk_f1"] > 0.5 and m["token_accuracy"] > 0.7, m
PY
ok ${PIPESTATUS[0]} "the model holds K rows and K^2 + 2K transitions; the subset learns (chunk F1 > 0.5)"
# conlleval's chunk counts as span sets: a chunk starts at B-X, or at I-X after O, a boundary or
# another type, and ends before the next start or O; correct = same span and type in both
$PY - "$C/conll2000_test.svmhmm" "$C/conll2000.tags" "$WORK/cpred1.txt" "$WORK/c1.json" <<'PY' 2>&1 | diag
import json, sys
names = dict(l.split() for l in open(sys.argv[2]))
seqs, last = [], None
for line in open(sys.argv[1]):
    tag, qid = line.split()[:2]
    if qid != last:
        seqs.append([])
        last = qid
    seqs[-1].append(names[str(int(tag) - 1)])
preds = [l.split() for l in open(sys.argv[3])]
assert [len(s) for s in seqs] == [len(p) for p in preds]

def spans(tags):
    out, start, typ = set(), None, None
    for i, t in enumerate(tags + ["O"]):
        p, _, ty = t.partition("-")
        begins = p == "B" or (p == "I" and (start is None or ty != typ))
        if start is not None and (p == "O" or begins):
            out.add((start, i, typ))
            start = None
        if begins:
            start, typ = i, ty
    return out

gold = guess = correct = 0
for s, p in zip(seqs, preds):
    a, b = spans(s), spans(p)
    gold, guess, correct = gold + len(a), guess + len(b), correct + len(a & b)
P, R = correct / guess, correct / gold
F = 2 * P * R / (P + R)
m = json.load(open(sys.argv[4]))
print(f"# reference P {P:.6f} R {R:.6f} F1 {F:.6f}; strux {m['chunk_precision']} {m['chunk_recall']} {m['chunk_f1']}")
assert abs(P - m["chunk_precision"]) < 1e-6 and abs(R - m["chunk_recall"]) < 1e-6
assert abs(F - m["chunk_f1"]) < 1e-6 and m["chunks"] == gold
PY
ok ${PIPESTATUS[0]} "chunk precision, recall and F1 equal the span-set reference"
"$STRUX" eval --model "$WORK/c1.h5" --data "$C/conll2000_test.svmhmm" >"$WORK/ceval.json" 2>/dev/null
cmp -s "$WORK/ceval.json" "$WORK/c1.json"
ok $? "eval of the saved chain model prints the training run's test metrics"

O=$WORK/ocr
$PY scripts/convert-ocr --data "$STRUX_DATA/ocr_taskar" --out "$O" --max-train 150 \
    --max-test 150 2>"$WORK/conv.err"
ok $? "convert-ocr on 150 train / 150 test words"
[ "$(wc -l <"$O/ocr_letters_train.svm")" -eq "$(wc -l <"$O/ocr_train.svmhmm")" ] &&
    [ "$(wc -l <"$O/ocr.tags")" -eq 26 ]
ok $? "the letters file has one line per token; 26 tag names"
common="--set data.dim=128 --set data.n_labels=26 --set solver.epochs=10 --set solver.batch=8"
expect_ok "OCR chain trains" -- "$STRUX" train configs/ocr.ini --quiet $common \
    --set data.train="$O/ocr_train.svmhmm" --set data.test="$O/ocr_test.svmhmm" \
    --set data.label_names="$O/ocr.tags" --set task.tags="$O/ocr.tags" \
    --set output.model="$WORK/ocr.h5" --set output.metrics=
cp "$WORK/out" "$WORK/ocr.json"
expect_ok "OCR letters train as multiclass" -- "$STRUX" train configs/ocr_letters.ini --quiet \
    $common --set data.train="$O/ocr_letters_train.svm" --set data.test="$O/ocr_letters_test.svm" \
    --set data.label_names="$O/ocr.tags" --set output.model="$WORK/letters.h5" \
    --set output.metrics=
$PY - "$WORK/ocr.json" "$WORK/out" <<'PY' 2>&1 | diag
import json, sys
chain, letters = (json.load(open(p)) for p in sys.argv[1:3])
print(f"# letter accuracy: chain {chain['token_accuracy']}, multiclass {letters['accuracy']}")
assert "chunk_f1" not in chain and chain["n_tokens"] == letters["n"]
assert chain["token_accuracy"] > 0.5 and letters["accuracy"] > 0.5
PY
ok ${PIPESTATUS[0]} "OCR: letter accuracy above 0.5 for both, same letters scored, no chunk metrics"

for np in 1 2; do
    timeout 300 $MPIRUN -np $np "$STRUX" train configs/yeast_pairwise.ini --quiet \
        --set solver.type=sgd --set solver.epochs=3 --set output.model="$WORK/p$np.h5" --set output.metrics= \
        >"$WORK/p$np.json" 2>"$WORK/p$np.err"
    ok $? "yeast pairwise (exact) trains at -np $np"
done
$PY - "$WORK/p1.h5" "$WORK/p2.h5" <<'PY' 2>&1 | diag
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
assert a["extra"].shape == (91,) and a.attrs["task"] == b"pairwise"
for name in ("weights", "extra"):
    rel = np.abs(a[name][:] - b[name][:]).max() / np.abs(a[name][:]).max()
    assert rel <= 1e-9, (name, rel)
PY
ok ${PIPESTATUS[0]} "pairwise weights and 91 pair weights at -np 2 agree with -np 1 to 1e-9"
cmp -s "$WORK/p1.json" "$WORK/p2.json"
ok $? "pairwise test metrics at -np 2 equal -np 1"
for np in 1 2; do
    timeout 300 $MPIRUN -np $np "$STRUX" train configs/yeast_pairwise.ini --quiet \
        --set solver.type=sgd --set solver.epochs=2 --set task.inference=lp --set task.lp_start=fresh \
        --set output.model="$WORK/lp$np.h5" --set output.metrics= >"$WORK/lp$np.json" \
        2>"$WORK/lp$np.err"
    ok $? "yeast pairwise (LP relaxation, fresh starts) trains at -np $np"
done
cmp -s "$WORK/lp1.json" "$WORK/lp2.json"
ok $? "LP with fresh starts: test metrics at -np 2 equal -np 1"
timeout 300 $MPIRUN -np 2 "$STRUX" train configs/yeast_pairwise.ini --quiet --set solver.type=sgd --set solver.epochs=2 \
    --set task.inference=lp --set output.model="$WORK/lp.h5" --set output.metrics= \
    >"$WORK/lp.json" 2>"$WORK/lp.err"
ok $? "yeast pairwise (LP relaxation, warm starts) trains at -np 2"
$PY -c "
import json
d = json.load(open('$WORK/lp.json'))
assert d['n'] == 917 and 0 <= d['fractional_predictions'] < 0.5 and d['hamming_loss'] < 0.3, d
print('# LP:', d)" 2>&1 | diag
ok ${PIPESTATUS[0]} "LP prediction reports its fraction of fractional predictions"
