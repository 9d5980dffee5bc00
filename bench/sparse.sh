# bench/sparse.sh - the sparse weight layout (issue 13) on `strux gen` synthetic sets at np 1:
# for each of SPARSE_LABELS (default "500 2000 5000") labels × 20K features × SPARSE_ROWS
# (default 4000) rows (10 non-zeros and 3 labels a row), one SGD epoch and one SDCA epoch per
# model.layout (label_major, feature_major, sparse; double): seconds of the epoch, peak RSS, and
# for sparse its non-zeros and bytes against nnz × 12 (target: ≤ 2 × nnz × (4 + 8)); the
# memory estimate strux logs before reading the data (model × copies) beside them. Dense layouts
# that run.max_memory = SPARSE_MAX_MB (default 3000) refuses are reported as refused (exit 5).
set -u
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ROWS=${SPARSE_ROWS:-4000}
MAXMB=${SPARSE_MAX_MB:-3000}
printf '[task]\ntype = multilabel\n' >"$WORK/b.ini"
printf '%-7s %-6s %-14s %9s %9s %12s %12s %9s\n' labels solver layout epoch_s rss_MB nnz \
    sparse_MB B/nnz
for L in ${SPARSE_LABELS:-500 2000 5000}; do
    "$STRUX" gen "$WORK/d.h5" --rows "$ROWS" --features 20000 --labels "$L" --nnz 10 \
        --labels-per-row 3 --seed 1 >/dev/null 2>&1 || exit 1
    for solver in sgd sdca; do
        for lay in label_major feature_major sparse; do
            /usr/bin/time -f "%M" -o "$WORK/rss" "$STRUX" train "$WORK/b.ini" --set data.train="$WORK/d.h5" \
                --set solver.type=$solver --set solver.epochs=1 \
                --set solver.tol=0 --set solver.lambda=1e-4 --set data.bias=1 \
                --set model.layout=$lay --set run.max_memory="$MAXMB" \
                --set output.model="$WORK/m.h5" --set output.metrics="$WORK/m.jsonl" \
                >/dev/null 2>"$WORK/err"
            rc=$?
            if [ $rc -eq 5 ]; then
                printf '%-7s %-6s %-14s %9s  (refused: %s)\n' "$L" $solver $lay - \
                    "$(grep -o 'needs about [0-9.]* MB' "$WORK/err")"
                continue
            fi
            [ $rc -eq 0 ] || { cat "$WORK/err" >&2; exit 1; }
            t=$(/usr/bin/python3 -c "import json; print(json.loads(open('$WORK/m.jsonl').readline())['time_s'])")
            rss=$(($(cat "$WORK/rss") / 1024))
            line=$(grep "sparse model:" "$WORK/err")
            if [ -n "$line" ]; then
                nnz=$(echo "$line" | sed -E 's/.*: ([0-9]+) non-zeros in ([0-9]+) bytes.*/\1/')
                bytes=$(echo "$line" | sed -E 's/.*: ([0-9]+) non-zeros in ([0-9]+) bytes.*/\2/')
                printf '%-7s %-6s %-14s %9.2f %9d %12d %12.1f %9.1f\n' "$L" $solver $lay "$t" \
                    "$rss" "$nnz" "$(echo "$bytes / 1000000" | bc -l)" \
                    "$(echo "$bytes / $nnz" | bc -l)"
            else
                printf '%-7s %-6s %-14s %9.2f %9d\n' "$L" $solver $lay "$t" "$rss"
            fi
        done
    done
done
