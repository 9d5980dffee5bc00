#!/usr/bin/env bash
# bench/m3l.sh - M3L timings (issue 16 "bench/m3l.sh"), paired runs made side by side
# (alternating), medians of REPS:
#  (1) solver.type = m3l with R = I against LIBLINEAR's 1-vs-All (`-s 3`, C = 1/(λn), `-B 1`,
#      -e EPS) on SETS1 (default medical enron bibtex): LIBLINEAR timed in memory through
#      liblinear-dev (build/bench/liblinear_time: train() only, summed over labels, as the paper
#      timed it) and as liblinear-train wall time (file I/O and start-up included); m3l's seconds
#      to LIBLINEAR's objective J_ll (within 1e-6 relative): the first epoch certified at or below
#      it (a certificate every CERT epochs), then a run of that many epochs without certificates,
#      whose training seconds up to the epoch before the last plus that epoch's mean (the last
#      epoch carries the closing certificate) are reported; m3l runs with M3L_ARGS (default:
#      model.layout = label_major, example blocks; `--set m3l.block_switch=1e6` adds label
#      blocks from the second epoch);
#      and an empirical (dense) R's seconds per pass against R = I's (EPOCHS_R epochs);
#  (2) solver.type = m3l_kernel, rbf kernel (γ = 1/features), against svm-train per label summed
#      (wall time; `-s 0 -t 2 -g γ -c 1/(λn) -e EPS_K -m CACHE`; LIBSVM's bias makes its problem
#      another one: a timing baseline, specs/m3l.md A13) and against m3l.schedule = per_label
#      (m3l.pg_tol = EPS_K, the same cache), on SETS2 (default scene medical enron bibtex) and the
#      Animals-with-Attributes-shaped synthetic `strux gen --zero-shot` (252 dense features, 85
#      attributes) at AWA_N rows (default 2000 5000 10000): seconds, speed-ups, test Hamming loss;
#  (3) m3l_kernel at -np 2 against -np 1 (AWA_NP rows, default 5000; the iterates are the same).
# Usage: BUILD=build bench/m3l.sh [1] [2] [3]; the load (uptime) is printed first.
set -eu
cd "$(dirname "$0")/.."
STRUX=${STRUX:-$PWD/${BUILD:-build}/bin/strux}
LLTIME=${LLTIME:-$PWD/${BUILD:-build}/bench/liblinear_time}
DATA=${STRUX_DATA:-$PWD/../shared/data}
PY=/usr/bin/python3
EPS=${EPS:-1e-3}
EPS_K=${EPS_K:-1e-3}
LAMBDA=${LAMBDA:-1e-3}
REPS=${REPS:-3}
CERT=${CERT:-5}
EPOCHS_R=${EPOCHS_R:-50}
CACHE=${CACHE:-200}
SETS1=${SETS1:-medical enron bibtex}
SETS2=${SETS2:-scene medical enron bibtex}
AWA_N=${AWA_N:-2000 5000 10000}
AWA_NP=${AWA_NP:-5000}
M3L_ARGS=${M3L_ARGS:---set model.layout=label_major}
PARTS=${*:-1 2 3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "load: $(uptime)"
echo

median() { $PY -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
jget() { $PY -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# m3l_train SET ARGS...: solver.type = m3l, R = I unless ARGS say otherwise, metrics $W/m.jsonl
m3l_train() {
    local set=$1
    shift
    "$STRUX" train configs/yeast.ini --quiet --set data.train="$DATA/$set/${set}_train.svm.gz" \
        --set data.test= --set data.label_names= --set data.bias=1 --set solver.type=m3l \
        --set solver.lambda=$LAMBDA --set solver.sync_every=0 --set output.eval_every=0 \
        --set output.model="$W/m.h5" --set output.metrics="$W/m.jsonl" $M3L_ARGS "$@" \
        >/dev/null 2>&1
}

part1() {
    echo "(1) m3l, R = I, to LIBLINEAR's objective (λ = $LAMBDA, -e $EPS; medians of $REPS paired runs)"
    echo
    echo "| set | LIBLINEAR in memory (s) | liblinear-train wall (s) | J_ll | m3l epochs | m3l (s) | m3l / in memory | m3l / liblinear-train | s/pass R = I | s/pass empirical R |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for set in $SETS1; do
        local tr=$DATA/$set/${set}_train.svm.gz
        "$LLTIME" "$tr" $LAMBDA $EPS >"$W/ll.json"
        local J
        J=$(jget "$W/ll.json" objective)
        LIBLINEAR_EPS=$EPS $PY tests/common/liblinear_ref.py "$tr" $LAMBDA >"$W/cli.json"
        m3l_train $set --set solver.tol=1e-9 --set solver.epochs=5000 --set solver.certify_every=$CERT
        local hit
        hit=$($PY -c 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
print(next((r["epoch"] for r in rows if r["primal"] is not None and r["primal"] <= float(sys.argv[2])*(1+1e-6)), 0))' "$W/m.jsonl" "$J")
        local mem=() m3l=()
        for _ in $(seq $REPS); do
            "$LLTIME" "$tr" $LAMBDA $EPS >"$W/ll.json"
            mem+=("$(jget "$W/ll.json" train_s)")
            if [ "$hit" -gt 2 ]; then
                m3l_train $set --set solver.tol=0 --set solver.epochs=$hit --set solver.certify_every=0
                m3l+=("$($PY -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]
print(r[-2]["time_s"] * len(r) / (len(r) - 1))' "$W/m.jsonl")")
            fi
        done
        local per=()
        for prior in identity empirical; do
            m3l_train $set --set m3l.prior=$prior --set solver.tol=0 --set solver.epochs=$EPOCHS_R \
                --set solver.certify_every=0
            per+=("$($PY -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]
print(r[-2]["time_s"] / r[-2]["epoch"])' "$W/m.jsonl")")
        done
        local tm tl
        tm=$(median "${mem[@]}")
        tl=$(jget "$W/cli.json" train_s)
        if [ "$hit" -gt 2 ]; then
            local ts
            ts=$(median "${m3l[@]}")
            printf "| %s | %.3f | %.3f | %.10g | %d | %.3f | %.2f | %.2f | %.4f | %.4f |\n" $set "$tm" \
                "$tl" "$J" "$hit" "$ts" "$($PY -c "print($ts/$tm)")" "$($PY -c "print($ts/$tl)")" \
                "${per[0]}" "${per[1]}"
        else
            printf "| %s | %.3f | %.3f | %.10g | not reached | - | - | - | %.4f | %.4f |\n" $set "$tm" \
                "$tl" "$J" "${per[0]}" "${per[1]}"
        fi
    done
    echo
}

# svm_per_label TRAIN TEST GAMMA C: wall seconds of svm-train summed over labels, and the test
# Hamming loss of the per-label predictions (svm-predict), as "seconds hamming"
svm_per_label() {
    $PY - "$@" "$EPS_K" "$CACHE" "$W" <<'PY'
import gzip, subprocess, sys, time
train, test, gamma, C, eps, cache, w = sys.argv[1:8]
rd = lambda p: [l for l in (gzip.open(p, "rt") if p.endswith(".gz") else open(p)).read().splitlines()
                if l and not (l[0].isdigit() and len(l.split()) == 3 and ":" not in l)]
tr, te = rd(train), rd(test)
split = lambda r: (r.split(" ", 1) + [""])[:2] if not r.startswith(" ") else ("", r.strip())
L = 1 + max(int(t) for r in tr + te for t in split(r)[0].split(",") if t)
secs = wrong = 0
for l in range(L):
    for name, rows in (("tr", tr), ("te", te)):
        with open(f"{w}/{name}.svm", "w") as f:
            for r in rows:
                lab, feats = split(r)
                f.write(("+1 " if str(l) in lab.split(",") else "-1 ") + feats + "\n")
    t0 = time.perf_counter()
    subprocess.run(["svm-train", "-q", "-s", "0", "-t", "2", "-g", gamma, "-c", C, "-e", eps,
                    "-m", cache, f"{w}/tr.svm", f"{w}/m"], check=True)
    secs += time.perf_counter() - t0
    subprocess.run(["svm-predict", "-q", f"{w}/te.svm", f"{w}/m", f"{w}/p"], check=True,
                   stdout=subprocess.DEVNULL)
    truth = [1 if str(l) in split(r)[0].split(",") else -1 for r in te]
    wrong += sum(int(float(p)) != t for p, t in zip(open(f"{w}/p").read().split(), truth))
print(secs, wrong / (len(te) * L))
PY
}

# kernel_train TRAIN TEST SCHEDULE [ARGS]: m3l_kernel's seconds and test Hamming loss
kernel_train() {
    local train=$1 test=$2 sch=$3
    shift 3
    "$STRUX" train configs/yeast.ini --quiet --set data.train="$train" --set data.test="$test" \
        --set data.label_names= --set data.bias=1 --set solver.type=m3l_kernel \
        --set kernel.type=rbf --set kernel.cache_mb=$CACHE --set solver.lambda=$LAMBDA \
        --set m3l.pg_tol=$EPS_K --set m3l.schedule=$sch --set solver.tol=0 \
        --set solver.epochs=100000 --set solver.certify_every=0 --set output.eval_every=0 \
        --set output.model="$W/k.h5" --set output.metrics="$W/k.jsonl" "$@" 2>/dev/null |
        tail -n 1 >"$W/k.json"
    $PY -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]
print(r[-1]["time_s"], json.load(open(sys.argv[2]))["hamming_loss"])' "$W/k.jsonl" "$W/k.json"
}

# the AwA-shaped synthetic of N training rows (2000 test rows) as $W/awaN.{train,test}.svm
awa() { [ -e "$W/awa$1.train.svm" ] || "$STRUX" gen "$W/awa$1" --zero-shot --rows $1 --test-rows 2000 2>/dev/null; }

part2() {
    echo "(2) m3l_kernel, rbf (γ = 1/features), λ = $LAMBDA, -e / m3l.pg_tol $EPS_K, cache $CACHE MB"
    echo
    echo "| data | svm-train per label (s) | m3l_kernel per_label (s) | m3l_kernel joint (s) | joint vs svm-train | joint vs per_label | test Hamming % svm / per_label / joint |"
    echo "|---|---|---|---|---|---|---|"
    local items=()
    for set in $SETS2; do items+=("$set"); done
    for n in $AWA_N; do items+=("awa$n"); done
    for it in "${items[@]}"; do
        local tr te
        if [[ $it == awa* ]]; then
            awa ${it#awa}
            tr=$W/$it.train.svm
            te=$W/$it.test.svm
        else
            tr=$DATA/$it/${it}_train.svm.gz
            te=$DATA/$it/${it}_test.svm.gz
        fi
        local n d
        read -r n d < <($PY -c 'import gzip,sys
p=sys.argv[1]; f=gzip.open(p,"rt") if p.endswith(".gz") else open(p)
rows=[l for l in f.read().splitlines() if ":" in l]
print(len(rows), max(int(t.split(":")[0]) for r in rows for t in r.split() if ":" in t))' "$tr")
        local g C
        g=$($PY -c "print(1/$d)")
        C=$($PY -c "print(repr(1/($LAMBDA*$n)))")
        local sv=() pl=() jt=() hs hp hj
        for _ in $(seq $REPS); do
            set -- $(svm_per_label "$tr" "$te" "$g" "$C")
            sv+=("$1")
            hs=$2
            set -- $(kernel_train "$tr" "$te" per_label)
            pl+=("$1")
            hp=$2
            set -- $(kernel_train "$tr" "$te" joint)
            jt+=("$1")
            hj=$2
        done
        local s p j
        s=$(median "${sv[@]}")
        p=$(median "${pl[@]}")
        j=$(median "${jt[@]}")
        printf "| %s (%d × %d) | %.2f | %.2f | %.2f | %.2fx | %.2fx | %.2f / %.2f / %.2f |\n" "$it" "$n" "$d" \
            "$s" "$p" "$j" "$($PY -c "print($s/$j)")" "$($PY -c "print($p/$j)")" \
            "$($PY -c "print(100*$hs)")" "$($PY -c "print(100*$hp)")" "$($PY -c "print(100*$hj)")"
    done
    echo
}

part3() {
    awa $AWA_NP
    echo "(3) m3l_kernel at -np 2 against -np 1 (awa$AWA_NP, rbf; the same iterates)"
    echo
    local t1=() t2=()
    for _ in $(seq $REPS); do
        set -- $(kernel_train "$W/awa$AWA_NP.train.svm" "$W/awa$AWA_NP.test.svm" joint)
        t1+=("$1")
        set -- $(mpirun -np 2 "$STRUX" train configs/yeast.ini --quiet \
            --set data.train="$W/awa$AWA_NP.train.svm" --set data.test= --set data.label_names= \
            --set data.bias=1 --set solver.type=m3l_kernel --set kernel.type=rbf \
            --set kernel.cache_mb=$CACHE --set solver.lambda=$LAMBDA --set m3l.pg_tol=$EPS_K \
            --set solver.tol=0 --set solver.epochs=100000 --set solver.certify_every=0 \
            --set output.eval_every=0 --set output.model="$W/k2.h5" \
            --set output.metrics="$W/k2.jsonl" >/dev/null 2>&1 &&
            $PY -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["time_s"])' "$W/k2.jsonl")
        t2+=("$1")
    done
    local a b
    a=$(median "${t1[@]}")
    b=$(median "${t2[@]}")
    printf "np 1: %.2f s, np 2: %.2f s, speed-up %.2fx\n\n" "$a" "$b" "$($PY -c "print($a/$b)")"
}

for p in $PARTS; do part$p; done
