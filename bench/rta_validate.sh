#!/usr/bin/env bash
# bench/rta_validate.sh - how configs/*_rta.ini chose lambda, task.trees (n) and task.kbest (K):
# each set's training file is cut by a seeded shuffle (python random.Random(1)) into 80 % fit and
# 20 % validation rows; the rta solver (newton) trains on the fit rows for EPOCHS epochs (capped:
# the machine is shared) and `strux eval` scores the validation rows. Coordinate search, to keep
# the compute small: lambda over LAMBDAS at n = 10, K = 4, then (n, K) over NS x KS at the best
# lambda. Best = lowest validation Hamming loss (micro-F1 breaks ties). Prints one line per run and
# the choice per set. Usage: bench/rta_validate.sh [SET ...] (default: the five RTA sets).
# Env: BUILD (build), EPOCHS_SMALL (20: emotions, yeast, scene), EPOCHS_LARGE (3: medical, enron),
# LAMBDAS ("1e-2 1e-3 1e-4"), NS ("5 20"), KS ("1 10"), OUT (a temporary directory).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
STRUX="$PWD/$BUILD/bin/strux"
DATA=${STRUX_DATA:-$PWD/../shared/data}
OUT=${OUT:-$(mktemp -d)}
LAMBDAS=${LAMBDAS:-"1e-2 1e-3 1e-4"}
NS=${NS:-"5 20"}
KS=${KS:-"1 10"}
sets=("$@")
[ ${#sets[@]} -eq 0 ] && sets=(emotions yeast scene medical enron)

split() { # split SET: OUT/SET.fit.svm, OUT/SET.val.svm
    /usr/bin/python3 - "$DATA/$1/$1_train.svm.gz" "$OUT/$1" <<'PY'
import gzip, random, sys
rows = gzip.open(sys.argv[1], "rt").read().splitlines(keepends=True)
idx = list(range(len(rows)))
random.Random(1).shuffle(idx)
cut = int(0.8 * len(rows))
for name, part in (("fit", sorted(idx[:cut])), ("val", sorted(idx[cut:]))):
    with open(f"{sys.argv[2]}.{name}.svm", "w") as f:
        f.writelines(rows[i] for i in part)
PY
}

# run SET LAMBDA N K: prints "hamming micro_f1"
run() {
    local set=$1 lam=$2 n=$3 K=$4 ep=${EPOCHS_SMALL:-20} scale=none
    case $set in medical | enron) ep=${EPOCHS_LARGE:-3} ;; emotions) scale=maxabs ;; esac
    local tag="$OUT/$set-$lam-$n-$K"
    "$STRUX" train configs/yeast.ini --quiet --set data.train="$OUT/$set.fit.svm" --set data.test= \
        --set data.label_names= --set data.scale=$scale --set task.type=rta --set task.trees=$n \
        --set task.kbest=$K --set solver.type=rta --set solver.lambda=$lam --set solver.epochs=$ep \
        --set solver.tol=0 --set output.eval_every=0 --set output.model="$tag.h5" \
        --set output.metrics="$tag.jsonl" >/dev/null 2>"$tag.err" || { echo "nan nan"; return; }
    "$STRUX" eval --model "$tag.h5" --data "$OUT/$set.val.svm" 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["hamming_loss"], r["micro_f1"])'
}

for set in "${sets[@]}"; do
    split "$set"
    best=""
    for lam in $LAMBDAS; do
        read -r h f < <(run "$set" "$lam" 10 4)
        echo "$set lambda=$lam n=10 K=4 val_hamming=$h val_micro_f1=$f"
        best=$(printf '%s\n%s %s %s\n' "$best" "$h" "$(echo "-$f" | sed 's/^--//')" "$lam" | sed '/^$/d' | sort -g -k1,1 -k2,2 | head -1)
    done
    lam=$(echo "$best" | awk '{print $3}')
    bestnk="$(echo "$best" | awk '{print $1, $2}') 10 4"
    for n in $NS; do
        for K in $KS; do
            read -r h f < <(run "$set" "$lam" "$n" "$K")
            echo "$set lambda=$lam n=$n K=$K val_hamming=$h val_micro_f1=$f"
            bestnk=$(printf '%s\n%s %s %s %s\n' "$bestnk" "$h" "$(echo "-$f" | sed 's/^--//')" "$n" "$K" | sort -g -k1,1 -k2,2 | head -1)
        done
    done
    echo "CHOICE $set lambda=$lam n=$(echo "$bestnk" | awk '{print $3}') K=$(echo "$bestnk" | awk '{print $4}') val_hamming=$(echo "$bestnk" | awk '{print $1}')"
done
