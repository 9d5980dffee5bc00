# tests/e2e/layouts.sh - the weight store's kinds (model.layout × model.precision) train the same
# models: for the multilabel (sdca, sgd, slack rescaling), pairwise and chain tasks every double
# kind's model equals label_major double's (weights to 1e-9 relative, same predictions); float
# kinds on the multilabel runs: objective within 1e-5 relative of double, predictions at most
# 0.5% different. (Pairwise and chain float runs are only trained and scored: their oracles'
# argmax over many near-tied labels flips under float rounding within the first epoch, 8% apart
# after one SDCA epoch on yeast pairwise, so three epochs compare trajectories, not the
# precision.) At solver.blocks = 4,
# -np 1, 2 and 4 give the same weights per kind (1e-9 relative, float 1e-6: the float stores
# round the synced weights); output.precision = float writes float32 weights that h5dump shows
# as such and that predict reads; a resumed run in each kind ends bit-identical to the
# uninterrupted one. The sparse layout (model.layout = sparse) on yeast sdca and sgd at -np 1:
# double the same weights and predictions as label_major double, float as the float kinds; on
# bibtex (sparse features, rows of the sparse store grow from empty) sdca's weights equal
# label_major double's bit for bit; sparse double also in the -np 1/2/4 and resume checks (its
# sync moves the non-zeros: gathered, summed on rank 0 in rank order, broadcast).
. tests/common/tap.sh
D=${STRUX_DATA}
KINDS="label_major:double feature_major:double label_major:float feature_major:float"
SPARSE_KINDS="$KINDS sparse:double sparse:float"
COMMON=(--quiet --set output.eval_every=0 --set data.test= --set output.metrics=)

compare() { # compare REF.h5 OTHER.h5 REF_PRED OTHER_PRED TOL_W TOL_OBJ MAX_PRED_DIFF
    $PY - "$@" <<'PY'
import sys, h5py, numpy as np
from strux_model import Model
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
wa, wb = Model(a.filename).weights, Model(b.filename).weights
rel = np.abs(wa - wb).max() / max(np.abs(wa).max(), 1e-300)
ja, jb = a["training/primal"][-1], b["training/primal"][-1]
robj = abs(ja - jb) / abs(ja)
pa, pb = open(sys.argv[3]).read().split("\n"), open(sys.argv[4]).read().split("\n")
diff = sum(x != y for x, y in zip(pa, pb)) / max(len(pa), 1)
print(f"# weights {rel:.2e} relative, objective {robj:.2e}, predictions {100 * diff:.2f}% differ")
ok = rel <= float(sys.argv[5]) and robj <= float(sys.argv[6]) and diff <= float(sys.argv[7])
sys.exit(0 if ok and len(pa) == len(pb) else 1)
PY
}

run_kinds() { # NAME FLOAT_COMPARED(1|0) CONFIG TEST_DATA EXTRA... (kinds: RUN_KINDS or KINDS)
    local name=$1 float_cmp=$2 config=$3 test=$4
    shift 4
    for kind in ${RUN_KINDS:-$KINDS}; do
        IFS=: read -r lay prec <<<"$kind"
        "$STRUX" train $config "${COMMON[@]}" "$@" --set model.layout=$lay \
            --set model.precision=$prec --set output.model="$WORK/${name}_$lay$prec.h5" \
            2>"$WORK/err" &&
            "$STRUX" predict --model "$WORK/${name}_$lay$prec.h5" --data "$test" \
                --out "$WORK/${name}_$lay$prec.txt" 2>>"$WORK/err"
        ok $? "$name trains and predicts with model.layout = $lay, model.precision = $prec"
        [ "$kind" = label_major:double ] && continue
        [ $prec = float ] && [ $float_cmp = 0 ] && continue
        tw=1e-9 tobj=1e-9 tp=0
        [ $prec = float ] && tw=1 tobj=1e-5 tp=0.005
        compare "$WORK/${name}_label_majordouble.h5" "$WORK/${name}_$lay$prec.h5" \
            "$WORK/${name}_label_majordouble.txt" "$WORK/${name}_$lay$prec.txt" $tw $tobj $tp \
            >"$WORK/cmp"
        ok $? "$name: $lay $prec agrees with label_major double"
        diag <"$WORK/cmp"
    done
}

RUN_KINDS=$SPARSE_KINDS run_kinds yeast_sdca 1 configs/yeast.ini "$D/yeast/yeast_test.svm.gz" \
    --set solver.epochs=40 --set solver.tol=0
RUN_KINDS=$SPARSE_KINDS run_kinds yeast_sgd 1 configs/yeast.ini "$D/yeast/yeast_test.svm.gz" \
    --set solver.type=sgd --set solver.epochs=5
RUN_KINDS="label_major:double sparse:double" run_kinds bibtex_sdca 1 configs/bibtex_margin.ini \
    "$D/bibtex/bibtex_test.svm.gz" --set solver.epochs=2 --set solver.tol=0
$PY - "$WORK/bibtex_sdca_label_majordouble.h5" "$WORK/bibtex_sdca_sparsedouble.h5" <<'PY' >"$WORK/cmp"
import sys, numpy as np
from strux_model import Model
a, b = Model(sys.argv[1]).weights, Model(sys.argv[2]).weights
print(f"# {np.count_nonzero(a)} of {a.size} weights non-zero, max difference {np.abs(a - b).max()}")
sys.exit(0 if np.array_equal(a, b) else 1)
PY
ok $? "bibtex sdca: sparse double weights equal label_major double's bit for bit"
diag <"$WORK/cmp"
run_kinds yeast_slack 1 configs/yeast_slack.ini "$D/yeast/yeast_test.svm.gz" --set solver.epochs=3
run_kinds yeast_pairwise 0 configs/yeast_pairwise.ini "$D/yeast/yeast_test.svm.gz" \
    --set solver.epochs=3
O=$WORK/ocr
$PY scripts/convert-ocr --data "$STRUX_DATA/ocr_taskar" --out "$O" --max-train 150 \
    --max-test 100 >/dev/null 2>"$WORK/err"
ok $? "convert-ocr on 150 words"
run_kinds ocr 0 configs/ocr.ini "$O/ocr_test.svmhmm" --set data.train="$O/ocr_train.svmhmm" \
    --set data.label_names="$O/ocr.tags" --set task.tags="$O/ocr.tags" --set solver.epochs=3

# rank-count invariance per kind at solver.blocks = 4
for kind in $KINDS sparse:double; do
    IFS=: read -r lay prec <<<"$kind"
    for np in 1 2 4; do
        $MPIRUN -np $np "$STRUX" train configs/yeast.ini "${COMMON[@]}" --set solver.type=sdca \
            --set solver.epochs=6 --set solver.tol=0 --set solver.blocks=4 \
            --set model.layout=$lay --set model.precision=$prec \
            --set output.model="$WORK/np${np}_$lay$prec.h5" 2>"$WORK/err"
        ok $? "$lay $prec at -np $np (solver.blocks = 4) trains"
    done
    tw=1e-9
    [ $prec = float ] && tw=1e-6
    for np in 2 4; do
        $PY - "$WORK/np1_$lay$prec.h5" "$WORK/np${np}_$lay$prec.h5" $tw <<'PY' >"$WORK/cmp"
import sys, numpy as np
from strux_model import Model
a = Model(sys.argv[1]).weights
b = Model(sys.argv[2]).weights
rel = np.abs(a - b).max() / np.abs(a).max()
print(f"# max relative weight difference {rel:.2e}")
sys.exit(0 if rel <= float(sys.argv[3]) else 1)
PY
        ok $? "$lay $prec: -np $np gives the -np 1 weights ($tw relative)"
        diag <"$WORK/cmp"
    done
done

# float32 weights on disk
"$STRUX" train configs/yeast.ini "${COMMON[@]}" --set solver.epochs=5 --set output.precision=float \
    --set output.model="$WORK/f32.h5" 2>"$WORK/err"
ok $? "output.precision = float trains"
h5dump -H -d /weights "$WORK/f32.h5" | grep -q "H5T_IEEE_F32LE"
ok $? "h5dump shows /weights as H5T_IEEE_F32LE"
"$STRUX" inspect "$WORK/f32.h5" | grep -q "stored as float"
ok $? "inspect names the stored type"
"$STRUX" predict --model "$WORK/f32.h5" --data "$D/yeast/yeast_test.svm.gz" --out "$WORK/f32.txt" \
    2>"$WORK/err"
ok $? "predict reads a float32 model"

# resume bit-identical per kind (sgd: row scales and kept norms travel in the checkpoint)
for kind in feature_major:double feature_major:float sparse:double; do
    IFS=: read -r lay prec <<<"$kind"
    for s in sgd sdca; do
        args=(configs/yeast.ini "${COMMON[@]}" --set solver.type=$s --set solver.epochs=6
            --set model.layout=$lay --set model.precision=$prec)
        [ $s = sdca ] && args+=(--set solver.tol=0)
        rm -f "$WORK/ck.h5"
        "$STRUX" train "${args[@]}" --set output.checkpoint_every=3 \
            --set output.checkpoint="$WORK/ck.h5" --set output.model="$WORK/full.h5" \
            2>"$WORK/err" &&
            "$STRUX" train --resume "$WORK/ck.h5" --quiet --set output.model="$WORK/resumed.h5" \
                --set output.checkpoint="$WORK/ck2.h5" 2>>"$WORK/err" &&
            $PY -c "
import sys, numpy as np
from strux_model import Model
a = Model('$WORK/full.h5').weights; b = Model('$WORK/resumed.h5').weights
print('# max difference', np.abs(a - b).max())
sys.exit(0 if np.array_equal(a, b) else 1)" >>"$WORK/err"
        ok $? "$s $lay $prec: a resumed run ends bit-identical to the uninterrupted one"
        grep -v warning "$WORK/err" | diag
    done
done
