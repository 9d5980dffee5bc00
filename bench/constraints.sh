# bench/constraints.sh - a9a (Adult) under the p%-rule between the sexes (issue 15,
# dataset_constraints.md §4.1): configs/adult_fairness.ini at 1/κ ∈ {1, 1.25, 1.5, 2, 3}
# (positive_rate(male) <= (1/κ)·positive_rate(female), nothing else changed), -np 2, after the
# unconstrained SVM at the same λ (configs/a9a.ini). Table 1: multiplier, train and test error
# and male/female positive-rate ratio, deterministic (sign of the returned model) and randomised
# (expected rates of the stored mixture, each iterate positive with probability σ(f)), MM steps,
# wall seconds. Table 2: the 1/κ = 1.25 run at -np 1 and -np 2 per MM step (wall, LP share on rank
# 0, communication share, cuts, inner SDCA epochs) and whether np 1 and np 2 wrote the same model
# (solver.blocks = 4). KAPPAS="1.25 2" limits the grid; NP sets the ranks of table 1 (at
# solver.blocks = 4 every rank count gives the same models); TABLE2=0 skips table 2.
set -u
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
NP=${NP:-2}
KAPPAS=${KAPPAS:-1 1.25 1.5 2 3}
DATA=${STRUX_DATA:-../shared/data}
mpi() { mpirun --oversubscribe -np "$@"; }
t0=$(date +%s.%N)
mpi "$NP" "$STRUX" train configs/a9a.ini --quiet --set output.model="$WORK/svm.h5" \
    --set output.metrics="$WORK/svm.jsonl" >"$WORK/svm.test.json" || exit 1
echo "$(date +%s.%N) - $t0" | bc >"$WORK/svm.wall"
"$STRUX" eval --model "$WORK/svm.h5" --data "$DATA/a9a/a9a.svm.gz" >"$WORK/svm.train.json" || exit 1
for k in $KAPPAS; do
    t0=$(date +%s.%N)
    mpi "$NP" "$STRUX" train configs/adult_fairness.ini --quiet \
        --set "constraints.p_rule=positive_rate(male) <= $k * positive_rate(female)" \
        --set output.model="$WORK/k$k.h5" --set output.metrics="$WORK/k$k.jsonl" \
        >"$WORK/k$k.test.json" || exit 1
    echo "$(date +%s.%N) - $t0" | bc >"$WORK/k$k.wall"
    "$STRUX" eval --model "$WORK/k$k.h5" --data "$DATA/a9a/a9a.svm.gz" >"$WORK/k$k.train.json" ||
        exit 1
done
/usr/bin/python3 - "$WORK" $KAPPAS <<'PY'
import json, sys
w, kappas = sys.argv[1], sys.argv[2:]
def rates(j, rand):
    d = j["datasets"]
    s = "positive_rate_rand" if rand else "positive_rate"
    p, n = d["positive"], d["negative"]
    err = (n["n"] * n[s] + p["n"] * (1 - p[s])) / (p["n"] + n["n"])
    return err, d["male"][s] / d["female"][s]
def svm(j):  # the unconstrained model: no /rates, rates from its predictions' JSON
    return j["error_rate"], None
print("| 1/κ | multiplier v | train error det / rand | test error det / rand | "
      "train ratio det / rand | test ratio det / rand | MM steps | wall s |")
print("|---|---|---|---|---|---|---|---|")
tr, te = (json.load(open(f"{w}/svm.{s}.json")) for s in ("train", "test"))
print(f"| SVM (no constraint) | – | {tr['error_rate']:.4f} | {te['error_rate']:.4f} | – | – | – | "
      f"{float(open(f'{w}/svm.wall').read()):.1f} |")
for k in kappas:
    tr, te = (json.load(open(f"{w}/k{k}.{s}.json")) for s in ("train", "test"))
    rows = [json.loads(l) for l in open(f"{w}/k{k}.jsonl")]
    last = rows[-1]
    (e0, r0), (e1, r1) = rates(tr, False), rates(tr, True)
    (f0, q0), (f1, q1) = rates(te, False), rates(te, True)
    print(f"| {k} | {last['p_rule.v']:.5f} | {e0:.4f} / {e1:.4f} | {f0:.4f} / {f1:.4f} | "
          f"{r0:.4f} / {r1:.4f} | {q0:.4f} / {q1:.4f} | {int(last['mm_step'])} | "
          f"{float(open(f'{w}/k{k}.wall').read()):.1f} |")
PY
[ "${TABLE2:-1}" = 1 ] || exit 0
# table 2: 1/κ = 1.25 at -np 1 and -np 2, per MM step (the MM log lines; totals are cumulative)
for np in 1 2; do
    mpi $np "$STRUX" train configs/adult_fairness.ini --set output.progress=never --set data.test= \
        --set output.model="$WORK/p$np.h5" --set output.metrics="$WORK/p$np.jsonl" \
        >/dev/null 2>"$WORK/p$np.log" || exit 1
done
echo
/usr/bin/python3 - "$WORK" <<'PY'
import re, sys, h5py, numpy as np
w = sys.argv[1]
pat = re.compile(r"MM step (\d+) objective (\S+), (\d+) switched, (\d+) cuts, (\d+) inner epochs, "
                 r"(\S+)s \(lp (\S+)s, comm (\S+)s\)")
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
    print(f"| {n} | all | | | {c0} | {e0} | {tot:.1f} | | |")
a = h5py.File(f"{w}/p1.h5", "r")["weights"][:]
b = h5py.File(f"{w}/p2.h5", "r")["weights"][:]
print(f"\nnp 1 and np 2 (solver.blocks = 4): max |w1 - w2| = {np.max(np.abs(a - b)):.3e} "
      f"(max |w1| = {np.max(np.abs(a)):.3e})")
PY
