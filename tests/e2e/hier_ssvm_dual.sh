# tests/e2e/hier_ssvm_dual.sh - task.model = ssvm with a dual solver and solver.tol > 0 under the
# default α schedule (solvers/alpha.c): α is updated after each solve that reaches solver.tol and,
# mid-solve, after task.alpha_every (default 5) epochs without one; the run ends only after a
# converged solve whose update moves no α by more than task.alpha_tol (default 1e-4). On a seeded
# planted tree (31 nodes, depth 4, 600 rows), sdca with solver.tol = 1e-3, solver.lambda = 0.1,
# solver.blocks = 4 and every task.* key at its default, at -np 1, 2 and 4 (about 220 epochs):
#   - the first update comes at epoch 5 (task.alpha_every), mid-solve: that epoch's gap is above
#     solver.tol (before this schedule the run waited for a converged solve);
#   - the run ends by itself well before solver.epochs = 400 (the log says alpha settled, no "not
#     converged" warning), with at least 2 α updates (alpha_change rows in the metrics log), and
#     the final certificate's gap is within solver.tol of its primal;
#   - the last update moved α by at most task.alpha_tol, and every leaf path of /hierarchy/alpha
#     sums to 1 (Algorithm 5);
#   - np 2 and 4 end at np 1's epoch with its α (1e-9 absolute) and final primal (1e-9 relative):
#     the blocks, not the ranks, fix the arithmetic.
. tests/common/tap.sh
$PY - "$WORK" <<'PY'
import sys, random
w = sys.argv[1]
r = random.Random(7)
M, D = 31, 10                     # node k > 0 under (k - 1) // 2; leaves 15..30
with open(w + "/t.hier", "w") as f:
    for k in range(1, M): f.write(f"{(k - 1) // 2} {k}\n")
W = [[r.gauss(0, 1) for _ in range(D)] for _ in range(M)]
with open(w + "/t.svm", "w") as f:
    for i in range(600):
        x = [r.gauss(0, 1) for _ in range(D)]
        s = [0.0] * M
        for n in range(M):
            s[n] = (s[(n - 1) // 2] if n else 0) + sum(a * b for a, b in zip(W[n], x))
        best = max(range(15, M), key=lambda n: s[n])
        if r.random() < 0.1: best = r.randrange(15, M)          # label noise
        path, n = [], best
        while n: path.append(n); n = (n - 1) // 2
        f.write(",".join(map(str, sorted(path))) + " " +
                " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(x)) + "\n")
PY
printf '[surrogate]\ntype = margin\n' >"$WORK/h.ini"
for np in 1 2 4; do
    timeout 120 $MPIRUN -np $np "$STRUX" train "$WORK/h.ini" --set task.type=hierarchy \
        --set task.model=ssvm --set task.hierarchy="$WORK/t.hier" --set data.train="$WORK/t.svm" \
        --set data.bias=1 --set solver.type=sdca --set solver.tol=1e-3 --set solver.blocks=4 \
        --set solver.lambda=1e-1 --set solver.epochs=400 --set output.eval_every=0 \
        --set output.model="$WORK/m$np.h5" --set output.metrics="$WORK/m$np.jsonl" \
        >"$WORK/o$np" 2>"$WORK/e$np"
    ok $? "sdca ssvm at -np $np with solver.tol = 1e-3 and the default alpha schedule trains"
    grep -q "ssvm alpha settled after epoch" "$WORK/e$np" && ! grep -q "not converged" "$WORK/e$np"
    ok $? "-np $np: the run ends on its own (alpha settled after a converged solve, no 'not converged' warning)"
done
grep -E "alpha (update|settled)" "$WORK/e1" | sed -n '1,3p;$p' | diag
$PY - "$WORK" <<'PY'
import sys, json
sys.path.insert(0, "tests/common")
from hier_fixture import alpha_path_sums
w = sys.argv[1]
ok = True
for np_ in (1, 2, 4):
    rows = [json.loads(l) for l in open(f"{w}/m{np_}.jsonl") if l.strip()]
    upd = [r["alpha_change"] for r in rows if r["alpha_change"] is not None]
    sums = alpha_path_sums(f"{w}/m{np_}.h5")
    last = rows[-1]
    print(f"# np {np_}: {last['epoch']} epochs, {len(upd) + 1} alpha updates (the last after the "
          f"final converged epoch), primal {last['primal']:.12g}, gap/primal "
          f"{last['gap'] / last['primal']:.3g}, leaf path sums in [{min(sums):.12f}, {max(sums):.12f}]")
    first = next(r for r in rows if r["alpha_change"] is not None)
    print(f"# np {np_}: first update after epoch {first['epoch']}, gap/primal then "
          f"{first['gap'] / first['primal']:.3g}")
    ok &= first["epoch"] == 5 and first["gap"] > 1e-3 * first["primal"]
    ok &= len(upd) >= 1 and last["epoch"] < 400 and last["gap"] <= 1e-3 * last["primal"]
    ok &= max(abs(s - 1) for s in sums) <= 1e-9
sys.exit(0 if ok else 1)
PY
ok $? "at every np: first update mid-solve at epoch 5, at least 2 updates, converged before solver.epochs, leaf paths of alpha sum to 1"
$PY - "$WORK" <<'PY'
import sys, h5py, numpy as np
w = sys.argv[1]
def get(n):
    f = h5py.File(f"{w}/m{n}.h5", "r")
    last = open(f"{w}/m{n}.jsonl").read().strip().split("\n")[-1]
    import json
    r = json.loads(last)
    return r["epoch"], r["primal"], f["hierarchy/alpha"][:]
e1, p1, a1 = get(1)
ok = True
for n in (2, 4):
    e, p, a = get(n)
    da, dp = float(np.abs(a - a1).max()), abs(p - p1) / abs(p1)
    print(f"# np {n} vs 1: epochs {e} / {e1}, max |alpha diff| {da:.3g}, primal rel diff {dp:.3g}")
    ok &= e == e1 and da <= 1e-9 and dp <= 1e-9
sys.exit(0 if ok else 1)
PY
ok $? "np 2 and 4 end at np 1's epoch with its alpha (1e-9) and primal (1e-9 relative)"
