# tests/e2e/m3l.sh - solver.type = m3l (issue 16, specs/m3l.md) end to end:
#  - R = I is today's sdca on the 1-vs-All hinge: with shrinking off both follow one trajectory
#    (yeast, 50 epochs: the same weights bit for bit, so the same objective; the logged primal
#    and dual, 10 digits, agree to 1e-9); with shrinking on (per-label R-coupled active sets vs
#    sdca's global ones) after 100 epochs each certificate brackets the other's objective (primal
#    of one >= dual of the other) and the primals differ by less than the larger gap;
#  - a dense prior R (the paper's empirical R = (1/n) sum y y^T, shrunk 0.1 towards I, computed in
#    numpy) on 150 scaled emotions rows against an independent solver: LIBLINEAR -s 3 -B -1 on the
#    N*L pair problem with features p_l (x) x_i (R = P^T P), objective to 1e-7 relative; the
#    primal of the trained Z with an explicit R^-1 (numpy inv) equals the reported primal to 1e-9
#    and the certified gap is below 1e-9 of it; prior = empirical in strux gives the same optimum
#    as the numpy R from a file; shrinking on and off the same optimum;
#    labels permuted (R alike) the same optimum; a checkpoint resumes bit for bit;
#    the model's /m3l group holds R and its description (inspect shows it);
#  - a singular zero-shot prior (rank 2) against LIBLINEAR on the pair problem (W-form);
#  - -np 1, 2, 4 at solver.blocks = 4 with an empirical prior on yeast: the same primal and dual
#    (1e-9 relative) and identical test predictions after a fixed number of epochs;
#  - bad input: model.bias = free, a task or surrogate that is not a sum of binary hinges,
#    m3l.shrink out of range (exit 2); an asymmetric or indefinite R file (exit 3, nothing
#    written); a missing R file (exit 4).
. tests/common/tap.sh
REF=tests/common/m3l_ref.py
Y=$STRUX_DATA/yeast
E=$STRUX_DATA/emotions

# train NAME CONFIG [strux train arguments...]: metrics in $WORK/NAME.jsonl
train() {
    local name=$1 config=$2
    shift 2
    "$STRUX" train "$config" "$@" --quiet --set output.eval_every=0 \
        --set output.model="$WORK/$name.h5" --set output.metrics="$WORK/$name.jsonl" \
        >"$WORK/$name.json" 2>"$WORK/$name.err"
}

# last NAME FIELD: the field of the last certified epoch
last() {
    $PY -c 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
r=[r for r in rows if r["primal"] is not None][-1]
print(repr(r[sys.argv[2]]))' "$WORK/$1.jsonl" "$2"
}

# rel A B TOL: |A - B| <= TOL * max(|A|, |B|)
rel() {
    $PY -c 'import sys
a,b,t=float(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3])
d=abs(a-b)/max(abs(a),abs(b),1e-300)
print(f"# {a!r} vs {b!r}: relative {d:.3g} (tolerance {t})")
sys.exit(0 if d<=t else 1)' "$1" "$2" "$3"
}

# ---- R = I against sdca (yeast) ----
YC=(configs/yeast.ini --set solver.tol=0 --set solver.certify_every=50)
train sd0 "${YC[@]}" --set solver.type=sdca --set solver.shrinking=false --set solver.epochs=50
ok $? "sdca without shrinking trains yeast"
train m0 "${YC[@]}" --set solver.type=m3l --set m3l.shrinking=false --set solver.epochs=50
ok $? "m3l (R = I) without shrinking trains yeast"
out=$(rel "$(last sd0 primal)" "$(last m0 primal)" 1e-9 && rel "$(last sd0 dual)" "$(last m0 dual)" 1e-9)
ok $? "R = I without shrinking: m3l's primal and dual after 50 epochs are sdca's (1e-9)"
echo "$out" | diag
$PY - "$WORK/sd0.h5" "$WORK/m0.h5" <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["weights"][:]
b = h5py.File(sys.argv[2], "r")["weights"][:]
sys.exit(0 if a.shape == b.shape and np.array_equal(a, b) else 1)
PY
ok $? "R = I without shrinking: the same weights bit for bit"
grep -q "R = I: 1-vs-All" "$WORK/m0.err" || "$STRUX" train configs/yeast.ini --set solver.type=m3l \
    --set solver.epochs=1 --set output.model="$WORK/log.h5" 2>&1 | grep -q "R = I: 1-vs-All"
ok $? "the log names the prior R = I as 1-vs-All"

train sd1 "${YC[@]}" --set solver.type=sdca --set solver.epochs=200
train m1 "${YC[@]}" --set solver.type=m3l --set solver.epochs=200
$PY - "$WORK/sd1.jsonl" "$WORK/m1.jsonl" <<'PY'
import json, sys
a, b = ([json.loads(l) for l in open(p)][-1] for p in sys.argv[1:])
print(f"# sdca primal {a['primal']!r} dual {a['dual']!r}; m3l primal {b['primal']!r} dual {b['dual']!r}")
ok = b["primal"] >= a["dual"] and a["primal"] >= b["dual"]
ok = ok and abs(a["primal"] - b["primal"]) <= max(a["gap"], b["gap"]) <= 1e-4 * a["primal"]
sys.exit(0 if ok else 1)
PY
ok $? "R = I with shrinking: m3l and sdca bracket each other, primals within the gaps (< 1e-4)"

# ---- a dense prior against LIBLINEAR on the pair problem (150 scaled emotions rows) ----
EM=$WORK/em150.svm
$PY $REF scale "$E/emotions_train.svm.gz" 150 "$EM" && $PY $REF prior "$EM" 150 "$WORK/R.txt" 0.1
ok $? "150 emotions rows scaled, the empirical prior in numpy"
LAM=0.05
EC=(configs/yeast.ini --set data.train="$EM" --set data.test= --set data.label_names=
    --set solver.type=m3l --set solver.lambda=$LAM --set solver.tol=1e-10
    --set solver.epochs=5000 --set solver.sync_every=0)
train ef "${EC[@]}" --set m3l.prior=file --set m3l.r_file="$WORK/R.txt"
ok $? "m3l trains with the prior from a file"
LIBLINEAR_EPS=1e-9 $PY $REF liblinear "$EM" 150 $LAM "$WORK/R.txt" >"$WORK/ll.json"
ok $? "LIBLINEAR -s 3 -B -1 on the 900-pair problem"
llJ=$($PY -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["objective"]))' "$WORK/ll.json")
out=$(rel "$(last ef primal)" "$llJ" 1e-7)
ok $? "dense R: m3l's objective is LIBLINEAR's on the pair problem (1e-7)"
echo "$out" | diag
$PY $REF model "$EM" 150 $LAM "$WORK/R.txt" "$WORK/ef.h5" >"$WORK/rinv.json"
rJ=$($PY -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["objective"]))' "$WORK/rinv.json")
out=$(rel "$(last ef primal)" "$rJ" 1e-9)
ok $? "dense R: the primal with an explicit R^-1 at the trained Z is the reported primal (1e-9)"
echo "$out" | diag
$PY -c 'import sys; sys.exit(0 if float(sys.argv[2]) <= 1e-9 * float(sys.argv[1]) and float(sys.argv[2]) >= 0 else 1)' \
    "$(last ef primal)" "$(last ef gap)"
ok $? "dense R: certified gap in [0, 1e-9 primal] ($(last ef gap))"
$PY - "$WORK/ef.h5" "$WORK/R.txt" $LAM <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r"); g = f["m3l"]; R = np.loadtxt(sys.argv[2])
a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in g.attrs.items()}
ev = np.linalg.eigvalsh(R)
ok = np.array_equal(g["R"][:], R) and a["prior"] == "file" and a["shrink"] == 0
ok = ok and abs(a["eig_min"] - ev[0]) <= 1e-12 and abs(a["eig_max"] - ev[-1]) <= 1e-12
ok = ok and a["lambda"] == float(sys.argv[3]) and abs(a["C_paper"] - 1 / (2 * 150 * float(sys.argv[3]))) <= 1e-15
print(f"# /m3l attributes {a}")
sys.exit(0 if ok else 1)
PY
ok $? "the model's /m3l/R is the prior as used; prior, shrink, eigenvalues, lambda, C_paper"
"$STRUX" inspect "$WORK/ef.h5" | grep -q "^m3l prior    file, 6 x 6"
ok $? "strux inspect shows the prior"
train ee "${EC[@]}" --set m3l.prior=empirical --set m3l.shrink=0.1
out=$(rel "$(last ef primal)" "$(last ee primal)" 1e-9)
ok $? "prior = empirical (moment, shrink 0.1) reaches the optimum of the numpy R (1e-9)"
echo "$out" | diag
cp "$EM" "$WORK/labels_only.svm"
train ed "${EC[@]}" --set m3l.prior=empirical --set m3l.shrink=0.1 \
    --set m3l.prior_data="$WORK/labels_only.svm"
out=$(rel "$(last ee primal)" "$(last ed primal)" 1e-9)
ok $? "m3l.prior_data naming a copy of the training file gives the same optimum (1e-9)"
echo "$out" | diag
train es "${EC[@]}" --set m3l.prior=file --set m3l.r_file="$WORK/R.txt" --set m3l.shrinking=false
out=$(rel "$(last ef primal)" "$(last es primal)" 1e-9)
ok $? "dense R: shrinking on and off reach one optimum (1e-9)"
echo "$out" | diag

# labels permuted in the data and in R alike: the same optimum
$PY - "$EM" "$WORK/R.txt" "$WORK/emp.svm" "$WORK/Rp.txt" <<'PY'
import sys, numpy as np
perm = [3, 0, 5, 1, 4, 2]  # old label l becomes perm[l]
with open(sys.argv[1]) as f, open(sys.argv[3], "w") as g:
    for line in f:
        labs, rest = line.split(" ", 1)
        new = sorted(perm[int(l)] for l in labs.split(",") if l)
        g.write(",".join(map(str, new)) + " " + rest)
R = np.loadtxt(sys.argv[2]); Rp = np.empty_like(R)
for k in range(6):
    for l in range(6):
        Rp[perm[k], perm[l]] = R[k, l]
np.savetxt(sys.argv[4], Rp, fmt="%.17g")
PY
train ep "${EC[@]}" --set data.train="$WORK/emp.svm" --set m3l.prior=file --set m3l.r_file="$WORK/Rp.txt"
out=$(rel "$(last ef primal)" "$(last ep primal)" 1e-9)
ok $? "labels permuted with R alike: the same optimum (1e-9)"
echo "$out" | diag

# a checkpoint after epoch 20 resumes to the uninterrupted run's weights, bit for bit (the
# per-label shrinking thresholds and shrunk coordinates are in it)
EK=(configs/yeast.ini --quiet --set data.train="$EM" --set data.test= --set data.label_names=
    --set solver.type=m3l --set solver.lambda=$LAM --set solver.tol=0 --set solver.epochs=40
    --set solver.sync_every=0 --set m3l.prior=file --set m3l.r_file="$WORK/R.txt")
"$STRUX" train "${EK[@]}" --set output.model="$WORK/full.h5" 2>/dev/null &&
    "$STRUX" train "${EK[@]}" --set output.model="$WORK/part.h5" --set output.checkpoint_every=20 \
        --set output.checkpoint="$WORK/ck.h5" --set solver.epochs=40 2>/dev/null
ok $? "m3l runs with a checkpoint every 20 epochs"
"$STRUX" train --resume "$WORK/ck.h5" --quiet --set output.model="$WORK/resumed.h5" 2>/dev/null
ok $? "m3l resumes from the checkpoint of epoch 20"
$PY - "$WORK/full.h5" "$WORK/resumed.h5" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["weights"][:] for p in sys.argv[1:])
sys.exit(0 if a.shape == b.shape and np.array_equal(a, b) else 1)
PY
ok $? "the resumed run ends at the uninterrupted run's weights, bit for bit"

# ---- a singular zero-shot prior (2 classes: rank 2) ----
printf '# p labels\n0.7 0,2,4\n0.3 1,5\n' >"$WORK/classes.txt"
$PY - "$WORK/classes.txt" "$WORK/Rz.txt" 6 <<'PY'
import sys, numpy as np
L = int(sys.argv[3]); R = np.zeros((L, L)); ps = []
for line in open(sys.argv[1]):
    if line.startswith("#"): continue
    p, labs = line.split(); y = -np.ones(L); y[[int(x) for x in labs.split(",")]] = 1
    ps.append((float(p), y))
tot = sum(p for p, _ in ps)
for p, y in ps: R += p / tot * np.outer(y, y)
np.savetxt(sys.argv[2], R, fmt="%.17g")
PY
train ez "${EC[@]}" --set m3l.prior=zero_shot --set m3l.classes="$WORK/classes.txt"
ok $? "m3l trains with a singular zero-shot prior"
LIBLINEAR_EPS=1e-9 $PY $REF liblinear "$EM" 150 $LAM "$WORK/Rz.txt" >"$WORK/llz.json"
llz=$($PY -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["objective"]))' "$WORK/llz.json")
out=$(rel "$(last ez primal)" "$llz" 1e-7)
ok $? "singular R (W-form): m3l's objective is LIBLINEAR's on the pair problem (1e-7)"
echo "$out" | diag

# ---- -np 1, 2, 4 at solver.blocks = 4, empirical prior (yeast) ----
for np in 1 2 4; do
    $MPIRUN -np $np "$STRUX" train configs/yeast.ini --quiet --set solver.type=m3l \
        --set m3l.prior=empirical --set m3l.empirical=cooccurrence --set solver.blocks=4 \
        --set solver.epochs=8 --set solver.tol=0 --set solver.certify_every=8 \
        --set output.eval_every=0 --set output.model="$WORK/np$np.h5" \
        --set output.metrics="$WORK/np$np.jsonl" >/dev/null 2>"$WORK/np$np.err"
    ok $? "m3l -np $np at solver.blocks = 4 trains yeast with an empirical prior"
    "$STRUX" predict --model "$WORK/np$np.h5" --data "$Y/yeast_test.svm.gz" \
        --out "$WORK/np$np.pred" 2>/dev/null
done
out=$(for np in 2 4; do
    rel "$(last np1 primal)" "$(last np$np primal)" 1e-9 && rel "$(last np1 dual)" "$(last np$np dual)" 1e-9 || exit 1
done)
ok $? "-np 1, 2, 4: the same primal and dual (1e-9 relative)"
echo "$out" | diag
$PY - "$WORK"/np1.h5 "$WORK"/np2.h5 "$WORK"/np4.h5 <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["weights"][:]
d = max(np.abs(h5py.File(p, "r")["weights"][:] - a).max() for p in sys.argv[2:]) / np.abs(a).max()
print(f"# max relative weight difference {d:.3g}")
sys.exit(0 if d <= 1e-9 else 1)
PY
ok $? "-np 1, 2, 4: the same weights (1e-9 relative)"
cmp -s "$WORK/np1.pred" "$WORK/np2.pred" && cmp -s "$WORK/np1.pred" "$WORK/np4.pred"
ok $? "-np 1, 2, 4: identical test predictions"

# ---- bad input ----
expect_fail 2 "model.bias = free" "model.bias = free is refused" -- \
    "$STRUX" train configs/yeast.ini --set solver.type=m3l --set model.bias=free \
    --set output.model="$WORK/bad.h5"
expect_fail 2 "task.type = multilabel" "a task other than multilabel is refused" -- \
    "$STRUX" train configs/yeast.ini --set solver.type=m3l --set task.type=pairwise \
    --set output.model="$WORK/bad.h5"
expect_fail 2 "surrogate.type = margin" "a surrogate other than margin is refused" -- \
    "$STRUX" train configs/yeast.ini --set solver.type=m3l --set surrogate.type=slack \
    --set output.model="$WORK/bad.h5"
expect_fail 2 "m3l.shrink" "m3l.shrink outside [0, 1] is refused" -- \
    "$STRUX" train configs/yeast.ini --set solver.type=m3l --set m3l.shrink=1.5 \
    --set output.model="$WORK/bad.h5"
$PY -c 'import numpy as np; R=np.eye(14); R[0,1]=0.5; np.savetxt("'"$WORK"'/asym.txt", R)'
expect_fail 3 "not symmetric" "an asymmetric R is refused (exit 3)" -- \
    "$STRUX" train configs/yeast.ini --set solver.type=m3l --set m3l.prior=file \
    --set m3l.r_file="$WORK/asym.txt" --set output.model="$WORK/bad.h5"
$PY -c 'import numpy as np; R=np.eye(14); R[0,1]=R[1,0]=2; np.savetxt("'"$WORK"'/indef.txt", R)'
expect_fail 3 "m3l.shrink" "an indefinite R is refused with the m3l.shrink hint (exit 3)" -- \
    "$STRUX" train configs/yeast.ini --set solver.type=m3l --set m3l.prior=file \
    --set m3l.r_file="$WORK/indef.txt" --set output.model="$WORK/bad.h5"
expect_fail 4 "nope.txt" "a missing R file is exit 4" -- \
    "$STRUX" train configs/yeast.ini --set solver.type=m3l --set m3l.prior=file \
    --set m3l.r_file="$WORK/nope.txt" --set output.model="$WORK/bad.h5"
printf '0,1 1:0.5\n0,99 1:0.25\n' >"$WORK/badlabels.svm"
expect_fail 3 "badlabels.svm:2: label 99" "a label id beyond the data's in m3l.prior_data names file and line" -- \
    "$STRUX" train configs/yeast.ini --set solver.type=m3l --set m3l.prior=empirical \
    --set m3l.prior_data="$WORK/badlabels.svm" --set output.model="$WORK/bad.h5"
printf '0.5 0,3\nx 1\n' >"$WORK/badclasses.txt"
expect_fail 3 "badclasses.txt:2" "a malformed classes file names file and line (exit 3)" -- \
    "$STRUX" train configs/yeast.ini --set solver.type=m3l --set m3l.prior=zero_shot \
    --set m3l.classes="$WORK/badclasses.txt" --set output.model="$WORK/bad.h5"
[ ! -e "$WORK/bad.h5" ]
ok $? "nothing written by a refused run"
