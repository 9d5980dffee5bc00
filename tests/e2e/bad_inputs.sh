# tests/e2e/bad_inputs.sh - the bad-input corpus (tests/bad_inputs/cases.txt) at -np 1 (a singleton
# run) and -np 2 (BAD_INPUTS_NP: the rank counts, "1 2"; make check-asan runs "1"):
# each case ends within 30 s with its exit code on every rank (each rank writes the status of its
# strux process; a rank killed by mpirun or a signal writes none and fails the case), prints the
# message fragment, and leaves {out} empty and no .tmp. file behind. Cases marked "todo" do not
# behave yet: they are reported as TODO while they fail and as a failure once they pass.
. tests/common/tap.sh
B=tests/bad_inputs
GOOD=tests/fixtures/good.svm
OUT=$WORK/out
mkdir -p "$OUT"
# tmp files are looked for where a case may write: the corpus, the generated cases, the outputs
leftovers() { find "$B" "$WORK/gen" "$OUT" "$WORK/good" -name '*.tmp.*' 2>/dev/null; ls -A "$OUT"; }

printf '[data]\ntrain = %s\n[solver]\nepochs = 2\n[output]\nmodel = %s/model.h5\nmetrics = %s/m.jsonl\n' \
    "$GOOD" "$OUT" "$OUT" >"$WORK/base.ini"

# Good model and checkpoint per rank count; their stored config writes into $OUT, so a resume that
# wrongly succeeds leaves files there. The model and checkpoint cases are made from them.
for np in 1 2; do
    mkdir -p "$WORK/good/np$np" "$WORK/gen/np$np"
    $MPIRUN -np $np "$STRUX" train "$WORK/base.ini" --quiet --set output.checkpoint_every=1 </dev/null \
        --set output.checkpoint="$OUT/model.ckpt.h5" >"$WORK/err" 2>&1 &&
        mv "$OUT/model.h5" "$OUT/model.ckpt.h5" "$WORK/good/np$np/" &&
        $PY "$B/make_h5.py" "$WORK/good/np$np/model.h5" "$WORK/good/np$np/model.ckpt.h5" \
            "$WORK/gen/np$np" >>"$WORK/err" 2>&1
    ok $? "np $np: good model and checkpoint, and the broken copies of them"
    [ -s "$WORK/err" ] && diag <"$WORK/err"
    rm -rf "${OUT:?}"/*
done

run_case() { # np file command code fragment todo
    local np=$1 file=$2 cmd=$3 code=$4 fragment=$5 todo=$6
    local path=$B/$file
    [ -e "$path" ] || [ ! -e "$WORK/gen/np$np/$file" ] || path=$WORK/gen/np$np/$file
    cmd=${cmd//\{file\}/$path}
    cmd=${cmd//\{out\}/$OUT}
    cmd=${cmd//\{base\}/$WORK/base.ini}
    cmd=${cmd//\{good\}/$GOOD}
    cmd=${cmd//\{model\}/$WORK/good/np$np/model.h5}
    rm -f "$WORK"/rc.*
    # -np 1 is a singleton run (no mpirun: faster, and how one rank is usually started)
    local launch=()
    [ "$np" -gt 1 ] && launch=($MPIRUN -np "$np")
    # shellcheck disable=SC2086 # the command is split into words on purpose
    timeout 30 "${launch[@]}" bash -c '"$@"; echo $? >"'"$WORK"'/rc.${OMPI_COMM_WORLD_RANK:-0}"' \
        rank "$STRUX" $cmd </dev/null >"$WORK/out.txt" 2>"$WORK/err"
    local rc=$? why=""
    [ "$rc" -eq 124 ] && why="timed out after 30 s; "
    for ((r = 0; r < np; r++)); do
        local got
        got=$(cat "$WORK/rc.$r" 2>/dev/null || echo none)
        [ "$got" = "$code" ] || why+="rank $r exit $got, expected $code; "
    done
    grep -qE -- "$fragment" "$WORK/err" || why+="no /$fragment/ on stderr; "
    local left
    left=$(leftovers)
    [ -z "$left" ] || why+="left behind: $(echo $left); "
    rm -rf "${OUT:?}"/*
    find "$B" "$WORK/gen" -name '*.tmp.*' -delete
    local desc="np $np: $file: strux ${cmd%% *} ends with $code"
    if [ -n "$todo" ]; then
        # not yet fixed: a failure is expected and reported; a pass means the mark must go
        if [ -n "$why" ]; then
            echo "ok $((TAP_N += 1)) - $desc # TODO ${todo#todo }"
        else
            ok 1 "$desc: passes now, remove its todo mark in cases.txt"
        fi
        return
    fi
    ok "$([ -z "$why" ] && echo 0 || echo 1)" "$desc"
    if [ -n "$why" ]; then
        echo "$why" | diag
        echo "command: strux $cmd" | diag
        grep -v '^ *at ' "$WORK/err" | head -n 8 | diag
    fi
}

for np in ${BAD_INPUTS_NP:-1 2}; do
    while IFS='|' read -r file cmd code fragment todo; do
        file=$(echo "$file" | xargs)
        [ -z "$file" ] || [ "${file:0:1}" = "#" ] && continue
        cmd=$(echo "$cmd" | sed -e 's/^ *//' -e 's/ *$//')
        fragment=$(echo "$fragment" | sed -e 's/^ *//' -e 's/ *$//')
        todo=$(echo "$todo" | sed -e 's/^ *//' -e 's/ *$//')
        run_case "$np" "$file" "$cmd" "$(echo "$code" | xargs)" "$fragment" "$todo"
    done <"$B/cases.txt"
done
