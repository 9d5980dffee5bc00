# bench/weights.sh - the weight store (issue 12), paired runs side by side, medians printed:
#  1. SDCA epoch on the synthetic multilabel set of WEIGHTS_ROWS (default 1M) rows × 50K sparse
#     features (100 non-zeros per row) × 100 labels at np 1, per model.layout and precision, runs
#     alternating; median of epochs 2..E (epoch 1 pays the first touch of every page; no
#     certificate but after the last epoch, which is left out); the score traffic the epoch
#     achieves (non-zeros × labels × value bytes / epoch seconds) beside a single-thread STREAM
#     triad run here, and each run's peak RSS (target: feature_major ≥ 5× faster than
#     label_major). Memory, printed too: at 100K rows `strux gen` peaks at 166 MB and training at
#     191 MB, which grow by the CSR data (100 non-zeros at 8 bytes a row) and the sparse duals, so
#     1M rows need about 2 GB;
#  2. multilabel SDCA (margin rescaling, 1-vs-All) against liblinear-train -s 3 run per label and
#     summed, at λ = 1e-3 (C = 1/(λn), -B 1), on medical, enron and bibtex: LIBLINEAR at its
#     default -e 0.1; one strux run certified every epoch finds E, the first epoch whose primal is
#     at or below LIBLINEAR's objective (with and without solver.shrinking); then LIBLINEAR and a
#     strux run of E epochs certified only after the last alternate WEIGHTS_REPS times (the same
#     trajectory: its primal is checked again), and the medians of their seconds are set side by
#     side: strux's time_s (epochs and that one certificate), LIBLINEAR's wall time of the
#     liblinear-train processes (reading its file once per label, as a per-label run does)
#     (target: ≤ 1.0×); beside them the CPU seconds (user + system) of the whole strux process
#     (reading the data and writing the model included) and of the liblinear-train processes,
#     which a loaded machine distorts less (it favours the short processes in wall time);
#  3. memory: peak RSS at np 1 for 10K rows × 20K features × 1000 labels, 2 SDCA epochs, per kind
#     (target: ≤ 0.7× the 427 MB of the label-major store with a second copy; STRUX_BASELINE=path
#     to an older strux binary measures that one beside); the dual state that sdca logs (dense
#     blocks against the sparse lists of solver.dual_blocks) and the peak RSS on 50K rows × 2K
#     features × 1000 labels, where the duals outweigh the model;
#  4. seconds per SGD epoch of slack rescaling against margin rescaling on yeast and bibtex, runs
#     alternating WEIGHTS_REPS times: each run's mean over epochs 2..E−1 of E = WEIGHTS_SGD_EPOCHS
#     (40; no certificate but after the last epoch, which is left out: a yeast epoch is a few ms,
#     so one epoch's time is mostly noise), the median over the runs (target: ≤ 1.5×); with
#     WEIGHTS_CALLGRIND=1 also the instructions and mispredicted branches of the SGD epochs
#     under valgrind --tool=callgrind --branch-sim=yes, which load does not move.
# WEIGHTS_PARTS (default "1 2 3 4") picks the parts to run.
set -u
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
D=${STRUX_DATA:-../shared/data}
PY=/usr/bin/python3
ROWS=${WEIGHTS_ROWS:-1000000}
REPS=${WEIGHTS_REPS:-3}
STREAM="$(dirname "$STRUX")/../bench/stream_triad"
fail() { cat "$WORK/err" >&2; exit 1; }

# epoch seconds in METRICS.jsonl files, epochs FIRST..LAST (1-based, inclusive): HOW = each (the
# median over every such epoch of every file) or mean (the median over the files of each one's
# mean over those epochs)
epoch_median() { # HOW FIRST LAST FILES...
    $PY - "$@" <<'PY'
import json, statistics, sys
how, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = []
for path in sys.argv[4:]:
    t = [0.0] + [json.loads(l)["time_s"] for l in open(path)]
    if how == "mean":
        d.append((t[last] - t[first - 1]) / (last - first + 1))
    else:
        d += [t[e] - t[e - 1] for e in range(first, last + 1)]
print(f"{statistics.median(d):.5f}")
PY
}
PARTS=${WEIGHTS_PARTS:-1 2 3 4}
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
median() { $PY -c "import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))" "$@"; }
# gen_labels NAME ROWS FEATURES NNZ SEED: a 1000-label synthetic set in $WORK/NAME.h5
gen_labels() {
    "$STRUX" gen "$WORK/$1.h5" --rows "$2" --features "$3" --labels 1000 --nnz "$4" --seed "$5" \
        >/dev/null 2>"$WORK/err" || fail
}

if has 1; then
echo "### 1. SDCA epoch, $ROWS x 50K x 100 labels, np 1"
echo
/usr/bin/time -f "%M" -o "$WORK/rss" "$STRUX" gen "$WORK/syn.h5" --rows "$ROWS" --features 50000 \
    --labels 100 --nnz 100 --seed 1 >/dev/null 2>"$WORK/err" || fail
echo "strux gen: peak RSS $(($(cat "$WORK/rss") / 1024)) MB"
echo
triad=$("$STREAM" 256)
echo "| layout | precision | s per epoch (median of epochs 2-3) | score traffic GB/s | STREAM triad GB/s | peak RSS MB |"
echo "|---|---|---|---|---|---|"
KINDS="label_major:double feature_major:double feature_major:float"
declare -A rss
for rep in 1 2; do
    for kind in $KINDS; do
        IFS=: read -r lay prec <<<"$kind"
        /usr/bin/time -f "%M" -o "$WORK/rss" "$STRUX" train configs/yeast.ini --quiet \
            --set data.train="$WORK/syn.h5" --set data.test= --set data.label_names= \
            --set solver.type=sdca --set solver.epochs=4 --set solver.certify_every=0 \
            --set solver.tol=0 --set solver.sync_every=0 --set model.layout=$lay \
            --set model.precision=$prec --set output.model="$WORK/m.h5" \
            --set output.metrics="$WORK/$lay$prec$rep.jsonl" >/dev/null 2>"$WORK/err" || fail
        rss[$kind]=$(($(cat "$WORK/rss") / 1024))
    done
done
for kind in $KINDS; do
    IFS=: read -r lay prec <<<"$kind"
    s=$(epoch_median each 2 3 "$WORK/$lay${prec}1.jsonl" "$WORK/$lay${prec}2.jsonl")
    bytes=$([ "$prec" = float ] && echo 4 || echo 8)
    gbs=$($PY -c "print(f'{$ROWS * 100 * 100 * $bytes / $s / 1e9:.2f}')")
    echo "| $lay | $prec | $s | $gbs | $triad | ${rss[$kind]} |"
    eval "med_${lay}_$prec=$s"
done
echo
echo "feature_major / label_major speed (double): $($PY -c "print(f'{$med_label_major_double / $med_feature_major_double:.1f}x')")"
echo
fi

if has 2; then
echo "### 2. Multilabel SDCA against liblinear-train -s 3 per label (λ = 1e-3, $REPS paired runs)"
echo
echo "| set | LIBLINEAR s (-e 0.1) | its objective | strux epochs E (no shrinking) | strux s for E epochs | its primal | ratio | CPU s LIBLINEAR / strux | CPU ratio |"
echo "|---|---|---|---|---|---|---|---|---|"
SD=(--set data.test= --set data.label_names= --set solver.type=sdca --set solver.lambda=1e-3
    --set solver.sync_every=0 --set solver.tol=0)
# first_hit METRICS OBJECTIVE: the first certified epoch whose primal is at or below OBJECTIVE
first_hit() {
    $PY - "$1" "$2" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
hit = next((r for r in rows if r["primal"] is not None and r["primal"] <= float(sys.argv[2])), None)
print(hit["epoch"] if hit else f"none_in_{rows[-1]['epoch']}")
PY
}
field() { $PY -c "import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
last_field() { $PY -c "import json, sys; print([json.loads(l) for l in open(sys.argv[1])][-1][sys.argv[2]])" "$1" "$2"; }
for d in medical enron bibtex; do
    train=$D/$d/${d}_train.svm.gz
    LIBLINEAR_EPS=0.1 $PY tests/common/liblinear_ref.py "$train" 1e-3 >"$WORK/ll.json" \
        2>"$WORK/err" || fail
    obj=$(field "$WORK/ll.json" objective)
    for sh in true false; do
        "$STRUX" train configs/medical.ini --quiet --set data.train="$train" "${SD[@]}" \
            --set solver.epochs=3000 --set solver.shrinking=$sh --set output.model="$WORK/m.h5" \
            --set output.metrics="$WORK/hit$sh.jsonl" >/dev/null 2>"$WORK/err" || fail
    done
    E=$(first_hit "$WORK/hittrue.jsonl" "$obj")
    E_off=$(first_hit "$WORK/hitfalse.jsonl" "$obj")
    case "$E" in none*) echo "| $d | — | $obj | $E ($E_off) | — | — | — | — | — |"; continue ;; esac
    ll_s=() sx_s=() ll_c=() sx_c=()
    for rep in $(seq "$REPS"); do
        LIBLINEAR_EPS=0.1 $PY tests/common/liblinear_ref.py "$train" 1e-3 >"$WORK/ll.json" \
            2>"$WORK/err" || fail
        ll_s+=("$(field "$WORK/ll.json" train_s)")
        ll_c+=("$(field "$WORK/ll.json" train_cpu_s)")
        /usr/bin/time -f "%U %S" -o "$WORK/cpu" "$STRUX" train configs/medical.ini --quiet \
            --set data.train="$train" "${SD[@]}" --set solver.epochs="$E" \
            --set solver.certify_every=0 --set output.model="$WORK/m.h5" \
            --set output.metrics="$WORK/e.jsonl" >/dev/null 2>"$WORK/err" || fail
        sx_s+=("$(last_field "$WORK/e.jsonl" time_s)")
        sx_c+=("$($PY -c "import sys; u, s = open(sys.argv[1]).read().split()[-2:]; print(float(u) + float(s))" "$WORK/cpu")")
    done
    primal=$(last_field "$WORK/e.jsonl" primal)
    ll=$(median "${ll_s[@]}")
    sx=$(median "${sx_s[@]}")
    $PY - "$d" "$ll" "$obj" "$E" "$E_off" "$sx" "$primal" "$(median "${ll_c[@]}")" \
        "$(median "${sx_c[@]}")" <<'PY'
import sys
d, ll, obj, E, E_off, sx, primal, llc, sxc = sys.argv[1:]
ok = "" if float(primal) <= float(obj) else " (above LIBLINEAR's!)"
print(f"| {d} | {float(ll):.2f} | {float(obj):.6f} | {E} ({E_off}) | {float(sx):.2f} | "
      f"{float(primal):.6f}{ok} | {float(sx) / float(ll):.3f} | {float(llc):.2f} / "
      f"{float(sxc):.2f} | {float(sxc) / float(llc):.3f} |")
PY
done
echo
fi

if has 3; then
echo "### 3. Memory, np 1"
echo
echo "Peak RSS, 10K x 20K x 1000 labels, 2 SDCA epochs (427 MB before the store; target 0.7x):"
echo
gen_labels wide 10000 20000 100 2
echo "| binary | layout | precision | dual blocks | peak RSS MB |"
echo "|---|---|---|---|---|"
rss() { # BINARY DATA LAYOUT PRECISION DUAL_BLOCKS: peak RSS in MB, sdca's log in $WORK/log
    /usr/bin/time -f "%M" -o "$WORK/rss" "$1" train configs/yeast.ini --verbose \
        --set data.train="$2" --set data.test= --set data.label_names= \
        --set solver.type=sdca --set solver.epochs=2 --set solver.tol=0 --set solver.sync_every=0 \
        ${3:+--set model.layout=$3} ${4:+--set model.precision=$4} \
        ${5:+--set solver.dual_blocks=$5} \
        --set output.model="$WORK/m.h5" >/dev/null 2>"$WORK/log" || { cp "$WORK/log" "$WORK/err"; fail; }
    echo $(($(cat "$WORK/rss") / 1024))
}
if [ -n "${STRUX_BASELINE:-}" ]; then
    echo "| $STRUX_BASELINE | label_major | double | dense | $(rss "$STRUX_BASELINE" "$WORK/wide.h5" "" "" "") |"
fi
for kind in feature_major:double:auto feature_major:double:dense feature_major:float:auto; do
    IFS=: read -r lay prec blocks <<<"$kind"
    echo "| strux | $lay | $prec | $blocks | $(rss "$STRUX" "$WORK/wide.h5" $lay $prec $blocks) |"
done
echo
echo "Dual state, 50K x 2K x 1000 labels, 2 SDCA epochs (sdca's log after each epoch):"
echo
gen_labels tall 50000 2000 50 3
echo "| solver.dual_blocks | dual state MB after epoch 1, 2 | non-zero duals after epoch 2 | estimate before training MB | peak RSS MB |"
echo "|---|---|---|---|---|"
for blocks in dense sparse; do
    mb=$(rss "$STRUX" "$WORK/tall.h5" "" "" $blocks)
    $PY - "$blocks" "$mb" "$WORK/log" <<'PY'
import re, sys
blocks, mb, log = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
state = re.findall(r"sdca: dual state ([0-9.]+) MB \(\w+ blocks\), (\d+) of (\d+)", log)
est = re.findall(r"memory estimate with the data read: .*dual state ([0-9.]+) MB", log)
print(f"| {blocks} | {', '.join(s[0] for s in state)} | {state[-1][1]} of {state[-1][2]} | "
      f"{est[0]} | {mb} |")
PY
done
echo
fi

if has 4; then
echo "### 4. SGD seconds per epoch, slack rescaling against margin rescaling ($REPS paired runs)"
echo
echo "| set | margin s/epoch | slack s/epoch | ratio |"
echo "|---|---|---|---|"
SGD_E=${WEIGHTS_SGD_EPOCHS:-40}
SGD=(--set solver.type=sgd --set solver.certify_every=0 --set data.test= --set output.eval_every=0)
for set in yeast:yeast:yeast_slack bibtex:bibtex_margin:bibtex_slack; do
    IFS=: read -r d margin slack <<<"$set"
    for rep in $(seq "$REPS"); do
        for c in $margin $slack; do
            "$STRUX" train configs/$c.ini --quiet "${SGD[@]}" --set solver.epochs="$SGD_E" \
                --set output.model="$WORK/m.h5" --set output.metrics="$WORK/$c$rep.jsonl" \
                >/dev/null 2>"$WORK/err" || fail
        done
    done
    m=$(epoch_median mean 2 $((SGD_E - 1)) "$WORK/$margin"*.jsonl)
    s=$(epoch_median mean 2 $((SGD_E - 1)) "$WORK/$slack"*.jsonl)
    echo "| $d | $m | $s | $($PY -c "print(f'{$s / $m:.2f}')") |"
done
if [ "${WEIGHTS_CALLGRIND:-0}" = 1 ]; then
    echo
    echo "Instructions and mispredicted branches of the SGD epochs (callgrind, 2 epochs):"
    echo
    echo "| set | margin instructions | slack instructions | ratio | margin mispredicts | slack mispredicts |"
    echo "|---|---|---|---|---|---|"
    for set in yeast:yeast:yeast_slack bibtex:bibtex_margin:bibtex_slack; do
        IFS=: read -r d margin slack <<<"$set"
        for c in $margin $slack; do
            valgrind --tool=callgrind --branch-sim=yes --callgrind-out-file="$WORK/cg.out" \
                --toggle-collect=sgd_epoch \
                "$STRUX" train configs/$c.ini --quiet "${SGD[@]}" --set solver.epochs=2 \
                --set output.model="$WORK/m.h5" --set output.metrics= >/dev/null 2>"$WORK/err" || fail
            # Collected : Ir Bc Bcm Bi Bim
            read -r ir bc bcm bi bim <<<"$(sed -n 's/.*Collected : //p' "$WORK/err")"
            eval "ir_$c=$ir mp_$c=$((bcm + bim))"
        done
        eval "im=\$ir_$margin is=\$ir_$slack mm=\$mp_$margin ms=\$mp_$slack"
        echo "| $d | $im | $is | $($PY -c "print(f'{$is / $im:.3f}')") | $mm | $ms |"
    done
fi
fi
