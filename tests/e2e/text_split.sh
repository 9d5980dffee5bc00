# tests/e2e/text_split.sh - plain LIBSVM text read in byte ranges at -np > 1 (cli/data_read.c):
#   - the ranks' byte ranges cut the file into consecutive pieces, each rank scans only its own,
#     and the examples each keeps are those of the partition of a whole-file read;
#   - yeast as plain text at -np 2 and 4 trains the model of the gzip file (read whole by every
#     rank) at -np 1 (solver.blocks = 4: one CoCoA+ path at any rank count), weights identical;
#   - an XMC header (on rank 0's range; the others read line 1 for it) changes nothing;
#   - bad lines give the message of a whole-file read, line number included, at -np 1 and 4:
#     a malformed value at line 1200 (in the last rank's range), two bad lines (the first, line
#     300, is named), a NUL byte at line 900 (the text reader's error), a header that announces
#     one example too many (found after the join).
. tests/common/tap.sh
Y=$STRUX_DATA/yeast/yeast_train.svm.gz
zcat "$Y" >"$WORK/y.svm"
printf '[surrogate]\ntype = margin\n' >"$WORK/t.ini"
COMMON=(--set solver.type=sdca --set solver.epochs=3 --set solver.tol=0 --set solver.blocks=4
    --set solver.lambda=1e-3 --set output.eval_every=0 --set data.test= --set output.metrics=)

train() { # train NP DATA MODEL: strux train at NP ranks, its stderr in MODEL.err
    local np=$1 data=$2 model=$3
    $MPIRUN -np "$np" "$STRUX" train "$WORK/t.ini" --quiet "${COMMON[@]}" --set data.train="$data" \
        --set output.model="$model" 2>"$model.err"
}

same() { # same A.h5 B.h5: identical weights
    $PY - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["weights"][:]
b = h5py.File(sys.argv[2], "r")["weights"][:]
sys.exit(0 if a.shape == b.shape and np.array_equal(a, b) else 1)
PY
}

train 1 "$Y" "$WORK/gz1.h5"
ok $? "yeast.gz at -np 1 trains"
for np in 2 4; do
    $MPIRUN -np "$np" "$STRUX" train "$WORK/t.ini" "${COMMON[@]}" --set data.train="$WORK/y.svm" \
        --set output.model="$WORK/p$np.h5" >/dev/null 2>"$WORK/p$np.err" && same "$WORK/gz1.h5" "$WORK/p$np.h5"
    ok $? "plain text at -np $np: the weights of the whole-file read at -np 1"
    size=$(stat -c %s "$WORK/y.svm")
    $PY - "$WORK/p$np.err" "$np" "$size" <<'PY'
import re, sys
log, np, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pat = re.compile(r"rank (\d+) scanned bytes (\d+)\.\.(\d+) \((\d+) lines from line (\d+)\) and keeps examples (\d+)\.\.(\d+)")
rows = sorted(tuple(int(g) for g in m.groups()) for m in map(pat.search, open(log)) if m)
assert [r[0] for r in rows] == list(range(np)), rows
assert rows[0][1] == 0 and rows[-1][2] == size, rows                  # the ranges cover the file
assert all(a[2] == b[1] for a, b in zip(rows, rows[1:])), rows         # ... consecutively
assert sum(r[3] for r in rows) == 1500, rows                           # every line once
assert all(a[4] + a[3] == b[4] for a, b in zip(rows, rows[1:])), rows  # line numbers follow
kept = [(r[5], r[6]) for r in rows]
assert kept[0][0] == 1 and kept[-1][1] == 1500 and all(a[1] + 1 == b[0] for a, b in zip(kept, kept[1:])), kept
PY
    ok $? "-np $np: each rank scanned its own byte range, the ranges cover the file, examples follow"
done

{ echo "1500 103 14"; cat "$WORK/y.svm"; } >"$WORK/h.svm"
train 4 "$WORK/h.svm" "$WORK/h4.h5" && same "$WORK/gz1.h5" "$WORK/h4.h5"
ok $? "an XMC header line: the same model at -np 4"

# bad lines: the message at -np 2 and 4 is the whole-file read's at -np 1
awk 'NR == 1200 { sub(/ 3:[^ ]*/, " 3:abc") } { print }' "$WORK/y.svm" >"$WORK/bad1.svm"
awk 'NR == 300 { sub(/ 5:[^ ]*/, " 5:1e999") } NR == 1200 { sub(/ 3:[^ ]*/, " 3:abc") } { print }' \
    "$WORK/y.svm" >"$WORK/bad2.svm"
awk 'NR == 900 { $0 = substr($0, 1, 20) "\0" substr($0, 21) } { print }' "$WORK/y.svm" >"$WORK/bad3.svm"
{ echo "1501 103 14"; cat "$WORK/y.svm"; } >"$WORK/bad4.svm"
for c in "bad1:bad1.svm:1200: malformed value in feature '3:abc'" \
    "bad2:bad2.svm:300: feature 5 has a non-finite value" \
    "bad3:bad3.svm:900: NUL byte at column 21" \
    "bad4:bad4.svm:1: header announces 1501 examples but the file has 1500"; do
    name=${c%%:*} msg=${c#*:}
    for np in 1 4; do
        expect_fail 3 "$msg" "$name at -np $np: '$msg'" -- \
            $MPIRUN -np "$np" "$STRUX" train "$WORK/t.ini" "${COMMON[@]}" \
            --set data.train="$WORK/$name.svm" --set output.model="$WORK/$name.h5"
    done
    [ ! -e "$WORK/$name.h5" ]
    ok $? "$name: no model written"
done
