# tests/e2e/convert_stream.sh - `strux convert` streams (cli/convert.c): the container of a text
# file is the one the whole-file read writes (same arrays and attributes as strux_io_dataset_save,
# through training: the same model as from the text), its peak RSS does not grow with the input
# (yeast repeated 2 and 16 times: 3 and 25 MB of text, the second's peak within 12 MB of the
# first's, where a whole-file read would need about 40 MB more), and on a terminal (tmux) it
# shows each pass's progress.
. tests/common/tap.sh
zcat "$STRUX_DATA/yeast/yeast_train.svm.gz" >"$WORK/y1.svm"
for k in 1 2; do cat "$WORK/y1.svm"; done >"$WORK/y2.svm"
for k in 1 2 3 4 5 6 7 8; do cat "$WORK/y2.svm"; done >"$WORK/y16.svm"

rss() { # rss TEXT OUT: peak RSS (KB) of strux convert TEXT OUT (under ASan without its quarantine
    # of freed blocks, which would grow with everything the run ever freed)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
        /usr/bin/time -f "%M" -o "$WORK/rss" "$STRUX" convert "$1" "$2" 2>/dev/null && cat "$WORK/rss"
}
r2=$(rss "$WORK/y2.svm" "$WORK/y2.h5")
r16=$(rss "$WORK/y16.svm" "$WORK/y16.h5")
$PY - "$WORK/y16.h5" "$WORK/y1.svm" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
rows = [l.split() for l in open(sys.argv[2])]
n = 16 * len(rows)
assert f.attrs["n_rows"] == n and f.attrs["dim"] == 103 and f.attrs["n_labels"] == 14
ip, col, val = f["X/indptr"][:], f["X/indices"][:], f["X/data"][:]
lp, lab = f["Y/indptr"][:], f["Y/indices"][:]
assert len(ip) == n + 1 and ip[-1] == len(col) == len(val) and lp[-1] == len(lab)
for i in (0, 777, n - 1):  # rows of the first, a middle and the last copy
    t = rows[i % len(rows)]
    want = [(int(a) - 1, np.float32(float(b))) for a, b in (x.split(":") for x in t[1:])]
    got = list(zip(col[ip[i]:ip[i + 1]], val[ip[i]:ip[i + 1]]))
    assert got == want, (i, got[:3], want[:3])
    assert list(lab[lp[i]:lp[i + 1]]) == sorted(int(x) for x in t[0].split(",")), i
PY
ok $? "the container of yeast x16 holds every example as the text has it"
echo "peak RSS: $r2 KB (3 MB of text), $r16 KB (25 MB)" | diag
[ -n "$r2" ] && [ -n "$r16" ] && [ "$r16" -le $((r2 + 12000)) ]
ok $? "convert's peak RSS does not grow with the input ($r2 KB -> $r16 KB for 8x the text)"

printf '[solver]\ntype = sdca\nepochs = 3\nlambda = 1e-3\n' >"$WORK/t.ini"
for d in y2.svm y2.h5; do
    "$STRUX" train "$WORK/t.ini" --quiet --set data.train="$WORK/$d" --set output.model="$WORK/m_$d.h5" \
        --set output.metrics= 2>/dev/null || echo "train on $d failed"
done
$PY - "$WORK/m_y2.svm.h5" "$WORK/m_y2.h5.h5" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["weights"][:] for p in sys.argv[1:3])
sys.exit(0 if np.array_equal(a, b) else 1)
PY
ok $? "training from the streamed container gives the model of the text"

if command -v tmux >/dev/null; then
    sock=strux-convert-$$
    tmux -L "$sock" new-session -d -s c -x 120 -y 10 \
        "$STRUX convert $WORK/y16.svm $WORK/tty.h5; echo STRUX-EXIT-\$?; sleep 60"
    seen=""
    for _ in $(seq 1 1500); do
        screen=$(tmux -L "$sock" capture-pane -p -t c 2>/dev/null)
        line=$(echo "$screen" | grep -E '^convert: (checking|writing) +[0-9]+%  \([0-9.]+ of [0-9.]+ MB\)')
        [ -n "$line" ] && seen="$seen|$line"
        echo "$screen" | grep -q 'STRUX-EXIT-' && break
        sleep 0.05
    done
    echo "$screen" | grep -q 'STRUX-EXIT-0' && [ -n "$seen" ]
    ok $? "on a terminal convert shows its progress (tmux capture-pane)"
    echo "seen: ${seen#|}" | diag
    tmux -L "$sock" kill-server 2>/dev/null
else
    ok 1 "tmux is missing (scripts/install-deps installs it)"
fi
