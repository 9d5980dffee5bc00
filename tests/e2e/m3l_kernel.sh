# tests/e2e/m3l_kernel.sh - solver.type = m3l_kernel (issue 16, specs/m3l.md §2, §7.2) and the
# pieces of m3l added with it, end to end on 150 scaled emotions rows (100 more as test rows):
#  - rbf and poly kernels with R = I against a bias-free per-label SMO in numpy
#    (tests/common/m3l_kernel_ref.py): objective to 1e-6, identical test predictions, scores of
#    `predict --scores` to 1e-6; the model file alone (h5py) and scripts/strux_model.py predict
#    the same; the α of the file
#    recomputes strux's primal and dual (1e-9: the book-kept gradients are the exact ones) and its
#    coef (R·(y∘α)); a 1 MB cache (two rows at most) gives the same model bit for bit;
#  - the linear kernel is m3l: the same objective (1e-6) and predictions, /weights within 1e-6;
#  - R ≠ I is the N·L pair problem (LIBLINEAR -s 3 -B -1, features p_l ⊗ x_i): m3l_kernel with
#    every prior kind (identity, empirical moment / cooccurrence / correlation, a text file, a
#    model file's /m3l/R, zero_shot, shrink) and m3l with the kinds tests/e2e/m3l.sh leaves out,
#    objective to 1e-6;
#  - -np 1, 2, 4: identical steps, so objectives to 1e-9 and identical predictions (rbf, an
#    empirical prior, after a fixed number of epochs); m3l to solver.tol = 1e-10 at -np 1, 2, 4
#    (one data block per rank: different CoCoA+ trajectories) to the same objective (1e-9) and
#    predictions;
#  - m3l.schedule = per_label reaches the joint schedule's optimum; m3l.pg_tol stops both solvers
#    with every projected gradient within it (m3l_kernel: recomputed from the file); label blocks
#    (m3l.block_switch) reach m3l's optimum; a checkpoint resumes m3l_kernel bit for bit;
#  - /m3l/kernel and /m3l/sv in h5dump, inspect's kernel line;
#  - bad input: kernel.gamma < 0, kernel.degree 11, kernel.cache_mb 0.5, per_label without
#    m3l.pg_tol, data.scale = maxabs, model.bias = free (exit 2, nothing written).
. tests/common/tap.sh
REF=tests/common/m3l_ref.py
KREF=tests/common/m3l_kernel_ref.py
E=$STRUX_DATA/emotions

# train NAME [strux train arguments...]: metrics in $WORK/NAME.jsonl, model $WORK/NAME.h5; the
# log (INFO lines unless QUIET=--quiet is emptied) in $WORK/NAME.err
QUIET=--quiet
train() {
    local name=$1
    shift
    "$STRUX" train configs/yeast.ini $QUIET --set data.train="$WORK/tr.svm" \
        --set data.test= --set data.label_names= --set solver.lambda=0.05 --set solver.tol=1e-10 \
        --set solver.epochs=20000 --set solver.sync_every=0 --set output.eval_every=0 \
        --set kernel.cache_precision=double --set output.model="$WORK/$name.h5" \
        --set output.metrics="$WORK/$name.jsonl" "$@" >"$WORK/$name.json" 2>"$WORK/$name.err"
}

# last NAME FIELD: the field of the last certified epoch
last() {
    $PY -c 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
print(repr([r for r in rows if r["primal"] is not None][-1][sys.argv[2]]))' "$WORK/$1.jsonl" "$2"
}

# rel A B TOL: |A - B| <= TOL * max(|A|, |B|)
rel() {
    $PY -c 'import sys
a,b,t=float(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3])
d=abs(a-b)/max(abs(a),abs(b),1e-300)
print(f"# {a!r} vs {b!r}: relative {d:.3g} (tolerance {t})")
sys.exit(0 if d<=t else 1)' "$1" "$2" "$3"
}

# field JSONFILE KEY
field() { $PY -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$1" "$2"; }

$PY $REF scale "$E/emotions_train.svm.gz" 250 "$WORK/all.svm" && head -n 150 "$WORK/all.svm" >"$WORK/tr.svm" &&
    tail -n 100 "$WORK/all.svm" >"$WORK/te.svm"
ok $? "250 emotions rows scaled: 150 to train, 100 to test"

# ---- rbf and poly, R = I, against the numpy SMO ----
for k in "rbf 0 3 0" "poly 0.05 3 1"; do
    set -- $k
    train $1 --set solver.type=m3l_kernel --set solver.lambda=0.01 --set kernel.type=$1 \
        --set kernel.gamma=$2 --set kernel.degree=$3 --set kernel.coef0=$4
    ok $? "m3l_kernel trains a $1 kernel"
    $PY $KREF smo "$WORK/tr.svm" "$WORK/te.svm" 0.01 $1 $2 $3 $4 1 "$WORK/$1.ref" >"$WORK/$1.refj"
    out=$(rel "$(last $1 primal)" "$(field "$WORK/$1.refj" objective)" 1e-6)
    ok $? "$1, R = I: the objective of the per-label SMO in numpy (1e-6)"
    echo "$out" | diag
    "$STRUX" predict --model "$WORK/$1.h5" --data "$WORK/te.svm" --out "$WORK/$1.pred" \
        --scores "$WORK/$1.scores" 2>/dev/null && cmp -s "$WORK/$1.pred" "$WORK/$1.ref"
    ok $? "$1: identical test predictions"
    $PY - "$WORK/$1.scores" "$WORK/$1.ref.scores" <<'PY' | diag
import sys, numpy as np
a, b = np.loadtxt(sys.argv[1]), np.loadtxt(sys.argv[2])
d = np.abs(a - b).max() / np.abs(b).max()
print(f"largest score difference {d:.3g} of the largest score")
sys.exit(0 if a.shape == b.shape and d <= 1e-6 else 1)
PY
    ok ${PIPESTATUS[0]} "$1: predict --scores within 1e-6 of numpy's f_l(x)"
done
$PY $KREF predict "$WORK/rbf.h5" "$WORK/te.svm" "$WORK/file.pred" && cmp -s "$WORK/file.pred" "$WORK/rbf.pred"
ok $? "rbf: the model file alone (sv, coef, kernel attributes) predicts the same"
for k in rbf poly; do
    $PY scripts/strux_model.py predict --model "$WORK/$k.h5" --data "$WORK/te.svm" \
        --out "$WORK/$k.py.pred" && cmp -s "$WORK/$k.py.pred" "$WORK/$k.pred" || exit 1
done
ok $? "scripts/strux_model.py predicts the rbf and poly models as strux predict does"
$PY $KREF check "$WORK/rbf.h5" "$WORK/tr.svm" 0.01 >"$WORK/check.json"
out=$(rel "$(last rbf primal)" "$(field "$WORK/check.json" primal)" 1e-9 &&
    rel "$(last rbf dual)" "$(field "$WORK/check.json" dual)" 1e-9)
ok $? "rbf: primal and dual recomputed from the file's alpha are the certified ones (1e-9)"
echo "$out" | diag
$PY -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["coef_err"] <= 1e-14 else 1)' "$WORK/check.json"
ok $? "rbf: /m3l/coef = R·(y∘alpha) of /m3l/alpha"
train rbf1 --set solver.type=m3l_kernel --set solver.lambda=0.01 --set kernel.type=rbf \
    --set kernel.cache_mb=1
$PY - "$WORK/rbf.h5" "$WORK/rbf1.h5" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["m3l"] for p in sys.argv[1:])
sys.exit(0 if all(np.array_equal(a[k][:], b[k][:]) for k in ("alpha", "coef", "sv/row")) else 1)
PY
ok $? "rbf: a 1 MB cache gives the same alpha and coef bit for bit"
h5dump -A -g /m3l/kernel "$WORK/rbf.h5" >"$WORK/kdump" 2>&1 && grep -q '"rbf"' "$WORK/kdump" &&
    h5dump -H -g /m3l/sv "$WORK/rbf.h5" | grep -q 'DATASET "indptr"'
ok $? "h5dump reads /m3l/kernel (type rbf) and /m3l/sv"
"$STRUX" inspect "$WORK/rbf.h5" | grep -qE "^m3l kernel   rbf \(gamma 0.01388.*support vectors"
ok $? "inspect shows the kernel and the support vectors"

# ---- the linear kernel is m3l ----
train lin --set solver.type=m3l_kernel
train m3l --set solver.type=m3l
out=$(rel "$(last lin primal)" "$(last m3l primal)" 1e-6)
ok $? "linear kernel: m3l's objective (1e-6)"
echo "$out" | diag
for s in lin m3l; do
    "$STRUX" predict --model "$WORK/$s.h5" --data "$WORK/te.svm" --out "$WORK/$s.pred" 2>/dev/null
done
cmp -s "$WORK/lin.pred" "$WORK/m3l.pred"
ok $? "linear kernel: m3l's test predictions"
$PY - "$WORK/lin.h5" "$WORK/m3l.h5" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["weights"][:] for p in sys.argv[1:])
sys.exit(0 if np.abs(a - b).max() <= 1e-6 * np.abs(b).max() else 1)
PY
ok $? "linear kernel: /weights holds m3l's Z (1e-6)"

# ---- R ≠ I: the N·L pair problem, every prior kind ----
printf '0.7 0,2,4\n0.3 1,5\n' >"$WORK/classes.txt"
$PY - "$WORK/tr.svm" "$WORK" <<'PY'
import sys, numpy as np
rows = [l.split(" ", 1)[0] for l in open(sys.argv[1])]
Y = np.array([[1.0 if str(k) in r.split(",") else -1.0 for k in range(6)] for r in rows])
B = (Y > 0).astype(float); n = len(Y)
def save(name, R): np.savetxt(f"{sys.argv[2]}/{name}.R", R, fmt="%.17g")
save("identity", np.eye(6))
save("moment", 0.8 * (Y.T @ Y / n) + 0.2 * np.eye(6))      # shrink 0.2
nk = B.sum(0); save("cooccurrence", (B.T @ B) / np.sqrt(np.outer(nk, nk)))
C = np.corrcoef(B.T); save("correlation", C)
R = np.zeros((6, 6))
for p, labs in ((0.7, [0, 2, 4]), (0.3, [1, 5])):
    y = -np.ones(6); y[labs] = 1; R += p * np.outer(y, y)
save("zero_shot", R)
PY
ok $? "the priors in numpy: identity, moment (shrink 0.2), cooccurrence, correlation, zero-shot"
PRIORS=(identity "--set m3l.prior=identity"
    moment "--set m3l.prior=empirical --set m3l.empirical=moment --set m3l.shrink=0.2"
    cooccurrence "--set m3l.prior=empirical --set m3l.empirical=cooccurrence"
    correlation "--set m3l.prior=empirical --set m3l.empirical=correlation"
    zero_shot "--set m3l.prior=zero_shot --set m3l.classes=$WORK/classes.txt")
for ((q = 0; q < ${#PRIORS[@]}; q += 2)); do
    p=${PRIORS[q]}
    LIBLINEAR_EPS=1e-9 $PY $REF liblinear "$WORK/tr.svm" 150 0.05 "$WORK/$p.R" >"$WORK/$p.ll"
    train k_$p --set solver.type=m3l_kernel ${PRIORS[q + 1]}
    out=$(rel "$(last k_$p primal)" "$(field "$WORK/$p.ll" objective)" 1e-6)
    ok $? "m3l_kernel, prior $p: LIBLINEAR's objective on the pair problem (1e-6)"
    echo "$out" | diag
done
for p in cooccurrence correlation; do
    train m_$p --set solver.type=m3l --set m3l.prior=empirical --set m3l.empirical=$p
    out=$(rel "$(last m_$p primal)" "$(field "$WORK/$p.ll" objective)" 1e-6)
    ok $? "m3l, prior empirical $p: LIBLINEAR's objective on the pair problem (1e-6)"
    echo "$out" | diag
done
train k_file --set solver.type=m3l_kernel --set m3l.prior=file --set m3l.r_file="$WORK/correlation.R"
out=$(rel "$(last k_file primal)" "$(field "$WORK/correlation.ll" objective)" 1e-6)
ok $? "m3l_kernel, prior file (a text matrix): the pair problem's objective (1e-6)"
echo "$out" | diag
for s in m3l m3l_kernel; do
    train f_$s --set solver.type=$s --set m3l.prior=file --set m3l.r_file="$WORK/k_moment.h5"
    out=$(rel "$(last f_$s primal)" "$(field "$WORK/moment.ll" objective)" 1e-6)
    ok $? "$s, prior file naming a model (its /m3l/R): the pair problem's objective (1e-6)"
    echo "$out" | diag
done

# ---- -np 1, 2, 4 ----
for np in 1 2 4; do
    $MPIRUN -np $np "$STRUX" train configs/yeast.ini --quiet --set data.train="$WORK/tr.svm" \
        --set data.test= --set data.label_names= --set solver.type=m3l_kernel \
        --set kernel.type=rbf --set m3l.prior=empirical --set solver.lambda=0.01 \
        --set solver.tol=0 --set solver.epochs=3 --set output.eval_every=0 \
        --set output.model="$WORK/knp$np.h5" --set output.metrics="$WORK/knp$np.jsonl" \
        >/dev/null 2>"$WORK/knp$np.err"
    ok $? "m3l_kernel -np $np (rbf, empirical prior, 3 epochs)"
    "$STRUX" predict --model "$WORK/knp$np.h5" --data "$WORK/te.svm" --out "$WORK/knp$np.pred" 2>/dev/null
    $MPIRUN -np $np "$STRUX" train configs/yeast.ini --quiet --set data.train="$WORK/tr.svm" \
        --set data.test= --set data.label_names= --set solver.type=m3l \
        --set m3l.prior=empirical --set solver.lambda=0.5 --set solver.tol=1e-10 \
        --set solver.certify_every=5 --set solver.epochs=20000 --set output.eval_every=0 \
        --set output.model="$WORK/mnp$np.h5" \
        --set output.metrics="$WORK/mnp$np.jsonl" >/dev/null 2>"$WORK/mnp$np.err"
    ok $? "m3l -np $np to solver.tol = 1e-10 (one data block per rank)"
    "$STRUX" predict --model "$WORK/mnp$np.h5" --data "$WORK/te.svm" --out "$WORK/mnp$np.pred" 2>/dev/null
done
out=$(for np in 2 4; do
    for s in knp mnp; do
        rel "$(last ${s}1 primal)" "$(last $s$np primal)" 1e-9 || exit 1
    done
done)
ok $? "-np 1, 2, 4: m3l_kernel's and m3l's objectives agree (1e-9)"
echo "$out" | diag
cmp -s "$WORK/knp1.pred" "$WORK/knp2.pred" && cmp -s "$WORK/knp1.pred" "$WORK/knp4.pred" &&
    cmp -s "$WORK/mnp1.pred" "$WORK/mnp2.pred" && cmp -s "$WORK/mnp1.pred" "$WORK/mnp4.pred"
ok $? "-np 1, 2, 4: identical test predictions (m3l_kernel and m3l)"
$PY - "$WORK"/knp1.h5 "$WORK"/knp2.h5 "$WORK"/knp4.h5 <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["m3l/alpha"][:]
sys.exit(0 if all(np.array_equal(a, h5py.File(p, "r")["m3l/alpha"][:]) for p in sys.argv[2:]) else 1)
PY
ok $? "-np 1, 2, 4: m3l_kernel's alpha bit for bit (the serial steps)"

# ---- schedules, stopping rules, label blocks, resume ----
train pl --set solver.type=m3l_kernel --set solver.lambda=0.01 --set kernel.type=rbf \
    --set m3l.schedule=per_label --set m3l.pg_tol=1e-7 --set solver.tol=0
out=$(rel "$(last pl primal)" "$(last rbf primal)" 1e-6)
ok $? "m3l.schedule = per_label (pg_tol 1e-7) reaches the joint schedule's optimum (1e-6)"
echo "$out" | diag
QUIET= train pg --set solver.type=m3l_kernel --set solver.lambda=0.01 --set kernel.type=rbf \
    --set m3l.pg_tol=1e-3 --set solver.tol=0
grep -q "every projected gradient within m3l.pg_tol" "$WORK/pg.err" &&
    $PY $KREF check "$WORK/pg.h5" "$WORK/tr.svm" 0.01 >"$WORK/pg.check" &&
    $PY -c 'import json,sys; m=json.load(open(sys.argv[1]))["max_pg"]; print(f"# max |pg| {m:.3g}"); sys.exit(0 if m <= 1e-3 else 1)' "$WORK/pg.check"
ok $? "m3l_kernel stops on m3l.pg_tol = 1e-3 with every recomputed projected gradient within it"
QUIET= train mpg --set solver.type=m3l --set m3l.pg_tol=1e-4 --set solver.tol=0
grep -q "every projected gradient within m3l.pg_tol" "$WORK/mpg.err" &&
    $PY -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]
g=r[-1]["gap"]; print(f"# {len(r)} epochs, gap {g:.3g}")
sys.exit(0 if len(r) < 20000 and g <= 1e-3 * r[-1]["primal"] else 1)' "$WORK/mpg.jsonl"
ok $? "m3l stops on m3l.pg_tol = 1e-4 (a full pass within it), well before the epoch limit"
QUIET= train blk --set solver.type=m3l --set m3l.prior=empirical --set m3l.block_switch=1 \
    --set model.layout=label_major
train emp --set solver.type=m3l --set m3l.prior=empirical
grep -q "label blocks from epoch" "$WORK/blk.err"
ok $? "m3l switches to label blocks (m3l.block_switch = 1)"
out=$(rel "$(last blk primal)" "$(last emp primal)" 1e-9)
ok $? "m3l with label blocks reaches the example blocks' optimum (1e-9)"
echo "$out" | diag
echo "$out" | diag
K=(configs/yeast.ini --quiet --set data.train="$WORK/tr.svm" --set data.test= --set data.label_names=
    --set solver.type=m3l_kernel --set kernel.type=rbf --set m3l.prior=empirical
    --set solver.lambda=0.01 --set solver.tol=0 --set solver.epochs=6 --set output.eval_every=0)
"$STRUX" train "${K[@]}" --set output.model="$WORK/kfull.h5" 2>/dev/null &&
    "$STRUX" train "${K[@]}" --set output.model="$WORK/kpart.h5" --set output.checkpoint_every=3 \
        --set output.checkpoint="$WORK/kck.h5" 2>/dev/null &&
    "$STRUX" train --resume "$WORK/kck.h5" --quiet --set output.model="$WORK/kres.h5" 2>/dev/null
ok $? "m3l_kernel writes a checkpoint after epoch 3 and resumes from it"
$PY - "$WORK/kfull.h5" "$WORK/kres.h5" "$WORK/kck.h5" <<'PY'
import sys, h5py, numpy as np
a, b, c = (h5py.File(p, "r")["m3l"] for p in sys.argv[1:])
ok = all(np.array_equal(a[k][:], b[k][:]) for k in ("alpha", "coef", "sv/row"))
sys.exit(0 if ok and "kernel" in c else 1)
PY
ok $? "the resumed run ends at the uninterrupted run's alpha, bit for bit; the checkpoint holds the expansion"

# ---- bad input ----
BAD=(configs/yeast.ini --set solver.type=m3l_kernel --set output.model="$WORK/bad.h5")
expect_fail 2 "kernel.gamma" "kernel.gamma < 0 is refused" -- "$STRUX" train "${BAD[@]}" --set kernel.gamma=-1
expect_fail 2 "kernel.degree" "kernel.degree = 11 is refused" -- "$STRUX" train "${BAD[@]}" --set kernel.degree=11
expect_fail 2 "kernel.cache_mb" "kernel.cache_mb = 0.5 is refused" -- "$STRUX" train "${BAD[@]}" --set kernel.cache_mb=0.5
expect_fail 2 "m3l.pg_tol" "m3l.schedule = per_label without m3l.pg_tol is refused" -- \
    "$STRUX" train "${BAD[@]}" --set m3l.schedule=per_label
expect_fail 2 "data.scale = maxabs" "data.scale = maxabs is refused for a kernel model" -- \
    "$STRUX" train "${BAD[@]}" --set data.scale=maxabs
expect_fail 2 "model.bias = free" "model.bias = free is refused" -- "$STRUX" train "${BAD[@]}" --set model.bias=free
[ ! -e "$WORK/bad.h5" ]
ok $? "nothing written by a refused run"
