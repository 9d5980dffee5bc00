# tests/e2e/rates_solver.sh - the solvers of rate-constrained training (issue 15,
# dataset_constraints.md §3) on the p%-rule problem of rates.sh (tests/common/rates_fixture.sh),
# and its bad inputs:
#  - one MM step from w = 0 is Problem 3 of that anchor (every example on both hinges): its
#    returned model against an independent solve of the same convex program (SLSQP over w, b and
#    the hinge slacks, tests/common/rates_p3_ref.py) on 80 rows, for the regularised bias with
#    each multiplier cut (E.1, E.2 centroid, level-set midpoint) and for the free bias (Alg. 3)
#    with F.2.1 and F.2.2: objective within 2e-6 of the optimum, surrogate constraint met to 1e-6;
#  - the free bias at -np 1, 2, 4 (solver.blocks = 4): the same model and multipliers to 1e-9
#    (resume mid-MM: rates_resume.sh);
#  - the churn stand-in of `strux gen --kind churn`: deterministic, its files consistent;
#  - bad inputs: one message naming the key, dataset, file:line or constraint, the README's exit
#    code, nothing written.
. tests/common/tap.sh
. tests/common/rates_fixture.sh
rates_gen 400 "$WORK/small.svm"
rates_gen 80 "$WORK/s80.svm"
rates_ini "$WORK/small.svm" >"$WORK/small.ini"
rates_ini "$WORK/s80.svm" >"$WORK/s80.ini"
Q=(--quiet --set output.progress=never)

# ---- Problem 3 against SLSQP ----
for b in reg free; do
    $PY tests/common/rates_p3_ref.py "$WORK/s80.svm" $b 0.02 >"$WORK/ref_$b" 2>&1
done
p3() { # p3 BIAS CUT BIAS_CUT
    local bias=regularised
    [ "$1" = free ] && bias=free
    "$STRUX" train "$WORK/s80.ini" "${Q[@]}" --set rates.mm_steps=1 --set rates.eps=1e-7 \
        --set model.bias=$bias --set rates.cut=$2 --set rates.bias_cut=$3 \
        --set output.model="$WORK/p3.h5" --set output.metrics="$WORK/p3.jsonl" 2>"$WORK/p3.err" &&
        $PY tests/common/rates_p3_ref.py "$WORK/s80.svm" $1 0.02 "$WORK/p3.h5" "$(cat "$WORK/ref_$1")"
}
for c in "reg max min" "reg center min" "reg midpoint min" "free max min" "free max center" \
    "free center center"; do
    p3 $c >"$WORK/p3.out" 2>&1
    ok $? "Problem 3 at w = 0 ($c): objective within 2e-6 of SLSQP's optimum, constraint met"
    diag <"$WORK/p3.out"
done

# ---- the free bias at -np 1, 2, 4 ----
for np in 1 2 4; do
    $MPIRUN -np $np "$STRUX" train "$WORK/small.ini" "${Q[@]}" --set model.bias=free \
        --set output.model="$WORK/f$np.h5" --set output.metrics="$WORK/f$np.jsonl" 2>"$WORK/f$np.err"
    ok $? "free bias (Alg. 3, F.2.1) trains at -np $np"
done
$PY - "$WORK"/f1 "$WORK"/f2 "$WORK"/f4 <<'PY'
import json, sys, h5py, numpy as np
base, ok = None, True
for stem in sys.argv[1:]:
    f = h5py.File(stem + ".h5", "r")
    w = f["weights"][:].astype(float).ravel()
    v = f["rates/v"][:]
    rows = [json.loads(l) for l in open(stem + ".jsonl")]
    bc = rows[-1]["bias_cuts"]
    if base is None:
        base = (w, v, bc)
        print(f"# -np 1: bias weight {w[-1]:.6g}, v {v}, {bc:.0f} bias cuts")
        continue
    dw = np.max(np.abs(w - base[0])) / np.max(np.abs(base[0]))
    dv = np.max(np.abs(v - base[1])) / max(np.max(np.abs(base[1])), 1e-300)
    print(f"# {stem.split('/')[-1]}: weights rel diff {dw:.3e}, multipliers {dv:.3e}, bias cuts {bc:.0f}")
    ok = ok and dw <= 1e-9 and dv <= 1e-9 and bc == base[2] and bc > 0
sys.exit(0 if ok else 1)
PY
ok $? "free bias at -np 1, 2, 4 (solver.blocks = 4): same model, multipliers and bias cuts to 1e-9"

# ---- the churn stand-in (strux gen --kind churn, dataset_constraints.md §4.5) ----
same_files() { # same_files DIR1 DIR2: the text files of two generated problems are identical
    for f in train.svm test.svm d1_train.txt d1_test.txt d2_train.txt d2_test.txt d3_train.txt \
        d3_test.txt; do
        cmp -s "$1/$f" "$2/$f" || return 1
    done
}
"$STRUX" gen "$WORK/c1" --kind churn --quiet && "$STRUX" gen "$WORK/c2" --kind churn --quiet &&
    same_files "$WORK/c1" "$WORK/c2" && $PY - "$WORK/c1" "$WORK/c2" <<'PY'
import sys, h5py, numpy as np
a, b = sys.argv[1:3]
w = [h5py.File(f"{d}/deployed.h5", "r") for d in (a, b)]
ok = np.array_equal(w[0]["weights"][:], w[1]["weights"][:]) and w[0]["weights"].shape == (1, 2977)
lines = {s: open(f"{a}/{s}.svm").read().splitlines() for s in ("train", "test")}
sizes = {(k, s): [int(x) for x in open(f"{a}/d{k}_{s}.txt")] for k in (1, 2, 3) for s in ("train", "test")}
for s in ("train", "test"):  # the rows files partition each file, D3's rows unlabeled
    ids = sorted(i for k in (1, 2, 3) for i in sizes[k, s])
    ok = ok and ids == list(range(1, len(lines[s]) + 1))
    ok = ok and all(lines[s][i - 1].startswith(" ") for i in sizes[3, s])
    ok = ok and all(lines[s][i - 1][:2] in ("+1", "-1") for k in (1, 2) for i in sizes[k, s])
    ok = ok and all(len(l.split()) - (not l.startswith(" ")) == 31 for l in lines[s])
n = {k: len(sizes[k, "train"]) + len(sizes[k, "test"]) for k in (1, 2, 3)}
ok = ok and n == {1: 13184, 2: 5388, 3: 6889}
ok = ok and all(abs(len(sizes[k, "train"]) - 0.8 * n[k]) < 1 for k in (1, 2, 3))
print(f"# sizes {n}, train shares {[len(sizes[k, 'train']) / n[k] for k in (1, 2, 3)]}")
sys.exit(0 if ok else 1)
PY
ok $? "strux gen --kind churn: the same files for the same seed; D1-D3 rows files partition 80/20 train and test files, D3 unlabeled, 31 entries a row, the deployed model a binary model of 2976 features and the bias"

# ---- bad inputs ----
printf '3\n1\nx7\n' >"$WORK/bad_rows.txt"
seq 1 399 | sed 's/.*/+1/' >"$WORK/short_pred.txt"
head -20 "$WORK/small.svm" | cut -d' ' -f1-3 >"$WORK/other.svm"
"$STRUX" train "$WORK/small.ini" "${Q[@]}" --set data.train="$WORK/other.svm" --set data.dim=3 \
    --set constraints.p_rule= --set output.model="$WORK/other.h5" --set output.metrics= 2>/dev/null
RUN=("$STRUX" train) # the ranks agree on every such failure (bad_inputs.sh); two cases at -np 2
bad() { # bad CODE PATTERN DESCRIPTION SETTINGS...
    local code=$1 pattern=$2 desc=$3
    shift 3
    rm -f "$WORK/no.h5"
    expect_fail "$code" "$pattern" "$desc (exit $code)" -- "${RUN[@]}" "$WORK/small.ini" --quiet \
        --set output.model="$WORK/no.h5" "$@"
    [ ! -e "$WORK/no.h5" ] || ok 1 "$desc: a model was written"
}
bad 2 "dataset 'E' \(defined as feature 3 > 50\) is empty on the training data" \
    "an empty dataset on train, named" --set "datasets.E=feature 3 > 50" \
    --set "constraints.e=coverage(E) <= 0.5"
bad 2 "feature 50 .*above the data's dimension" "a feature index above the data's dimension" \
    --set "datasets.E=feature 50 > 0" --set "constraints.e=coverage(E) <= 0.5"
RUN=($MPIRUN -np 2 "$STRUX" train)
bad 3 "bad_rows.txt:3: 'x7' is not an integer example number" "a rows file with a non-integer id (file:line), -np 2" \
    --set "datasets.E=rows $WORK/bad_rows.txt" --set "constraints.e=coverage(E) <= 0.5"
bad 3 "other.h5 \(baseline\): a model of task binary with 1 weight row\(s\) of 4 features" \
    "a baseline model of another dimension" --set "datasets.E=baseline $WORK/other.h5 positive" \
    --set "constraints.e=coverage(E) <= 0.5"
bad 3 "short_pred.txt: 399 predictions for the 400 examples" "a baseline prediction file of the wrong length, -np 2" \
    --set "datasets.E=baseline $WORK/short_pred.txt positive" --set "constraints.e=coverage(E) <= 0.5"
RUN=("$STRUX" train)
bad 2 "rates.cut = center needs exactly one constraint" "rates.cut = center with two constraints" \
    --set rates.cut=center --set "constraints.c2=coverage(all) <= 0.9"
bad 2 "needs solver.type = sdca" "a solver other than sdca" --set solver.type=sgd
bad 2 "constraint t = 'tpr\(unlabeled\) >= 0.5'.*no labeled rows|unlabeled.*label" \
    "a label helper on a dataset without labels" --set "constraints.t=tpr(unlabeled) >= 0.5"
bad 2 "column 1[0-9]: expected" "a syntax error names the column" --set "constraints.s=coverage(A) <=> 0.5"
# a random half R of the rows cannot be told from the rest by the features: the cell LP admits
# coverage(R) >= 0.9 with coverage(all - R) <= 0.1, no linear classifier does
$PY -c "import random; random.seed(1); print('\n'.join(str(i) for i in sorted(random.sample(range(1, 401), 200))))" >"$WORK/half.txt"
VIOL=(--set "datasets.R=rows $WORK/half.txt" --set "constraints.hi=coverage(R) >= 0.9"
    --set "constraints.lo=coverage(all - R) <= 0.1" --set constraints.p_rule= --set rates.v_max=1
    --set rates.mm_steps=1 --set rates.eps=1e-3)
bad 1 "constraint hi \(coverage\(R\) >= 0.9\) is still violated when training ends: coverage\(R\) reaches [0-9.]+" \
    "constraints violated at the end (v_max doubled 3 times), named with the value reached" "${VIOL[@]}"
"$STRUX" train "$WORK/small.ini" "${Q[@]}" "${VIOL[@]}" --set rates.on_violation=keep \
    --set output.model="$WORK/kept.h5" --set output.metrics= 2>"$WORK/kept.err" &&
    $PY -c "import h5py, sys; g = h5py.File(sys.argv[1], 'r')['rates']; sys.exit(0 if g.attrs['n_violated'] >= 1 else 1)" "$WORK/kept.h5" &&
    grep -q "the model is kept" "$WORK/kept.err" && "$STRUX" inspect "$WORK/kept.h5" | grep -q "violated"
ok $? "rates.on_violation = keep: the model is written, marked (/rates n_violated, inspect), exit 0"
exit $((TAP_FAILED > 0))
