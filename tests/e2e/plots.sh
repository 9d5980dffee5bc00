# tests/e2e/plots.sh - scripts/plot-metrics: a valid PNG (signature, IHDR size) from two real
# metrics logs; the duality-gap row appears exactly when a run reports a gap; bad input is an
# error with exit status 2.
. tests/common/tap.sh

for l in 1e-2 1e-4; do
    "$STRUX" train configs/yeast.ini --quiet --set solver.type=sgd --set solver.epochs=4 --set solver.lambda=$l \
        --set output.eval_every=2 --set output.model="$WORK/m$l.h5" \
        --set output.metrics="$WORK/lambda_$l.jsonl" >/dev/null || false
done
ok $? "two yeast runs with metrics logs"

png_size() { # prints "width height" of a PNG, or fails if the file is not one
    "$PY" - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "no PNG signature"
assert b[12:16] == b"IHDR", "no IHDR chunk"
w, h = struct.unpack(">II", b[16:24])
assert b.rstrip(b"\0")[-8:-4] == b"IEND", "no IEND chunk"
print(w, h)
EOF
}

"$PY" scripts/plot-metrics -o "$WORK/two.png" "$WORK/lambda_1e-2.jsonl" "$WORK/lambda_1e-4.jsonl" \
    2>"$WORK/err"
ok $? "plot-metrics on two files"
size=$(png_size "$WORK/two.png" 2>&1)
ok $? "the output is a PNG ($size)"
[ "$size" = "1100 700" ] && [ "$(stat -c %s "$WORK/two.png")" -gt 20000 ]
ok $? "two panel rows (objective, held-out) x two axes (time, epoch): 1100 x 700, not empty"

# a run with a duality gap (as a dual solver writes it) adds the gap row
"$PY" - "$WORK/dual.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for e in range(1, 6):
        f.write(json.dumps({"epoch": e, "primal": 1 + 1 / e, "dual": 1 - 1 / e, "gap": 2 / e,
                            "time_s": 0.1 * e, "test_hamming_loss": None}) + "\n")
EOF
"$PY" scripts/plot-metrics -o "$WORK/three.png" "$WORK/lambda_1e-2.jsonl" "$WORK/dual.jsonl" &&
    [ "$(png_size "$WORK/three.png")" = "1100 1050" ]
ok $? "a run with a gap adds the duality-gap row (1100 x 1050)"
"$PY" scripts/plot-metrics -o "$WORK/f1.png" --metric test_micro_f1 --title "yeast" \
    "$WORK/lambda_1e-2.jsonl" && png_size "$WORK/f1.png" >/dev/null
ok $? "--metric picks another held-out column"

expect_fail 2 "missing.jsonl" "a missing file is an error naming it" -- \
    "$PY" scripts/plot-metrics -o "$WORK/x.png" "$WORK/missing.jsonl"
expect_fail 2 "no values of 'test_nope'" "an absent metric is an error" -- \
    "$PY" scripts/plot-metrics -o "$WORK/x.png" --metric test_nope "$WORK/lambda_1e-2.jsonl"
printf '{"epoch": 1, "primal": 2}\nnot json\n' >"$WORK/bad.jsonl"
expect_fail 2 "bad.jsonl:2: not a JSON object" "a malformed line names file and line" -- \
    "$PY" scripts/plot-metrics -o "$WORK/x.png" "$WORK/bad.jsonl"
