# bench/sparse.sh - sparse and shared weights (issue 13) on `strux gen` synthetic sets. Parts
# (SPARSE_PARTS, default "layouts scale sync share wide refuse"):
#  layouts  np 1, each of SPARSE_LABELS (default "500 2000 5000") labels × 20K features ×
#           SPARSE_ROWS (4000) rows, 10 non-zeros and 3 labels a row: one SGD and one SDCA epoch
#           per model.layout (double): epoch seconds, peak RSS, the sparse model's non-zeros and
#           bytes per non-zero (target ≤ 2 × (4 + 8)); dense layouts run.max_memory =
#           SPARSE_MAX_MB (3000) refuses are reported as refused (exit 5).
#  (the scale sets take minutes each to generate: SPARSE_DATA names a directory that keeps them
#  between runs; default: the run's temporary directory)
#  scale    np 1, sdca with active sets (solver.active_sets, model.bias_centre = −2) on
#           SPARSE_BIG_ROWS (200000) rows × SPARSE_BIG_DIM (200000) features, SPARSE_BIG_NNZ (20)
#           non-zeros and 3 labels a row, for each of SPARSE_SCALE (default "10000 50000
#           100000") labels: SPARSE_EPOCHS (3) epochs, the last certified: seconds per epoch
#           (median), active coordinates, the model's non-zeros and bytes against 2 × nnz × 12,
#           and the epoch's nanoseconds per touched (active coordinate × row non-zero) against
#           L × dim: the epoch follows what it touches, not L × dim.
#  sync     np 2 (solver.blocks = 2) on the largest scale set: one round per epoch against
#           solver.sync_every = n/4 and n/16, side by side (SPARSE_REPEATS (2) alternations):
#           seconds per epoch, syncs, bytes per sync and changed weights per sync (bytes per
#           changed weight against 2 × 12).
#  share    np 1 against np 2 with model.share = host and none (alternating), sdca with active
#           sets (SPARSE_SHARE_ACTIVE = true; false: plain per-part sdca, whose dual lists grow
#           with every non-zero α) on SPARSE_SHARE_ROWS (20000) rows × 20K features ×
#           SPARSE_SHARE_LABELS (2000) labels, sparse layout, solver.blocks = 2, sync_every =
#           n/8, SPARSE_SHARE_EPOCHS (4) epochs: the peak over the run of the
#           ranks' summed PSS (/proc/PID/smaps_rollup, sampled every 0.1 s), the np 1 model's
#           bytes, and each rank's PSS when its data is read (process, data, dual state: before
#           the model grows); the target is peak ≤ 1.2 × np 1's model + those.
#  wide     np 1, 5000 labels × 50000 features × SPARSE_WIDE_ROWS (50000) rows, sdca with active
#           sets, SPARSE_WIDE_EPOCHS (10) epochs: peak RSS against the 2 GB of a dense double
#           model, and the primal and relative gap by epoch.
#  refuse   run.max_memory (20 MB) below the estimate: exit 5 before the data is read, at np 1
#           and np 2 (share = host: the model counted once per host, the data split).
# Timings are of a shared machine unless it is quiet: run with the load printed first.
set -u
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PARTS=${SPARSE_PARTS:-layouts scale sync share wide refuse}
MPIRUN="mpirun --oversubscribe"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
printf '[task]\ntype = multilabel\n' >"$WORK/b.ini"
jsonl() { # jsonl FILE EXPR: EXPR over rows (a list of dicts) of a metrics log
    /usr/bin/python3 -c "import json, statistics; rows = [json.loads(l) for l in open('$1')]; print($2)"
}
model_line() { # model_line ERR: "nnz bytes" of the sparse model log line
    sed -nE 's/.*sparse model: ([0-9]+) non-zeros in ([0-9]+) bytes.*/\1 \2/p' "$1"
}

if has layouts; then
    ROWS=${SPARSE_ROWS:-4000}
    MAXMB=${SPARSE_MAX_MB:-3000}
    echo "-- layouts: np 1, one epoch, $ROWS rows x 20000 features, 10 non-zeros and 3 labels a row"
    printf '%-7s %-6s %-14s %9s %9s %12s %12s %9s\n' labels solver layout epoch_s rss_MB nnz \
        sparse_MB B/nnz
    for L in ${SPARSE_LABELS:-500 2000 5000}; do
        "$STRUX" gen "$WORK/d.h5" --rows "$ROWS" --features 20000 --labels "$L" --nnz 10 \
            --labels-per-row 3 --seed 1 >/dev/null 2>&1 || exit 1
        for solver in sgd sdca; do
            for lay in label_major feature_major sparse; do
                /usr/bin/time -f "%M" -o "$WORK/rss" "$STRUX" train "$WORK/b.ini" \
                    --set data.train="$WORK/d.h5" --set solver.type=$solver \
                    --set solver.epochs=1 --set solver.tol=0 --set solver.lambda=1e-4 \
                    --set data.bias=1 --set model.layout=$lay --set run.max_memory="$MAXMB" \
                    --set output.model="$WORK/m.h5" --set output.metrics="$WORK/m.jsonl" \
                    >/dev/null 2>"$WORK/err"
                rc=$?
                if [ $rc -eq 5 ]; then
                    printf '%-7s %-6s %-14s %9s  (refused: %s)\n' "$L" $solver $lay - \
                        "$(grep -o 'needs about [0-9.]* MB' "$WORK/err")"
                    continue
                fi
                [ $rc -eq 0 ] || { cat "$WORK/err" >&2; exit 1; }
                t=$(jsonl "$WORK/m.jsonl" "rows[0]['time_s']")
                rss=$(($(cat "$WORK/rss") / 1024))
                read -r nnz bytes <<<"$(model_line "$WORK/err")"
                if [ -n "${nnz:-}" ]; then
                    printf '%-7s %-6s %-14s %9.2f %9d %12d %12.1f %9.1f\n' "$L" $solver $lay "$t" \
                        "$rss" "$nnz" "$(echo "$bytes / 1000000" | bc -l)" \
                        "$(echo "$bytes / $nnz" | bc -l)"
                else
                    printf '%-7s %-6s %-14s %9.2f %9d\n' "$L" $solver $lay "$t" "$rss"
                fi
                nnz=
            done
        done
    done
fi

BIG_ROWS=${SPARSE_BIG_ROWS:-200000}
BIG_DIM=${SPARSE_BIG_DIM:-200000}
BIG_NNZ=${SPARSE_BIG_NNZ:-20}
EPOCHS=${SPARSE_EPOCHS:-3}
SCALE=${SPARSE_SCALE:-10000 50000 100000}
LARGEST=$(echo $SCALE | tr ' ' '\n' | sort -n | tail -1)
ACTIVE=(--set solver.type=sdca --set solver.active_sets=true --set model.bias_centre=-2
    --set model.layout=sparse --set data.bias=1 --set solver.lambda=1e-4 --set solver.tol=0
    --set run.max_memory=0)
DATA=${SPARSE_DATA:-$WORK}
big_set() { # big_set L: the scale set with L labels, made once into DATA (its name holds the shape)
    BIG=$DATA/big${1}_${BIG_ROWS}x${BIG_DIM}x${BIG_NNZ}.h5
    [ -f "$BIG" ] && return 0
    "$STRUX" gen "${BIG%.h5}.part.h5" --rows "$BIG_ROWS" --features "$BIG_DIM" --labels "$1" \
        --nnz "$BIG_NNZ" --labels-per-row 3 --seed 1 >/dev/null 2>&1 &&
        mv "${BIG%.h5}.part.h5" "$BIG"
}

if has scale; then
    echo "-- scale: np 1, sdca with active sets, $BIG_ROWS rows x $BIG_DIM features, $BIG_NNZ non-zeros and 3 labels a row, $EPOCHS epochs"
    printf '%-8s %10s %12s %12s %12s %8s %10s %14s\n' labels epoch_s active nnz bytes B/nnz \
        ns/touch "L x dim"
    for L in $SCALE; do
        big_set "$L" || exit 1
        /usr/bin/time -f "%M" -o "$WORK/rss" "$STRUX" train "$WORK/b.ini" \
            --set data.train="$BIG" "${ACTIVE[@]}" --set solver.epochs="$EPOCHS" \
            --set solver.certify_every=0 --set output.model="$WORK/m.h5" \
            --set output.metrics="$WORK/m.jsonl" >/dev/null 2>"$WORK/err" ||
            { tail -n 5 "$WORK/err" >&2; exit 1; }
        read -r nnz bytes <<<"$(model_line "$WORK/err")"
        read -r t act <<<"$(jsonl "$WORK/m.jsonl" "statistics.median([b['time_s'] - a['time_s'] for a, b in zip(rows, rows[1:])] or [rows[0]['time_s']]), rows[-1]['active']")"
        ns=$(echo "$t * 1000000000 / ($act * $BIG_NNZ)" | bc -l)
        printf '%-8s %10.2f %12.0f %12d %12d %8.1f %10.1f %14.3g\n' "$L" "$t" "$act" "$nnz" \
            "$bytes" "$(echo "$bytes / $nnz" | bc -l)" "$ns" "$(echo "$L * ($BIG_DIM + 1)" | bc)"
        echo "   peak RSS $(($(cat "$WORK/rss") / 1024)) MB; model bytes <= 2 x nnz x 12: $([ "$bytes" -le $((24 * nnz)) ] && echo yes || echo NO)"
    done
fi

if has sync; then
    big_set "$LARGEST" || exit 1
    echo "-- sync: np 2, solver.blocks = 2, $LARGEST labels, sdca with active sets, $EPOCHS epochs per run"
    printf '%-11s %10s %7s %14s %14s %10s\n' sync_every epoch_s syncs bytes/sync changed/sync \
        B/changed
    for rep in $(seq "${SPARSE_REPEATS:-2}"); do
        for every in 0 $((BIG_ROWS / 4)) $((BIG_ROWS / 16)); do
            $MPIRUN -np 2 "$STRUX" train "$WORK/b.ini" --set data.train="$BIG" \
                "${ACTIVE[@]}" --set solver.blocks=2 --set solver.sync_every=$every \
                --set solver.epochs="$EPOCHS" --set solver.certify_every=0 \
                --set output.model="$WORK/m.h5" --set output.metrics="$WORK/m.jsonl" \
                >/dev/null 2>"$WORK/err" || { tail -n 5 "$WORK/err" >&2; exit 1; }
            jsonl "$WORK/m.jsonl" "'%-11s %10.2f %7d %14.0f %14.0f %10.2f' % ('$every', statistics.median([b['time_s'] - a['time_s'] for a, b in zip(rows, rows[1:])]), rows[-1]['syncs'], sum(r['sync_bytes'] for r in rows) / sum(r['syncs'] for r in rows), sum(r['sync_nnz'] for r in rows) / sum(r['syncs'] for r in rows), sum(r['sync_bytes'] for r in rows) / sum(r['sync_nnz'] for r in rows))"
        done
    done
fi

# pss_run OUT METRICS EPOCHS CMD...: run CMD, sampling every 0.1 s the summed PSS (kB) of the
# strux processes whose command line holds OUT; prints the peak while training (until METRICS
# holds EPOCHS records: the model file's write comes after), the peak over the whole run, and the
# sum when the solver is set up (the "task ..., solver ..." line: data, dual state, process; the
# model still empty)
pss_run() {
    local out=$1 metrics=$2 epochs=$3
    shift 3
    : >"$WORK/pss.err"
    rm -f "$metrics"
    "$@" >/dev/null 2>"$WORK/pss.err" &
    local pid=$! peak=0 train=0 at_setup="" done=0
    while kill -0 "$pid" 2>/dev/null; do
        local sum=0 set_up=0
        grep -qE "solver [a-z_]+, lambda" "$WORK/pss.err" && set_up=1
        for p in /proc/[0-9]*; do
            grep -qa -- "$out" "$p/cmdline" 2>/dev/null || continue
            case "$(tr '\0' '\n' <"$p/cmdline" 2>/dev/null | head -n 1)" in */strux) ;; *) continue ;; esac
            local k
            k=$(awk '/^Pss:/ {print $2}' "$p/smaps_rollup" 2>/dev/null)
            [ -n "$k" ] && sum=$((sum + k))
        done
        [ "$sum" -gt "$peak" ] && peak=$sum
        [ "$done" -eq 0 ] && [ -f "$metrics" ] && [ "$(wc -l <"$metrics")" -ge "$epochs" ] && done=1
        [ "$done" -eq 0 ] && [ "$sum" -gt "$train" ] && train=$sum
        [ -z "$at_setup" ] && [ "$set_up" -eq 1 ] && [ "$sum" -gt 0 ] && at_setup=$sum
        sleep 0.1
    done
    wait "$pid" || { tail -n 5 "$WORK/pss.err" >&2; return 1; }
    echo "$train $peak ${at_setup:-0}"
}

if has share; then
    SR=${SPARSE_SHARE_ROWS:-20000}
    SL=${SPARSE_SHARE_LABELS:-2000}
    "$STRUX" gen "$WORK/sh.h5" --rows "$SR" --features 20000 --labels "$SL" --nnz 10 \
        --labels-per-row 3 --seed 1 >/dev/null 2>&1 || exit 1
    SE=${SPARSE_SHARE_EPOCHS:-4}
    SH=(--set data.train="$WORK/sh.h5" --set solver.type=sdca --set model.layout=sparse
        --set data.bias=1 --set solver.lambda=1e-4 --set solver.tol=0 --set solver.epochs="$SE"
        --set solver.blocks=2 --set solver.sync_every=$((SR / 8)) --set run.max_memory=0)
    how="per part"
    if [ "${SPARSE_SHARE_ACTIVE:-true}" = true ]; then
        SH+=(--set solver.active_sets=true --set model.bias_centre=-2)
        how="active sets"
    fi
    echo "-- share: sdca ($how), sparse layout, $SR rows x 20000 features x $SL labels, solver.blocks = 2, sync_every = $((SR / 8)), $SE epochs; PSS of the ranks summed, MB"
    echo "   (at_setup: solver set up, model still empty: process, data and dual state of each rank; target: 1.2 x np 1's model + at_setup)"
    printf '%-12s %10s %10s %10s %10s %10s %8s
' run training whole_run at_setup model target verdict
    mb() { echo "$1 / 1024" | bc -l; }
    for rep in 1 2; do
        read -r t1 p1 s1 <<<"$(pss_run "$WORK/np1.h5" "$WORK/np1.jsonl" "$SE" "$STRUX" train \
            "$WORK/b.ini" "${SH[@]}" --set output.model="$WORK/np1.h5" \
            --set output.metrics="$WORK/np1.jsonl")" || exit 1
        read -r nnz m1 <<<"$(model_line "$WORK/pss.err")"
        printf '%-12s %10.1f %10.1f %10.1f %10.1f\n' "np 1" "$(mb "$t1")" "$(mb "$p1")" \
            "$(mb "$s1")" "$(echo "$m1 / 1048576" | bc -l)"
        for share in host none; do
            read -r t2 p2 s2 <<<"$(pss_run "$WORK/np2$share.h5" "$WORK/np2$share.jsonl" "$SE" \
                $MPIRUN -np 2 "$STRUX" train "$WORK/b.ini" "${SH[@]}" --set model.share=$share \
                --set output.model="$WORK/np2$share.h5" \
                --set output.metrics="$WORK/np2$share.jsonl")" || exit 1
            target=$(echo "1.2 * $m1 / 1024 + $s2" | bc -l)
            printf '%-12s %10.1f %10.1f %10.1f %10s %10.1f %8s\n' "np 2 $share" "$(mb "$t2")" \
                "$(mb "$p2")" "$(mb "$s2")" - "$(mb "$target")" \
                "$([ "$(echo "$t2 <= $target" | bc)" = 1 ] && echo ok || echo over)"
        done
    done
fi

if has wide; then
    WR=${SPARSE_WIDE_ROWS:-50000}
    "$STRUX" gen "$WORK/w.h5" --rows "$WR" --features 50000 --labels 5000 --nnz 20 \
        --labels-per-row 3 --seed 1 >/dev/null 2>&1 || exit 1
    WE=${SPARSE_WIDE_EPOCHS:-10}
    echo "-- wide: np 1, 5000 labels x 50000 features x $WR rows, sdca with active sets, $WE epochs (a dense double model: 2000 MB)"
    /usr/bin/time -f "%M" -o "$WORK/rss" "$STRUX" train "$WORK/b.ini" --set data.train="$WORK/w.h5" \
        "${ACTIVE[@]}" --set solver.epochs="$WE" --set output.model="$WORK/m.h5" \
        --set output.metrics="$WORK/m.jsonl" >/dev/null 2>"$WORK/err" ||
        { tail -n 5 "$WORK/err" >&2; exit 1; }
    read -r nnz bytes <<<"$(model_line "$WORK/err")"
    echo "   peak RSS $(($(cat "$WORK/rss") / 1024)) MB, model $nnz non-zeros in $((bytes / 1000000)) MB, $(jsonl "$WORK/m.jsonl" "'%.2f s an epoch' % (rows[-1]['time_s'] / len(rows))")"
    echo "   primal (relative gap) by epoch: $(jsonl "$WORK/m.jsonl" "', '.join('%.4g (%.2g)' % (r['primal'], r['gap'] / r['primal']) for r in rows)")"
fi

if has refuse; then
    big_set "$LARGEST" || exit 1
    echo "-- refuse: run.max_memory = 20 on the $LARGEST-label set"
    for np in 1 2; do
        /usr/bin/time -f "%e" -o "$WORK/t" $MPIRUN -np $np "$STRUX" train "$WORK/b.ini" \
            --set data.train="$BIG" "${ACTIVE[@]}" --set run.max_memory=20 \
            --set output.model="$WORK/m.h5" >/dev/null 2>"$WORK/err"
        echo "   np $np: exit $? after $(tail -n 1 "$WORK/t") s: $(grep -o 'needs about .*before reading the data[^;]*' "$WORK/err" | head -1)"
    done
fi
