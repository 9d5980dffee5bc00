# tests/e2e/svmhmm_errors.sh - every bad SVM-hmm input through `strux train` (chain task): the
# message names the file and line, the exit status is 3 (input error), and no model file is left
# behind; a few cases run under mpirun -np 2 (every rank ends with the reading rank's message);
# more ranks than sequences is an error, not a hang; the chain task refuses one-row-per-example
# data and a sequence file is refused by the others.
. tests/common/tap.sh
F=tests/fixtures
printf '[data]\ntrain = /dev/null\n[task]\ntype = chain\n[output]\nmodel = %s/model.h5\n' \
    "$WORK" >"$WORK/base.ini"

case_() { # np file pattern [extra --set]
    local np=$1 file=$2 pattern=$3
    shift 3
    local run="timeout 60 $MPIRUN -np $np"
    [ "$np" -eq 1 ] && run="timeout 60"
    rm -f "$WORK/model.h5" "$WORK"/model.h5.tmp.*
    expect_fail 3 "$pattern" "$file (np $np): $pattern" -- \
        $run "$STRUX" train "$WORK/base.ini" --set "data.train=$F/$file" "$@"
    [ ! -e "$WORK/model.h5" ] && ! ls "$WORK"/model.h5.tmp.* >/dev/null 2>&1
    ok $? "$file: no model file left behind"
}

case_ 2 hmm_bad_token.svmhmm "hmm_bad_token.svmhmm:2: malformed value in feature '3:abc'"
case_ 1 hmm_bad_index_zero.svmhmm "hmm_bad_index_zero.svmhmm:2: feature index 0 in '0:1.0' must be >= 1"
case_ 1 hmm_bad_order.svmhmm "hmm_bad_order.svmhmm:1: feature index 2 after 3; indices must ascend"
case_ 1 hmm_bad_duplicate.svmhmm "hmm_bad_duplicate.svmhmm:1: duplicate feature index 2"
case_ 1 hmm_bad_nan.svmhmm "hmm_bad_nan.svmhmm:2: feature 2 has a non-finite value 'nan'"
case_ 1 hmm_bad_inf.svmhmm "hmm_bad_inf.svmhmm:2: feature 2 has a non-finite value '-inf'"
case_ 2 hmm_bad_qid_order.svmhmm "hmm_bad_qid_order.svmhmm:3: qid 1 after qid 2 \(line 2\)"
case_ 1 hmm_bad_tag_zero.svmhmm "hmm_bad_tag_zero.svmhmm:2: tag 0 is out of range: SVM-hmm tags are 1-based"
case_ 1 hmm_bad_no_qid.svmhmm "hmm_bad_no_qid.svmhmm:2: expected qid:n after the tag, got .1:1."
case_ 1 hmm_bad_tag.svmhmm "hmm_bad_tag.svmhmm:2: malformed tag 'B'"
case_ 1 hmm_bad_empty_line.svmhmm "hmm_bad_empty_line.svmhmm:2: empty line"
case_ 2 hmm_bad_nul.svmhmm "hmm_bad_nul.svmhmm:3: NUL byte at column 12"
case_ 1 hmm_bad_absurd.svmhmm "hmm_bad_absurd.svmhmm:2: feature 3 has an absurd value '-7e35'"
case_ 1 hmm_good.svmhmm "hmm_good.svmhmm:4: tag 3 is out of range: the tag count is 2" --set data.n_labels=2
case_ 1 hmm_good.svmhmm "hmm_good.svmhmm:4: feature index 7 exceeds the dimension 4" --set data.dim=4
case_ 2 good.svm "good.svm: one row per example; the chain task needs sequences"
case_ 1 hmm_good.svmhmm "hmm_good.svmhmm: holds sequences; the multilabel task needs one row" \
    --set task.type=multilabel

# a sequence file cut short is an error, not fewer sequences
head -c 60 "$F/hmm_good.svmhmm.gz" >"$WORK/cut.svmhmm.gz"
rm -f "$WORK/model.h5"
expect_fail 3 "cut.svmhmm.gz: truncated or corrupt gzip stream" "a truncated .gz is an input error" \
    -- timeout 60 "$STRUX" train "$WORK/base.ini" --set "data.train=$WORK/cut.svmhmm.gz"

rm -f "$WORK/model.h5"
expect_fail 3 "2 sequences cannot be shared by 4 ranks" "4 ranks on 2 sequences: clear error" -- \
    timeout 60 $MPIRUN -np 4 "$STRUX" train "$WORK/base.ini" --set "data.train=$F/hmm_two_seqs.svmhmm"
expect_ok "3 ranks on 3 sequences train" -- timeout 60 $MPIRUN -np 3 "$STRUX" train \
    "$WORK/base.ini" --set "data.train=$F/hmm_good.svmhmm.gz" --set solver.epochs=2 --quiet
