# tests/e2e/rta_consumers.sh - scripts/strux_model.py predicts rta models (issue 17) byte for byte
# as `strux predict`: its own K-best DP, ensemble argmax, early stop, certificate and enumeration
# (numpy; src/tasks/rta*.c not used) on the stored /rta trees. Cases: emotions (L = 6, n = 10,
# K = 4: 2^L ≤ n·K, so uncertified answers are enumerated), yeast with float weights and K = 1
# (L = 14: mostly uncertified, the best list candidate), yeast with n = 3, K = 16 (early stops),
# each after 3 epochs of the rta solver.
. tests/common/tap.sh
for case in emotions:10:4:double yeast:5:1:float yeast:3:16:double; do
    IFS=: read -r ds n K prec <<<"$case"
    name="${ds}_${n}_$K"
    "$STRUX" train configs/yeast.ini --quiet --set data.train="$STRUX_DATA/$ds/${ds}_train.svm.gz" \
        --set data.test= --set data.label_names= --set task.type=rta --set task.trees=$n \
        --set task.kbest=$K --set solver.type=rta --set solver.epochs=3 --set output.eval_every=0 \
        --set output.precision=$prec --set output.model="$WORK/$name.h5" \
        --set output.metrics="$WORK/$name.jsonl" >/dev/null 2>&1
    ok $? "$name ($prec): the rta solver trains 3 epochs"
    "$STRUX" predict --model "$WORK/$name.h5" --data "$STRUX_DATA/$ds/${ds}_test.svm.gz" \
        --out "$WORK/$name.c.txt" 2>/dev/null
    $PY scripts/strux_model.py predict --model "$WORK/$name.h5" \
        --data "$STRUX_DATA/$ds/${ds}_test.svm.gz" --out "$WORK/$name.py.txt"
    cmp -s "$WORK/$name.c.txt" "$WORK/$name.py.txt" && [ -s "$WORK/$name.c.txt" ]
    ok $? "$name: strux_model.py writes the bytes of strux predict ($(wc -l <"$WORK/$name.c.txt") lines, cert_rate $("$STRUX" eval --model "$WORK/$name.h5" --data "$STRUX_DATA/$ds/${ds}_test.svm.gz" 2>/dev/null | grep -o '"cert_rate": [0-9.]*' | cut -d' ' -f2))"
done
# a model whose trees were tampered with predicts differently: the script reads /rta, not a draw
cp "$WORK/yeast_3_16.h5" "$WORK/moved.h5"
$PY - "$WORK/moved.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    w = f["weights"][:]
    f["weights"][...] = w[::-1]  # rows of other edges and labellings
PY
$PY scripts/strux_model.py predict --model "$WORK/moved.h5" \
    --data "$STRUX_DATA/yeast/yeast_test.svm.gz" --out "$WORK/moved.py.txt"
"$STRUX" predict --model "$WORK/moved.h5" --data "$STRUX_DATA/yeast/yeast_test.svm.gz" \
    --out "$WORK/moved.c.txt" 2>/dev/null
cmp -s "$WORK/moved.c.txt" "$WORK/moved.py.txt" && ! cmp -s "$WORK/moved.c.txt" "$WORK/yeast_3_16.c.txt"
ok $? "reversed weight rows: other predictions, still byte-identical between the two"
exit $TAP_FAILED
