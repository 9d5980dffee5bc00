# bench/surrogates.sh - test metrics of the surrogates (slack_bicriteria.md §5.2 Tables 2 and 5.3):
# slack vs margin rescaling with SGD on yeast, scene, emotions and medical (configs/<set>.ini and
# configs/<set>_slack.ini), and margin, slack, β-scaling (β = 1/4, 1/2, 3/4) and ProbLoss on bibtex
# with the convex-hull search (configs/bibtex_*.ini). λ is chosen per row from {1e-4, 1e-3, 1e-2,
# 1e-1} (the thesis' C grid) by the micro-F1 on a held-out fifth of the training file (every 5th
# example), then the model is retrained on the whole training file with that λ and evaluated on the
# test file. SGD with 20 epochs and batch 16 (the configs' own solvers are dual ones now); the
# rest as in the config. Runs with -np 2.
set -u
cd "$(dirname "$0")/.."
STRUX=${STRUX:-$PWD/build/bin/strux}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
NP=${NP:-2}
GRID=${GRID:-"1e-4 1e-3 1e-2 1e-1"}
PY=/usr/bin/python3

split() { # split DATASET: $WORK/$1_fit.svm, $WORK/$1_hold.svm; prints "dim n_labels"
    $PY - "../shared/data/$1/$1_train.svm.gz" "../shared/data/$1/$1_test.svm.gz" "$WORK/$1" <<'PY'
import gzip, sys
rows = [l for l in gzip.open(sys.argv[1], "rt") if l.strip()]
dim, lab = 0, 0
for f in sys.argv[1:3]:
    for l in gzip.open(f, "rt"):
        t = l.split()
        if not t or (len(t) == 3 and ":" not in l): continue
        if ":" not in t[0] and t[0]: lab = max([lab] + [int(x) for x in t[0].split(",") if x])
        dim = max([dim] + [int(x.split(":")[0]) for x in t if ":" in x])
open(sys.argv[3] + "_fit.svm", "w").writelines(r for k, r in enumerate(rows) if k % 5 != 4)
open(sys.argv[3] + "_hold.svm", "w").writelines(r for k, r in enumerate(rows) if k % 5 == 4)
print(dim, lab + 1)
PY
}

train() { # train CONFIG OUT_JSON --set ...
    local cfg=$1 out=$2
    shift 2
    # the configs now run dual solvers to a gap; this table is SGD's (README): 20 epochs, batch 16
    mpirun --oversubscribe -np $NP "$STRUX" train "$cfg" --quiet --set solver.type=sgd \
        --set solver.tol=0 --set solver.epochs=20 --set solver.batch=16 \
        --set output.model="$WORK/m.h5" --set output.metrics="$WORK/m.jsonl" "$@" >"$out" ||
        { echo "training $cfg $* failed" >&2; exit 1; }
}

echo "| set | surrogate (search) | config | λ (held-out) | Hamming loss | micro-F1 | macro-F1 | example-F1 | train s |"
echo "|---|---|---|---|---|---|---|---|---|"
for row in yeast:yeast yeast:yeast_slack scene:scene scene:scene_slack emotions:emotions \
    emotions:emotions_slack medical:medical medical:medical_slack bibtex:bibtex_margin \
    bibtex:bibtex_slack bibtex:bibtex_beta25 bibtex:bibtex_beta50 bibtex:bibtex_beta75 \
    bibtex:bibtex_probloss; do
    set_=${row%%:*}
    cfg=configs/${row#*:}.ini
    [ -f "$WORK/${set_}_fit.svm" ] || split "$set_" >"$WORK/${set_}.shape" || exit 1
    read -r dim nl <"$WORK/${set_}.shape"
    best=""
    best_f1=-1
    for lam in $GRID; do
        train "$cfg" "$WORK/sel.json" --set solver.lambda=$lam --set data.train="$WORK/${set_}_fit.svm" \
            --set data.test="$WORK/${set_}_hold.svm" --set data.dim=$dim --set data.n_labels=$nl
        f1=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['micro_f1'])" "$WORK/sel.json")
        if $PY -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$f1" "$best_f1"; then
            best=$lam
            best_f1=$f1
        fi
    done
    train "$cfg" "$WORK/test.json" --set solver.lambda=$best
    $PY - "$set_" "$cfg" "$best" "$WORK/test.json" "$WORK/m.jsonl" "$WORK/m.h5" <<'PY'
import json, sys, h5py
s, cfg, lam, tj, mj, h5 = sys.argv[1:]
m = json.load(open(tj))
c = [json.loads(l) for l in open(mj)][-1]
f = h5py.File(h5, "r")
a = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in f.attrs.items()}
print(f"| {s} | {a.get('surrogate')} ({a.get('search')}) | {cfg} | {lam} | {m['hamming_loss']:.4f} | "
      f"{m['micro_f1']:.4f} | {m['macro_f1']:.4f} | {m['example_f1']:.4f} | {c['time_s']:.2f} |")
PY
done
echo
echo "Thesis (pairwise MRF, LP relaxation; not the same model): Table 2 yeast slack MiF1 .661 /"
echo "margin .666, label loss .205 / .204; Table 5.3 bibtex MiF1: OVA .423, MR .419, β-S .444, SR .352."
