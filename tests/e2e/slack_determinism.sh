# tests/e2e/slack_determinism.sh - slack-rescaling SGD on yeast (angular search with its label
# cache and warm start) and ProbLoss (convex-hull search with warm-started hull vertices and the
# ban-list integral recovery) at -np 1, 2 and 4: the models agree to 1e-9 relative
# (max |a − b| / max |a|), since every example's search state lives on its owning rank and sees the
# same iterates. (Fractional hull answers mix two labels with arbitrary weights, so the summed
# subgradient then depends on the summation order at the last bit, and Pegasos' first large steps
# amplify that: fractional runs are reproducible per rank count, not across rank counts.)
. tests/common/tap.sh
for name in slack probloss; do
    for np in 1 2 4; do
        timeout 300 $MPIRUN -np $np "$STRUX" train configs/yeast_slack.ini --quiet \
            --set surrogate.type=$name --set surrogate.search=auto --set surrogate.integral=true \
            --set solver.type=sgd --set solver.epochs=5 \
            --set output.model="$WORK/$name$np.h5" --set output.metrics="$WORK/$name$np.jsonl" \
            >"$WORK/$name$np.json" 2>"$WORK/err$np"
        ok $? "$name trains at -np $np"
    done
    for np in 2 4; do
        $PY - "$WORK/${name}1.h5" "$WORK/$name$np.h5" <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["weights"][:]
b = h5py.File(sys.argv[2], "r")["weights"][:]
rel = np.abs(a - b).max() / np.abs(a).max()
print(f"# max relative weight difference {rel:.3g}")
sys.exit(0 if a.shape == b.shape and rel <= 1e-9 else 1)
PY
        ok $? "$name: weights at -np $np agree with -np 1 to 1e-9 relative"
        diff <(cut -d, -f1-3 "$WORK/${name}1.jsonl") <(cut -d, -f1-3 "$WORK/$name$np.jsonl") >/dev/null
        ok $? "$name: epoch objectives at -np $np match -np 1"
    done
done
$PY - "$WORK/slack1.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
names = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in f.attrs.items()}
print("# " + ", ".join(f"{k}={names[k]}" for k in sorted(names) if k in ("surrogate", "search")))
sys.exit(0 if names.get("surrogate") == "slack" and names.get("search") == "angular" else 1)
PY
ok $? "the model records surrogate slack answered by angular search"
