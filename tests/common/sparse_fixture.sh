# tests/common/sparse_fixture.sh - the synthetic set of the sparse-weight scripts
# (tests/e2e/sparse.sh, share.sh, active_sets.sh; sourced after tap.sh): writes $WORK/d.h5, 600
# rows × 3000 features × 200 labels, 10 non-zeros and 2 labels a row (seed 7), as one TAP line;
# sparse_ini prints the head of a config training it (multilabel, margin rescaling, data.bias 1),
# to which each script appends its [model], [solver] and [output] sections.
"$STRUX" gen "$WORK/d.h5" --rows 600 --features 3000 --labels 200 --nnz 10 --labels-per-row 2 \
    --seed 7 2>/dev/null
ok $? "gen writes the synthetic set"
sparse_ini() {
    printf '[data]\ntrain = %s\nbias = 1\n[task]\ntype = multilabel\n[surrogate]\ntype = margin\n' \
        "$WORK/d.h5"
}
