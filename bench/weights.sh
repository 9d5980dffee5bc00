# bench/weights.sh - the weight store (issue 12), paired runs side by side, medians printed:
#  1. SDCA epoch on the synthetic multilabel set of WEIGHTS_ROWS (default 1M) rows × 50K sparse
#     features (100 non-zeros per row) × 100 labels at np 1, per model.layout and precision, runs
#     alternating; median of epochs 2..E (epoch 1 pays the first touch of every page); the score
#     traffic the epoch achieves (non-zeros × labels × value bytes / epoch seconds) beside a
#     single-thread STREAM triad run here (target: feature_major ≥ 5× faster than label_major);
#  2. multilabel SDCA (margin rescaling, 1-vs-All) against liblinear-train -s 3 run per label and
#     summed, at λ = 1e-3 (C = 1/(λn), -B 1), on medical, enron and bibtex: LIBLINEAR at its
#     default -e 0.1, then strux's training seconds (time_s: epochs only, certificates excluded;
#     LIBLINEAR's includes reading its file once per label, as a per-label run does) until its
#     primal is at or below LIBLINEAR's objective, with and without solver.shrinking
#     (target: ≤ 1.0×);
#  3. peak RSS at np 1 for 10K rows × 20K features × 1000 labels, 2 SDCA epochs, per kind (target:
#     ≤ 0.7× the 427 MB of the label-major store with a second copy; STRUX_BASELINE=path to an
#     older strux binary measures that one beside);
#  4. seconds per SGD epoch of slack rescaling against margin rescaling on yeast and bibtex
#     (target: ≤ 1.5×).
set -u
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
D=${STRUX_DATA:-../shared/data}
PY=/usr/bin/python3
ROWS=${WEIGHTS_ROWS:-1000000}
STREAM="$(dirname "$STRUX")/../bench/stream_triad"
fail() { cat "$WORK/err" >&2; exit 1; }

epoch_median() { # METRICS.jsonl: median seconds of epochs 2..E
    $PY - "$1" <<'PY'
import json, statistics, sys
t = [json.loads(l)["time_s"] for l in open(sys.argv[1])]
d = [b - a for a, b in zip(t, t[1:])]
print(f"{statistics.median(d):.3f}")
PY
}

echo "### 1. SDCA epoch, $ROWS x 50K x 100 labels, np 1"
echo
"$STRUX" gen "$WORK/syn.h5" --rows "$ROWS" --features 50000 --labels 100 --nnz 100 --seed 1 \
    >/dev/null 2>"$WORK/err" || fail
triad=$("$STREAM" 256)
echo "| layout | precision | s per epoch (median of epochs 2-3) | score traffic GB/s | STREAM triad GB/s |"
echo "|---|---|---|---|---|"
declare -A sec
for rep in 1 2; do
    for kind in label_major:double feature_major:double feature_major:float; do
        IFS=: read -r lay prec <<<"$kind"
        "$STRUX" train configs/yeast.ini --quiet --set data.train="$WORK/syn.h5" --set data.test= \
            --set data.label_names= --set solver.type=sdca --set solver.epochs=3 --set solver.tol=0 \
            --set solver.sync_every=0 --set model.layout=$lay --set model.precision=$prec \
            --set output.model="$WORK/m.h5" --set output.metrics="$WORK/$lay$prec$rep.jsonl" \
            >/dev/null 2>"$WORK/err" || fail
        sec[$kind,$rep]=$(epoch_median "$WORK/$lay$prec$rep.jsonl")
    done
done
for kind in label_major:double feature_major:double feature_major:float; do
    IFS=: read -r lay prec <<<"$kind"
    s=$($PY -c "import statistics; print(f'{statistics.median([${sec[$kind,1]}, ${sec[$kind,2]}]):.3f}')")
    bytes=$([ "$prec" = float ] && echo 4 || echo 8)
    gbs=$($PY -c "print(f'{$ROWS * 100 * 100 * $bytes / $s / 1e9:.2f}')")
    echo "| $lay | $prec | $s | $gbs | $triad |"
    eval "med_${lay}_$prec=$s"
done
echo
echo "feature_major / label_major speed (double): $($PY -c "print(f'{$med_label_major_double / $med_feature_major_double:.1f}x')")"
echo

echo "### 2. Multilabel SDCA against liblinear-train -s 3 per label (λ = 1e-3)"
echo
echo "| set | LIBLINEAR s (-e 0.1) | its objective | strux s, shrinking | epochs | strux s, no shrinking | epochs | ratio (shrinking) |"
echo "|---|---|---|---|---|---|---|---|"
for d in medical enron bibtex; do
    LIBLINEAR_EPS=0.1 $PY tests/common/liblinear_ref.py "$D/$d/${d}_train.svm.gz" 1e-3 \
        >"$WORK/ll.json" 2>"$WORK/err" || fail
    for sh in true false; do
        "$STRUX" train configs/medical.ini --quiet --set data.train="$D/$d/${d}_train.svm.gz" \
            --set data.test= --set data.label_names= --set solver.type=sdca \
            --set solver.lambda=1e-3 --set solver.sync_every=0 --set solver.epochs=3000 \
            --set solver.tol=1e-6 --set solver.shrinking=$sh --set output.model="$WORK/m.h5" \
            --set output.metrics="$WORK/$d$sh.jsonl" >/dev/null 2>"$WORK/err" || fail
    done
    $PY - "$d" "$WORK/ll.json" "$WORK/${d}true.jsonl" "$WORK/${d}false.jsonl" <<'PY'
import json, sys
d, ll = sys.argv[1], json.load(open(sys.argv[2]))
out = []
for path in sys.argv[3:5]:
    rows = [json.loads(l) for l in open(path)]
    hit = next((r for r in rows if r["primal"] is not None and r["primal"] <= ll["objective"]), None)
    out.append((f"{hit['time_s']:.2f}", str(hit["epoch"])) if hit else ("—", f"— ({rows[-1]['epoch']})"))
ratio = f"{float(out[0][0]) / ll['train_s']:.2f}" if out[0][0] != "—" else "—"
print(f"| {d} | {ll['train_s']:.2f} | {ll['objective']:.6f} | {out[0][0]} | {out[0][1]} | "
      f"{out[1][0]} | {out[1][1]} | {ratio} |")
PY
done
echo

echo "### 3. Peak RSS, np 1, 10K x 20K x 1000 labels, 2 SDCA epochs"
echo
"$STRUX" gen "$WORK/wide.h5" --rows 10000 --features 20000 --labels 1000 --nnz 100 --seed 2 \
    >/dev/null 2>"$WORK/err" || fail
echo "| binary | layout | precision | peak RSS MB |"
echo "|---|---|---|---|"
rss() { # BINARY LAYOUT PRECISION
    /usr/bin/time -f "%M" -o "$WORK/rss" "$1" train configs/yeast.ini --quiet \
        --set data.train="$WORK/wide.h5" --set data.test= --set data.label_names= \
        --set solver.type=sdca --set solver.epochs=2 --set solver.tol=0 --set solver.sync_every=0 \
        ${2:+--set model.layout=$2} ${3:+--set model.precision=$3} \
        --set output.model="$WORK/m.h5" >/dev/null 2>"$WORK/err" || fail
    echo $(($(cat "$WORK/rss") / 1024))
}
if [ -n "${STRUX_BASELINE:-}" ]; then
    echo "| $STRUX_BASELINE | label_major | double | $(rss "$STRUX_BASELINE" "" "") |"
fi
for kind in feature_major:double feature_major:float; do # label_major holds the same bytes
    IFS=: read -r lay prec <<<"$kind"
    echo "| strux | $lay | $prec | $(rss "$STRUX" $lay $prec) |"
done
echo

echo "### 4. SGD seconds per epoch, slack rescaling against margin rescaling"
echo
echo "| set | margin s/epoch | slack s/epoch | ratio |"
echo "|---|---|---|---|"
for set in yeast:yeast:yeast_slack bibtex:bibtex_margin:bibtex_slack; do
    IFS=: read -r d margin slack <<<"$set"
    for rep in 1 2; do
        for c in $margin $slack; do
            "$STRUX" train configs/$c.ini --quiet --set solver.type=sgd --set solver.epochs=4 \
                --set data.test= --set output.eval_every=0 --set output.model="$WORK/m.h5" \
                --set output.metrics="$WORK/$c$rep.jsonl" >/dev/null 2>"$WORK/err" || fail
        done
    done
    $PY - "$d" "$WORK/${margin}1.jsonl" "$WORK/${margin}2.jsonl" "$WORK/${slack}1.jsonl" \
        "$WORK/${slack}2.jsonl" <<'PY'
import json, statistics, sys
def per_epoch(paths):
    d = []
    for p in paths:
        t = [json.loads(l)["time_s"] for l in open(p)]
        d += [b - a for a, b in zip(t, t[1:])]
    return statistics.median(d)
m, s = per_epoch(sys.argv[2:4]), per_epoch(sys.argv[4:6])
print(f"| {sys.argv[1]} | {m:.4f} | {s:.4f} | {s / m:.2f} |")
PY
done
