# tests/e2e/reader_errors.sh - every bad-input case through `strux train` under mpirun -np 2:
# the message names the file and line, every rank exits with status 3 (input error), and no model
# or metrics file is left behind.
. tests/common/tap.sh
F=tests/fixtures
printf '[data]\ntrain = %s\n[output]\nmodel = %s/model.h5\nmetrics = %s/m.jsonl\n' \
    /dev/null "$WORK" "$WORK" >"$WORK/base.ini"

case_() { # file pattern [extra --set]
    local file=$1 pattern=$2
    shift 2
    rm -f "$WORK/model.h5" "$WORK"/model.h5.tmp.* "$WORK/m.jsonl"
    expect_fail 3 "$pattern" "$file: $pattern" -- \
        timeout 60 $MPIRUN -np 2 "$STRUX" train "$WORK/base.ini" --set "data.train=$F/$file" "$@"
    [ ! -e "$WORK/model.h5" ] && ! ls "$WORK"/model.h5.tmp.* >/dev/null 2>&1
    ok $? "$file: no model file left behind"
}

case_ bad_token.svm "bad_token.svm:2: malformed value in feature '3:abc'"
case_ bad_index_zero.svm "bad_index_zero.svm:2: feature index 0 in '0:1.0' must be >= 1"
case_ bad_index_negative.svm "bad_index_negative.svm:1: feature index -2"
case_ bad_order.svm "bad_order.svm:3: feature index 2 after 3; indices must ascend"
case_ bad_duplicate.svm "bad_duplicate.svm:1: duplicate feature index 2"
case_ bad_nan.svm "bad_nan.svm:2: feature 2 has a non-finite value 'nan'"
case_ bad_inf.svm "bad_inf.svm:2: feature 2 has a non-finite value '-inf'"
case_ empty.svm "empty.svm: no examples"
case_ bad_label.svm "bad_label.svm:2: malformed label list 'a,b'"
case_ bad_label_range.svm "bad_label_range.svm:3: label 5 is out of range: the label count is 2"
case_ bad_header_count.svm "bad_header_count.svm:1: header announces 3 examples"
case_ no-such-file.svm "no-such-file.svm: cannot open for reading"
case_ bad_nul.svm "bad_nul.svm:2: NUL byte at column 6"
case_ bad_absurd.svm "bad_absurd.svm:2: feature 2 has an absurd value '5e30'"

# a gzip file cut short is an error naming the compressed byte, not a shorter data set
head -c 40 "$F/good.svm.gz" >"$WORK/cut.svm.gz"
expect_fail 3 "cut.svm.gz: truncated or corrupt gzip stream: zlib stopped at compressed byte 40 of 40" \
    "a truncated .gz is an input error" -- \
    timeout 60 $MPIRUN -np 2 "$STRUX" train "$WORK/base.ini" --set "data.train=$WORK/cut.svm.gz"
# a directory is a file error (exit 4)
expect_fail 4 "$WORK: is a directory" "a directory as data is a file error" -- \
    timeout 60 $MPIRUN -np 2 "$STRUX" train "$WORK/base.ini" --set "data.train=$WORK"
case_ good.svm "good.svm:1: label 2 is out of range: the label count is 2" --set data.n_labels=2

# more ranks than examples: an error, not a hang
rm -f "$WORK/model.h5"
expect_fail 3 "2 examples cannot be shared by 4 ranks" "4 ranks on 2 examples: clear error" -- \
    timeout 60 $MPIRUN -np 4 "$STRUX" train "$WORK/base.ini" --set "data.train=$F/two_rows.svm"

# a label beyond the model's label count in held-out data is an error; features beyond it are not
cat >"$WORK/train.ini" <<INI
[data]
train = $F/good.svm
bias = 0
[solver]
epochs = 2
[output]
model = $WORK/small.h5
INI
expect_ok "train on a 3-label fixture" -- "$STRUX" train "$WORK/train.ini" --quiet
printf '0 1:1 9:2 12:1\n1 2:1\n' >"$WORK/wide.svm"
expect_fail 3 "wide.svm:1: feature index 9 exceeds the dimension 7 of the model $WORK/small.h5 \\(its training data's features\\): the data is of another feature space" \
    "eval: a feature index above the model's dimension is refused with its line (was dropped)" -- \
    $MPIRUN -np 2 "$STRUX" eval --model "$WORK/small.h5" --data "$WORK/wide.svm"
expect_fail 3 "wide.svm:1: feature index 9 exceeds the dimension 7 of the model" \
    "predict: likewise, and writes nothing" -- \
    "$STRUX" predict --model "$WORK/small.h5" --data "$WORK/wide.svm" --out "$WORK/wide.pred"
[ ! -e "$WORK/wide.pred" ]
ok $? "predict: no predictions file"
printf '0 1:1 7:1\n1 2:1\n' >"$WORK/fits.svm" # index 7 = the model's last feature (bias 0)
expect_ok "eval: data whose largest index is the model's dimension is scored" -- \
    "$STRUX" eval --model "$WORK/small.h5" --data "$WORK/fits.svm"
! grep -q "zero weight in every row" "$WORK/err"
ok $? "eval: no unseen-feature warning when every feature of the data has a weight"
# features inside the model's dimension that training never saw (data.dim = 10 over good.svm's
# features 1..7: columns 8-10 are zero in every weight row): scored, with one warning that counts
# them, summed over the ranks' shards (the entries of features 8 and 9 are on both rows)
expect_ok "train with data.dim = 10 over features 1..7" -- \
    "$STRUX" train "$WORK/train.ini" --quiet --set data.dim=10 --set output.model="$WORK/dim10.h5"
printf '0 1:1 8:1 9:0.5\n1 2:1 8:2\n' >"$WORK/unseen.svm"
for np in 1 2; do
    expect_ok "eval: features unseen in training are scored, np $np" -- \
        $MPIRUN -np $np "$STRUX" eval --model "$WORK/dim10.h5" --data "$WORK/unseen.svm"
    n=$(grep -c "unseen.svm: 2 features (the first is feature 8) have a zero weight in every row of the model: they were unseen in training and do not change the scores (3 entries of the data)" "$WORK/err")
    [ "$n" -eq 1 ]
    ok $? "eval: one warning with the count of unseen features and their entries, np $np (got $n)"
    grep -q '^{' "$WORK/out"
    ok $? "eval: the metrics are printed, np $np"
done
expect_ok "predict: likewise scored" -- "$STRUX" predict --model "$WORK/dim10.h5" \
    --data "$WORK/unseen.svm" --out "$WORK/unseen.pred"
grep -q "2 features (the first is feature 8) have a zero weight in every row" "$WORK/err" &&
    [ "$(wc -l <"$WORK/unseen.pred")" -eq 2 ]
ok $? "predict: the warning, and a prediction per example"
expect_ok "eval: data of the seen features only" -- \
    "$STRUX" eval --model "$WORK/dim10.h5" --data "$WORK/fits.svm"
! grep -q "zero weight in every row" "$WORK/err"
ok $? "eval: no warning without unseen features"
expect_ok "train: data.test's features unseen in training are dropped, with a warning" -- \
    "$STRUX" train "$WORK/train.ini" --quiet --set data.test="$WORK/wide.svm"
grep -q "2 feature entries have an index above the model's 7 features and were ignored" "$WORK/err"
ok $? "the ignored features are counted in the log"
# another data set without a header whose label ids fit the model's: scene (6 labels, 294
# features) on a yeast model (14 labels, 103 features + the data.bias column 104)
Y=$STRUX_DATA/yeast
expect_ok "train yeast (1 epoch)" -- "$STRUX" train configs/yeast.ini --quiet \
    --set solver.epochs=1 --set data.test= --set output.metrics= --set output.model="$WORK/yeast.h5"
for np in 1 2; do
    expect_fail 3 "scene_test.svm.gz:1: feature index 104 exceeds the dimension 103 of the model $WORK/yeast.h5" \
        "eval of scene data on a yeast model is refused, np $np (was scored silently)" -- \
        timeout 120 $MPIRUN -np $np "$STRUX" eval --model "$WORK/yeast.h5" \
        --data "$STRUX_DATA/scene/scene_test.svm.gz"
done
expect_ok "eval of yeast's own test data on it still runs" -- \
    "$STRUX" eval --model "$WORK/yeast.h5" --data "$Y/yeast_test.svm.gz"
printf '0 1:1\n3 2:1\n' >"$WORK/badlab.svm"
expect_fail 3 "badlab.svm:2: label 3 is out of range: the label count is 3" \
    "held-out label above the label count is an error" -- \
    $MPIRUN -np 2 "$STRUX" eval --model "$WORK/small.h5" --data "$WORK/badlab.svm"
