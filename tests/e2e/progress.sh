# tests/e2e/progress.sh - what `strux train` shows while it runs (src/cli/progress.c): with stderr
# piped, plain lines only (no carriage return, no escape code) and one line per epoch with the
# objective, the held-out metric and an ETA; data.test scored every output.eval_every epochs
# with the exported weights (equal to `strux eval` of a model stopped at that epoch, with
# data.scale folding); --quiet and --log-json on every subcommand; and on a terminal (tmux) a live
# bar within the epoch that is erased before the epoch line.
. tests/common/tap.sh
D=$STRUX_DATA/yeast
E=$STRUX_DATA/emotions
B=$STRUX_DATA/bibtex
TMUX_SOCK="strux-test-$$"
trap 'tmux -L "$TMUX_SOCK" kill-server 2>/dev/null; rm -rf "$WORK"' EXIT

# ---- piped stderr: plain lines, one per epoch
"$STRUX" train configs/yeast.ini --set solver.type=sgd --set solver.epochs=3 --set output.model="$WORK/y3.h5" \
    --set output.metrics="$WORK/y3.jsonl" >"$WORK/y3.json" 2>"$WORK/y3.err"
ok $? "train yeast with data.test, stderr to a file"
! grep -q $'\r' "$WORK/y3.err" && ! grep -q $'\033' "$WORK/y3.err"
ok $? "piped stderr has no carriage return and no escape code"
[ "$(grep -c 'epoch [0-9]*/3 ' "$WORK/y3.err")" -eq 3 ]
ok $? "one line per epoch"
grep -qE '^\[strux r0\] epoch 2/3  objective [0-9.e+-]+  test_hamming_loss 0\.[0-9]+  time [0-9.]+s  eta [0-9.]+s$' \
    "$WORK/y3.err"
ok $? "the epoch line: epoch, objective, held-out metric, time, ETA"
head -n 5 "$WORK/y3.err" | diag
$PY - "$WORK/y3.jsonl" "$WORK/y3.json" <<'EOF' 2>&1 | diag
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
final = json.load(open(sys.argv[2]))
assert len(rows) == 3 and all(r["test_hamming_loss"] is not None for r in rows), rows
for m in ("hamming_loss", "subset_accuracy", "micro_f1", "macro_f1", "example_f1"):
    assert abs(rows[-1]["test_" + m] - final[m]) <= 5e-7, (m, rows[-1], final)  # printed to 6 places
EOF
ok ${PIPESTATUS[0]} "metrics log carries test_* every epoch; the last equals the printed test metrics"
"$STRUX" inspect "$WORK/y3.h5" | grep -A 4 '^training curve' >"$WORK/curve.txt"
grep -qE '^ +epoch +primal .* oracle_calls +test_hamming_loss +test_subset_accuracy ' "$WORK/curve.txt" &&
    [ "$(grep -cE '^ +[123] .* 0\.[0-9]+ +0\.[0-9]+ +0\.[0-9]+ +0\.[0-9]+ +0\.[0-9]+$' "$WORK/curve.txt")" -eq 3 ]
ok $? "strux inspect shows the held-out columns of the curve, aligned"
diag <"$WORK/curve.txt"

# ---- output.eval_every: held-out scoring every k epochs and after the last; 0: the last only
"$STRUX" train configs/emotions.ini --quiet --set solver.epochs=5 --set output.eval_every=2 \
    --set output.model="$WORK/e5.h5" --set output.metrics="$WORK/e5.jsonl" >/dev/null 2>&1 &&
    "$STRUX" train configs/emotions.ini --quiet --set solver.epochs=5 --set output.eval_every=0 \
        --set output.model="$WORK/e0.h5" --set output.metrics="$WORK/e0.jsonl" >/dev/null 2>&1 &&
    "$STRUX" train configs/emotions.ini --quiet --set solver.epochs=2 --set output.metrics= \
        --set output.model="$WORK/e2.h5" >/dev/null 2>&1 &&
    "$STRUX" eval --model "$WORK/e2.h5" --data "$E/emotions_test.svm.gz" >"$WORK/e2.json" 2>/dev/null
ok $? "emotions (data.scale = maxabs) with eval_every 2 and 0, and a 2-epoch model scored by eval"
$PY - "$WORK" <<'EOF' 2>&1 | diag
import json, sys
w = sys.argv[1]
e5 = [json.loads(l) for l in open(w + "/e5.jsonl")]
e0 = [json.loads(l) for l in open(w + "/e0.jsonl")]
scored5 = [r["epoch"] for r in e5 if r["test_hamming_loss"] is not None]
scored0 = [r["epoch"] for r in e0 if r["test_hamming_loss"] is not None]
assert scored5 == [2, 4, 5], scored5
assert scored0 == [5], scored0
ref = json.load(open(w + "/e2.json"))
for m in ("hamming_loss", "micro_f1", "macro_f1"):
    assert abs(e5[1]["test_" + m] - ref[m]) <= 5e-7, (m, e5[1], ref)  # printed to 6 places
EOF
ok ${PIPESTATUS[0]} "scored at epochs 2, 4, 5 (eval_every 2) and 5 (eval_every 0); epoch 2's values equal 'strux eval' of the model saved after 2 epochs"

# ---- mpirun: rank 0 alone prints the epoch lines
$MPIRUN -np 2 "$STRUX" train configs/yeast.ini --set solver.epochs=2 --set solver.tol=0 --set output.metrics= \
    --set output.model="$WORK/y2.h5" >/dev/null 2>"$WORK/np2.err"
ok $? "train at -np 2"
[ "$(grep -c ' epoch [0-9]*/2 ' "$WORK/np2.err")" -eq 2 ] && ! grep -q 'r1\] epoch' "$WORK/np2.err"
ok $? "at -np 2 the epoch lines come once, from rank 0"

# ---- --quiet and --log-json on every subcommand
"$STRUX" train configs/yeast.ini --quiet --set solver.epochs=2 --set solver.tol=0 --set output.metrics= \
    --set output.model="$WORK/q.h5" >/dev/null 2>"$WORK/q.err" &&
    "$STRUX" predict --quiet --model "$WORK/q.h5" --data "$D/yeast_test.svm.gz" \
        --out "$WORK/q.txt" 2>>"$WORK/q.err" &&
    "$STRUX" eval --model "$WORK/q.h5" --data "$D/yeast_test.svm.gz" --quiet >/dev/null 2>>"$WORK/q.err" &&
    "$STRUX" convert --quiet tests/fixtures/good.svm "$WORK/g.h5" 2>>"$WORK/q.err"
ok $? "train, predict, eval and convert accept --quiet"
[ ! -s "$WORK/q.err" ]
ok $? "--quiet prints nothing on stderr when all goes well"
"$STRUX" --log-json train configs/yeast.ini --set solver.epochs=2 --set output.metrics= \
    --set output.model="$WORK/j.h5" >/dev/null 2>"$WORK/j.err" &&
    "$STRUX" predict --model "$WORK/j.h5" --data "$D/yeast_test.svm.gz" --out "$WORK/j.txt" \
        --log-json 2>>"$WORK/j.err" &&
    "$STRUX" convert tests/fixtures/good.svm "$WORK/g2.h5" --log-json 2>>"$WORK/j.err"
ok $? "--log-json before or after the subcommand"
"$STRUX" inspect "$WORK/none.h5" --log-json >/dev/null 2>"$WORK/jfail.err"
rc=$?
$PY - "$WORK/j.err" "$WORK/jfail.err" <<'EOF' 2>&1 | diag
import json, re, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert all(set(d) == {"rank", "level", "msg"} for d in lines), lines
msgs = [d["msg"] for d in lines]
assert sum(m.startswith("epoch ") for m in msgs) == 2, msgs
assert any(re.match(r"\d+ predictions \((deterministic|randomised)\) written to ", m) for m in msgs) and any("-> " in m for m in msgs), msgs
fail = [json.loads(l) for l in open(sys.argv[2])]
assert len(fail) == 1 and fail[0]["level"] == "error" and "none.h5" in fail[0]["msg"], fail
EOF
[ ${PIPESTATUS[0]} -eq 0 ] && [ $rc -eq 3 ]
ok $? "--log-json: every stderr line is one JSON object (epoch lines, info, the error), exit code kept"

# ---- a terminal (tmux): the bar appears within an epoch and is erased before the epoch line
if command -v tmux >/dev/null; then
    cmd="$STRUX train configs/yeast.ini --set data.train=$B/bibtex_train.svm.gz --set data.test= \
--set data.label_names= --set solver.type=sgd --set solver.epochs=2 --set solver.batch=1 --set output.metrics= \
--set output.model=$WORK/b.h5; echo STRUX-EXIT-\$?; sleep 60"
    tmux -L "$TMUX_SOCK" new-session -d -s p -x 120 -y 30 "$cmd"
    seen=""
    for _ in $(seq 1 1500); do # up to 150 s: the sanitizer build trains far slower
        screen=$(tmux -L "$TMUX_SOCK" capture-pane -p -t p 2>/dev/null)
        if [ -z "$seen" ] && echo "$screen" | grep -qE '^epoch 1/2 \[#*\.*\] +[0-9]+%  [0-9]+/4880  eta '; then
            seen=$(echo "$screen" | grep -E '^epoch 1/2 \[')
        fi
        echo "$screen" | grep -q 'STRUX-EXIT-' && break
        sleep 0.1
    done
    [ -n "$seen" ]
    ok $? "on a terminal a live bar shows mid-epoch (tmux capture-pane)"
    echo "bar seen: $seen" | diag
    echo "$screen" | grep -q 'STRUX-EXIT-0' &&
        [ "$(echo "$screen" | grep -cE '^\[strux r0\] epoch [12]/2  objective ')" -eq 2 ] &&
        ! echo "$screen" | grep -qE '\[#*\.+\]|\[#+\.*\]'
    ok $? "after training the screen holds the two epoch lines and no leftover bar"
    echo "$screen" | grep -v '^$' | tail -n 6 | diag
    tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
else
    ok 1 "tmux is missing (scripts/install-deps installs it)"
fi
