# bench/constraints.sh - rate-constrained training (issue 15, dataset_constraints.md §4): the
# tables of the README's "Rate constraints" section. TABLES picks them (default all):
#  prule     a9a under the p%-rule between the sexes (configs/adult_fairness.ini, nothing changed but
#            1/κ ∈ KAPPAS, default 1 1.25 1.5 2 3), -np NP (2), after the unconstrained SVM at the
#            same λ (configs/a9a.ini): multiplier, train and test error and male/female
#            positive-rate ratio, deterministic (sign of the returned model) and randomised
#            (expected rates of the stored mixture), MM steps, inner epochs, wall seconds; checks:
#            randomised train ratio within 2 % of 1/κ, test error within 2.5 points of the SVM's;
#  np        1/κ = 1.25 at -np 1 and -np 2 per MM step (wall, LP share on rank 0, communication
#            share, cuts, inner epochs) and whether both wrote the same model (solver.blocks = 4);
#  rates     a9a with coverage(all) <= 0.10, and separately recall(labeled) >= 0.9: train and test
#            rates, deterministic and randomised; check: randomised train rate within 0.005 of the
#            bound;
#  churn     configs/churn.ini on `strux gen --kind churn` at 8 targets log-spaced from 0.1 to 1
#            times the bias-shifted SVM baseline's churn on D3's train rows (A8): churn on D3 and
#            error on D1 ∪ D2, train and test, deterministic and randomised, against the baseline
#            (the SVM on D1 ∪ D2 at the same λ, its bias raised until its recall on D2's train rows
#            reaches the deployed model's); checks: randomised train churn within 0.005 of the
#            target, recall met on train, and whether the deterministic model beats the baseline
#            on churn and error (the paper's Fig. 3 claim).
# Every a9a and churn run's metrics log is checked for the MM objective never rising between MM
# steps by more than rates.eps (one record per MM step, kept or not): the "max rise" column.
set -u
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
NP=${NP:-2}
KAPPAS=${KAPPAS:-1 1.25 1.5 2 3}
TABLES=${TABLES:-prule np rates churn}
DATA=${STRUX_DATA:-../shared/data}
PY=/usr/bin/python3
mpi() { mpirun --oversubscribe -np "$@"; }
has() { [[ " $TABLES " == *" $1 "* ]]; }
timed() { # timed NAME COMMAND...: run, keep the wall seconds in $WORK/NAME.wall
    local name=$1 t0
    shift
    t0=$(date +%s.%N)
    "$@" || return 1
    echo "$(date +%s.%N) - $t0" | bc >"$WORK/$name.wall"
}
# a9a runs: train, then eval on the training file (the test file's report comes from train)
a9a() { # a9a NAME SETTINGS...
    local name=$1
    shift
    timed "$name" mpi "$NP" "$STRUX" train configs/adult_fairness.ini --quiet "$@" \
        --set output.model="$WORK/$name.h5" --set output.metrics="$WORK/$name.jsonl" \
        >"$WORK/$name.test.json" || exit 1
    "$STRUX" eval --model "$WORK/$name.h5" --data "$DATA/a9a/a9a.svm.gz" >"$WORK/$name.train.json" ||
        exit 1
}
cat >"$WORK/report.py" <<'PY'
import json, math
import numpy as np
def load(path):  # a churn file (binary LIBSVM, unlabeled rows 0) with the bias column, dense
    rows = [l.split() if not l.startswith(" ") else ["0"] + l.split() for l in open(path)]
    X = np.zeros((len(rows), 2977)); X[:, -1] = 1
    y = np.array([{"+1": 1, "-1": -1, "0": 0}[r[0]] for r in rows])
    for i, r in enumerate(rows):
        for t in r[1:]:
            k, v = t.split(":"); X[i, int(k) - 1] = float(v)
    return X, y
def rise(path):  # max rise of any MM step's objective over the last kept step before it
    best, worst, steps, kept = None, -math.inf, 0, 0
    for l in open(path):
        r = json.loads(l)
        if r.get("mm_objective") is None:
            continue
        steps += 1
        if best is not None:
            worst = max(worst, r["mm_objective"] - best)
        if r["mm_kept"]:
            best, kept = r["mm_objective"], kept + 1
    return worst, steps, kept, r
def a9a_rates(j, rand):  # error and male/female ratio from a report
    d, s = j["datasets"], "positive_rate_rand" if rand else "positive_rate"
    p, n = d["positive"], d["negative"]
    err = (n["n"] * n[s] + p["n"] * (1 - p[s])) / (p["n"] + n["n"])
    ratio = d["male"][s] / d["female"][s] if "male" in d else None
    return err, ratio
PY

if has prule; then
    timed svm mpi "$NP" "$STRUX" train configs/a9a.ini --quiet --set output.model="$WORK/svm.h5" \
        --set output.metrics="$WORK/svm.jsonl" >"$WORK/svm.test.json" || exit 1
    "$STRUX" eval --model "$WORK/svm.h5" --data "$DATA/a9a/a9a.svm.gz" >"$WORK/svm.train.json" || exit 1
    for k in $KAPPAS; do
        a9a "k$k" --set "constraints.p_rule=positive_rate(male) <= $k * positive_rate(female)"
    done
    $PY - "$WORK" $KAPPAS <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1]); from report import rise, a9a_rates
w, kappas = sys.argv[1], sys.argv[2:]
print(f"a9a p%-rule, -np {__import__('os').environ.get('NP', '2')}, rates.eps = 1e-3:\n")
print("| 1/κ | multiplier v | train error det / rand | test error det / rand | train ratio det / rand "
      "| test ratio det / rand | MM steps (kept) | inner epochs | wall s | max MM rise | ratio within 2 % | "
      "test error within 2.5 pts |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
tr, te = (json.load(open(f"{w}/svm.{s}.json")) for s in ("train", "test"))
svm_test = te["error_rate"]
print(f"| SVM (no constraint) | – | {tr['error_rate']:.4f} | {svm_test:.4f} | – | – | – | "
      f"{json.loads(open(f'{w}/svm.jsonl').readlines()[-1])['epoch']} | "
      f"{float(open(f'{w}/svm.wall').read()):.1f} | – | – | – |")
bad = 0
for k in kappas:
    tr, te = (json.load(open(f"{w}/k{k}.{s}.json")) for s in ("train", "test"))
    up, steps, kept, last = rise(f"{w}/k{k}.jsonl")
    (e0, r0), (e1, r1) = a9a_rates(tr, False), a9a_rates(tr, True)
    (f0, q0), (f1, q1) = a9a_rates(te, False), a9a_rates(te, True)
    ok_ratio = abs(r1 - float(k)) <= 0.02 * float(k)
    ok_err = f0 - svm_test <= 0.025
    bad += (not ok_ratio) + (not ok_err) + (up > 1e-3)
    print(f"| {k} | {last['p_rule.v']:.5f} | {e0:.4f} / {e1:.4f} | {f0:.4f} / {f1:.4f} | "
          f"{r0:.4f} / {r1:.4f} | {q0:.4f} / {q1:.4f} | {steps} ({kept}) | {int(last['inner_epochs'])} | "
          f"{float(open(f'{w}/k{k}.wall').read()):.1f} | {up:+.1e} | {'yes' if ok_ratio else 'NO'} | "
          f"{'yes' if ok_err else 'NO'} |")
print(f"\n{bad} check(s) failed (ratio, test error, MM rise above rates.eps = 1e-3)")
PY
fi

if has np; then # 1/κ = 1.25 at -np 1 and -np 2, per MM step (the MM log lines; totals cumulative)
    for np in 1 2; do
        timed "p$np" mpi $np "$STRUX" train configs/adult_fairness.ini --set output.progress=never \
            --set data.test= --set output.model="$WORK/p$np.h5" --set output.metrics="$WORK/p$np.jsonl" \
            >/dev/null 2>"$WORK/p$np.log" || exit 1
    done
    echo
    $PY - "$WORK" <<'PY'
import re, sys, h5py, numpy as np
sys.path.insert(0, sys.argv[1]); from report import rise
w = sys.argv[1]
pat = re.compile(r"MM step (\d+) objective (\S+), (\d+) switched, (\d+) cuts, \d+ bias cuts, (\d+) inner "
                 r"epochs, (\S+)s \(lp (\S+)s, comm (\S+)s\)")
print("a9a, 1/κ = 1.25, per MM step:\n")
print("| np | MM step | objective | switched | cuts | inner epochs | step s | LP share | comm share |")
print("|---|---|---|---|---|---|---|---|---|")
for n in (1, 2):
    c0 = e0 = 0
    tot = 0.0
    for m in pat.finditer(open(f"{w}/p{n}.log").read()):
        s, obj, sw, c, e, t, lp, cm = m.groups()
        t = float(t)
        tot += t
        print(f"| {n} | {s} | {float(obj):.6f} | {sw} | {int(c) - c0} | {int(e) - e0} | {t:.1f} | "
              f"{float(lp) / t:.1%} | {float(cm) / t:.1%} |")
        c0, e0 = int(c), int(e)
    print(f"| {n} | all | | | {c0} | {e0} | {tot:.1f} (run {float(open(f'{w}/p{n}.wall').read()):.1f}) | | |")
a = h5py.File(f"{w}/p1.h5", "r")["weights"][:]
b = h5py.File(f"{w}/p2.h5", "r")["weights"][:]
va, vb = (h5py.File(f"{w}/p{n}.h5", "r")["rates/v"][:] for n in (1, 2))
print(f"\nnp 1 and np 2 (solver.blocks = 4): max |w1 - w2| / max |w1| = "
      f"{np.max(np.abs(a - b)) / np.max(np.abs(a)):.3e}, |v1 - v2| / v1 = "
      f"{np.max(np.abs(va - vb)) / max(np.max(np.abs(va)), 1e-300):.3e}; max MM rise "
      f"{max(rise(f'{w}/p{n}.jsonl')[0] for n in (1, 2)):+.1e}")
PY
fi

if has rates; then # coverage and recall on a9a
    a9a cov --set constraints.p_rule= --set "constraints.cov=coverage(all) <= 0.10"
    a9a rec --set constraints.p_rule= --set "constraints.rec=recall(labeled) >= 0.9"
    echo
    $PY - "$WORK" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1]); from report import rise, a9a_rates
w = sys.argv[1]
print(f"a9a under one rate constraint (configs/adult_fairness.ini without the p%-rule), "
      f"-np {__import__('os').environ.get('NP', '2')}:\n")
print("| constraint | train rate det / rand | test rate det / rand | train error det / rand | "
      "test error det / rand | MM steps (kept) | wall s | max MM rise | rand within 0.005 |")
print("|---|---|---|---|---|---|---|---|---|")
for name, key, ds, bound in (("cov", "coverage(all) <= 0.10", "all", 0.10),
                             ("rec", "recall(labeled) >= 0.9", "positive", 0.9)):
    tr, te = (json.load(open(f"{w}/{name}.{s}.json")) for s in ("train", "test"))
    up, steps, kept, last = rise(f"{w}/{name}.jsonl")
    r = [j["datasets"][ds][k] for j in (tr, te) for k in ("positive_rate", "positive_rate_rand")]
    e = [a9a_rates(j, x)[0] for j in (tr, te) for x in (False, True)]
    print(f"| `{key}` | {r[0]:.4f} / {r[1]:.4f} | {r[2]:.4f} / {r[3]:.4f} | {e[0]:.4f} / {e[1]:.4f} | "
          f"{e[2]:.4f} / {e[3]:.4f} | {steps} ({kept}) | {float(open(f'{w}/{name}.wall').read()):.1f} | "
          f"{up:+.1e} | {'yes' if abs(r[1] - bound) <= 0.005 else 'NO'} |")
PY
fi

if has churn; then
    C="$WORK/churn"
    "$STRUX" gen "$C" --kind churn --quiet || exit 1
    # the configs read out/churn/: the same files from the work folder
    sed "s|out/churn/|$C/|g" configs/churn.ini >"$WORK/churn.ini"
    # the baseline: the SVM on D1 ∪ D2 (the unlabeled D3 rows have no loss) at the constrained
    # runs' λ (solver.lambda is over the labeled rows there, over every row here)
    lam=$($PY -c "import sys; n = [sum(1 for l in open(sys.argv[1]) if not l.startswith(' ')), sum(1 for _ in open(sys.argv[1]))]; print(6.730833950326445e-06 * n[0] / n[1])" "$C/train.svm")
    timed svm "$STRUX" train "$WORK/churn.ini" --quiet --set constraints.recall= --set constraints.churn= \
        --set model.bias=regularised --set solver.lambda="$lam" --set solver.blocks=0 \
        --set solver.tol=1e-4 --set solver.epochs=20000 --set output.model="$WORK/csvm.h5" \
        --set output.metrics= --set data.test= >/dev/null || exit 1
    $PY - "$C" "$WORK/csvm.h5" "$WORK" >"$WORK/targets" <<'PY'
import sys, h5py, numpy as np
sys.path.insert(0, sys.argv[3]); from report import load
c, svm = sys.argv[1], sys.argv[2]
X, y = load(f"{c}/train.svm")
wd = h5py.File(f"{c}/deployed.h5", "r")["weights"][:].ravel()
ws = h5py.File(svm, "r")["weights"][:].ravel()
d2 = np.loadtxt(f"{c}/d2_train.txt", dtype=int) - 1
d3 = np.loadtxt(f"{c}/d3_train.txt", dtype=int) - 1
p2 = d2[y[d2] == 1]
need = np.mean(X[p2] @ wd >= 0)  # the deployed model's recall on D2's train rows (A12)
s = X[p2] @ ws
shift = 0.0 if np.mean(s >= 0) >= need else -np.sort(s)[::-1][int(np.ceil(need * len(s))) - 1]
churn = np.mean((X[d3] @ ws + shift >= 0) != (X[d3] @ wd >= 0))
print(shift, churn, " ".join(f"{churn * 10 ** t:.6g}" for t in np.linspace(-1, 0, 8)))
PY
    read -r shift base_churn targets <"$WORK/targets"
    for t in $targets; do
        timed "c$t" "$STRUX" train "$WORK/churn.ini" --quiet \
            --set "constraints.churn=churn(D3, deployed_pos) <= $t" \
            --set output.model="$WORK/c$t.h5" --set output.metrics="$WORK/c$t.jsonl" >/dev/null || exit 1
    done
    echo
    $PY - "$WORK" "$C" "$shift" "$base_churn" $targets <<'PY'
import sys, h5py, numpy as np
sys.path.insert(0, sys.argv[1]); from report import rise, load
w, c, shift, base = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
targets = sys.argv[5:]
split = {s: load(f"{c}/{s}.svm") for s in ("train", "test")}
idx = {(k, s): np.loadtxt(f"{c}/d{k}_{s}.txt", dtype=int) - 1 for k in (1, 2, 3) for s in ("train", "test")}
wd = h5py.File(f"{c}/deployed.h5", "r")["weights"][:].ravel()
def measure(s, prob):  # churn on D3 and error on D1 ∪ D2 of P(positive) = prob(X), and D2 recall
    X, y = split[s]
    p, dep = prob(X), X @ wd >= 0
    d3, d12 = idx[3, s], np.concatenate([idx[1, s], idx[2, s]])
    p2 = idx[2, s][y[idx[2, s]] == 1]
    churn = np.mean(np.where(dep[d3], 1 - p[d3], p[d3]))
    err = np.mean(np.where(y[d12] == 1, 1 - p[d12], p[d12]))
    return churn, err, np.mean(p[p2])
ws = h5py.File(f"{w}/csvm.h5", "r")["weights"][:].ravel()
svm = lambda X: (X @ ws + shift >= 0).astype(float)
b_tr, b_te = measure("train", svm), measure("test", svm)
need = measure("train", lambda X: (X @ wd >= 0).astype(float))[2]
print(f"churn (configs/churn.ini on strux gen --kind churn, seed 1): bias-shifted SVM baseline "
      f"(shift {shift:+.4g}, D2 train recall {b_tr[2]:.4f} >= the deployed model's {need:.4f}): "
      f"churn train {b_tr[0]:.4f} / test {b_te[0]:.4f}, error train {b_tr[1]:.4f} / test {b_te[1]:.4f}\n")
print("| target | train churn det / rand | test churn det / rand | train error det / rand | "
      "test error det / rand | D2 train recall det | MM steps | inner epochs | wall s | max MM rise | "
      "rand within 0.005 | beats baseline (train, test) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
beats = []
for t in targets:
    f = h5py.File(f"{w}/c{t}.h5", "r")
    wm = f["weights"][:].ravel()
    mix, mu = f["rates/mix_weights"][:], f["rates/mix_mu"][:]
    det = lambda X: (X @ wm >= 0).astype(float)
    rnd = lambda X: (np.clip(0.5 + 0.5 * (X @ mix.T), 0, 1) * mu).sum(axis=1)
    dtr, dte, rtr, rte = measure("train", det), measure("test", det), measure("train", rnd), measure("test", rnd)
    up, steps, kept, last = rise(f"{w}/c{t}.jsonl")
    ok = abs(rtr[0] - float(t)) <= 0.005 and dtr[2] >= need - 1e-12
    bt = (dtr[0] < b_tr[0] and dtr[1] < b_tr[1], dte[0] < b_te[0] and dte[1] < b_te[1])
    beats.append(bt)
    print(f"| {float(t):.4f} | {dtr[0]:.4f} / {rtr[0]:.4f} | {dte[0]:.4f} / {rte[0]:.4f} | "
          f"{dtr[1]:.4f} / {rtr[1]:.4f} | {dte[1]:.4f} / {rte[1]:.4f} | {dtr[2]:.4f} | {steps} ({kept}) | "
          f"{int(last['inner_epochs'])} | {float(open(f'{w}/c{t}.wall').read()):.1f} | {up:+.1e} | "
          f"{'yes' if ok else 'NO'} | {'yes' if bt[0] else 'no'}, {'yes' if bt[1] else 'no'} |")
print(f"\nthe deterministic model beats the baseline on churn and error at "
      f"{sum(b[0] for b in beats)} of {len(beats)} targets on train, {sum(b[1] for b in beats)} on test")
PY
fi
