# tests/e2e/file_safety.sh - files that must not crash strux or be destroyed by it (issue 18), at
# mpirun -np 2: model files whose attributes disagree with their arrays (n_rows, dim, n_extra,
# label_names, a 2-D or short curve column, 2^32+14 rows that int32 would read as 14), NaN/Inf
# weights, arrays where one value belongs, bad checkpoints and HDF5 datasets (2^32+918 offsets read as 918, a dim beyond int32)
# end with exit 3 and a message naming the file, the attribute or dataset and both sizes; outputs
# that are an input, a device, a FIFO, a directory or under a file end with exit 4 before anything
# is read; a full disk (a 64 KiB tmpfs, and always an LD_PRELOAD shim) is "disk full writing PATH
# (needs about N MB)", exit 4, for predictions, models, checkpoints and datasets; a metrics log
# held by another run is refused; duplicate INI keys and --set without '=' are config errors. Every
# failing case leaves no output and no .tmp. file behind.
. tests/common/tap.sh
D=$STRUX_DATA/yeast
TEST=$D/yeast_test.svm.gz
NP=($MPIRUN -np 2)

# no_leftovers DESCRIPTION DIR [FILE...]: no *.tmp.* under DIR and none of the FILEs exist
no_leftovers() {
    local desc=$1 dir=$2
    shift 2
    local left
    left=$(find "$dir" -name '*.tmp.*' 2>/dev/null)
    for f in "$@"; do [ -e "$f" ] && left="$left $f"; done
    [ -z "$left" ]
    ok $? "$desc: no output or temporary file left"
    [ -z "$left" ] || echo "$left" | diag
}

# ---- a valid model and checkpoint (2 epochs, np 2) to break
expect_ok "train yeast at np 2 with a checkpoint" -- "${NP[@]}" "$STRUX" train configs/yeast.ini \
    --quiet --set solver.epochs=2 --set output.metrics= --set output.model="$WORK/m.h5" \
    --set output.checkpoint_every=1 --set output.eval_every=0
[ -f "$WORK/m.h5" ] && [ -f "$WORK/m.ckpt.h5" ]
ok $? "the model and its checkpoint exist"

# bad_model NAME PYTHON: copy m.h5 (or m.ckpt.h5 for names ckpt_*) to NAME.h5, apply PYTHON to f
bad_model() {
    local src=$WORK/m.h5
    case $1 in ckpt_*) src=$WORK/m.ckpt.h5 ;; esac
    cp "$src" "$WORK/$1.h5"
    $PY - "$WORK/$1.h5" <<PY 2>&1 | diag
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r+")
$2
f.close()
PY
}

# model_fails NAME PATTERN DESCRIPTION: predict at np 2 with NAME.h5 ends with exit 3 and
# PATTERN, writes no predictions; inspect says the same
model_fails() {
    local out=$WORK/pred_$1/p.txt
    expect_fail 3 "$2" "$3 (predict, np 2)" -- timeout 120 "${NP[@]}" "$STRUX" predict \
        --model "$WORK/$1.h5" --data "$TEST" --out "$out"
    no_leftovers "$3" "$WORK" "$out"
    expect_fail 3 "$2" "$3 (inspect)" -- timeout 60 "$STRUX" inspect "$WORK/$1.h5"
}

bad_model rows_small 'f.attrs["n_rows"] = np.int64(4)'
model_fails rows_small "rows_small.h5: attribute n_rows = 4 but dataset 'weights' has 14 rows" \
    "n_rows smaller than /weights (was a heap overflow, exit 139)"
bad_model rows_large 'f.attrs["n_rows"] = np.int64(200)'
model_fails rows_large "attribute n_rows = 200 but dataset 'weights' has 14 rows" \
    "n_rows larger than /weights"
bad_model dim_large 'f.attrs["dim"] = np.int64(500)'
model_fails dim_large "dim_large.h5: attribute dim = 500 but dataset 'weights' has 104 columns" \
    "dim larger than /weights (was accepted)"
bad_model extra 'f.attrs["n_extra"] = np.int64(5)'
model_fails extra "attribute n_extra = 5 but dataset 'extra' has 0 entries" \
    "n_extra disagreeing with /extra"
bad_model huge_rows '
f.attrs["n_rows"] = np.int64(2**32 + 14)
del f["weights"]
f.create_dataset("weights", shape=(2**32 + 14, 104), dtype="f8", chunks=(1024, 104))'
model_fails huge_rows "attribute n_rows = 4294967310 is outside \[0, 2147483647\]" \
    "2^32+14 rows (int32 would read 14)"
bad_model nan_w 'w = f["weights"][:]; w[3, 7] = np.nan; f["weights"][...] = w'
model_fails nan_w "nan_w.h5: dataset 'weights' holds a non-finite value \(nan\) at row 3, column 7" \
    "NaN weight (was accepted)"
bad_model inf_w 'w = f["weights"][:]; w[13, 103] = -np.inf; f["weights"][...] = w'
model_fails inf_w "non-finite value \(-inf\) at row 13, column 103" "-Inf weight"
bad_model curve_2d '
n = f["training/primal"].shape[0]
del f["training/primal"]
f["training/primal"] = np.zeros((n, 3))'
model_fails curve_2d "curve_2d.h5: dataset 'training/primal' has 2 dimensions, expected 1" \
    "2-D training-curve column (was abort, exit 134/135)"
bad_model curve_short '
del f["training/primal"]
f["training/primal"] = np.zeros(1)'
model_fails curve_short "column 'training/primal' has 1 entries but 'training/epoch' has 2" \
    "training-curve columns of different lengths"
bad_model attr_array 'f.attrs["n_rows"] = np.arange(1000, dtype=np.int64)'
model_fails attr_array "attribute 'n_rows' holds 1000 values where one belongs" \
    "an array where the n_rows attribute belongs (was a stack overflow)"
bad_model config_array '
del f["config"]
f.create_dataset("config", data=["[task]"] * 100, dtype=h5py.string_dtype())'
model_fails config_array "dataset 'config' holds 100 values where one belongs" \
    "an array of strings where the config belongs"
bad_model names 'f.attrs["n_labels"] = np.int64(15)'
model_fails names "dataset 'label_names' holds 14 strings but attribute n_labels = 15" \
    "label_names disagreeing with n_labels"

# ---- strings: strux writes them fixed-length in a checksummed file format; the variable-length
# strings of files written before (tests/fixtures/model_v1_vlen.h5, by the strux of 5dca02a) are
# read without HDF5 1.10's global heap code, which crashed or hung on a corrupt heap
# (the expected inspect output is that strux's with two later additions: the weights line's
# ", stored as double" and the non-zeros line)
$PY - "$WORK/m.h5" >"$WORK/strings.txt" 2>&1 <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
def variable(dt):
    info = h5py.check_string_dtype(dt)
    return info is not None and info.length is None
names = [k for k in f.attrs if variable(f.attrs.get_id(k).dtype)]
names += [k for k in ("config", "label_names") if k in f and variable(f[k].dtype)]
print("variable-length:", " ".join(names) or "none")
print("superblock version:", open(sys.argv[1], "rb").read(9)[8])
PY
grep -qx "variable-length: none" "$WORK/strings.txt"
ok $? "a new model's string attributes, config and label names are fixed-length"
grep -qE "^superblock version: [2-9]" "$WORK/strings.txt"
ok $? "a new model is written in the 1.8 format or later (checksummed superblock and headers)"
diag <"$WORK/strings.txt"
OLD=tests/fixtures/model_v1_vlen.h5
"$STRUX" inspect "$OLD" >"$WORK/old.inspect" 2>"$WORK/err"
cmp -s "$WORK/old.inspect" tests/fixtures/model_v1_vlen.inspect
ok $? "a model with variable-length strings (strux 5dca02a) reads as that strux read it (inspect)"
diff tests/fixtures/model_v1_vlen.inspect "$WORK/old.inspect" | head -n 10 | diag
"$STRUX" eval --model "$OLD" --data tests/fixtures/good.svm >"$WORK/old.eval" 2>"$WORK/err"
cmp -s "$WORK/old.eval" tests/fixtures/model_v1_vlen.eval
ok $? "... and evaluates as it did (eval)"
# break_heap NAME OFFSET VALUE: a copy of the old model with the 8-byte field at OFFSET bytes after
# its global heap collection's signature set to VALUE (8: collection size; 16+8: size of the
# first object; 16: its index, 2 bytes)
break_heap() {
    $PY - "$OLD" "$WORK/$1.h5" "$2" "$3" <<'PY' 2>&1 | diag
import sys
src, dst, off, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
b = bytearray(open(src, "rb").read())
at = b.index(b"GCOL") + off
width = 2 if off == 16 else 8
b[at:at + width] = value.to_bytes(width, "little")
open(dst, "wb").write(b)
PY
}
break_heap heap_size 8 $((1 << 40))
model_fails heap_size "heap_size.h5: string 'format' \(a variable-length string, heap collection at byte [0-9]+, object [0-9]+\): the collection's size 1099511627776 exceeds the [0-9]+ bytes left in the file: the file is corrupt" \
    "a variable-length string whose heap collection is larger than the file"
break_heap heap_object 24 $((1 << 62))
model_fails heap_object "object 1 of 4611686018427387904 bytes overruns the collection: the file is corrupt" \
    "a variable-length string whose heap object overruns its collection"
break_heap heap_index 16 7
model_fails heap_index "the collection has no such object: the file is corrupt" \
    "a variable-length string whose heap object is missing"

# ---- checkpoints: the read side of --resume
resume_fails() { # NAME PATTERN DESCRIPTION
    expect_fail 3 "$2" "$3 (resume, np 2)" -- timeout 120 "${NP[@]}" "$STRUX" train \
        configs/yeast.ini --quiet --resume "$WORK/$1.h5" --set solver.epochs=3 \
        --set output.metrics= --set output.model="$WORK/resumed_$1.h5" --set output.eval_every=0
    no_leftovers "$3" "$WORK" "$WORK/resumed_$1.h5"
}
# (without data.scale the checkpoint's training-space weights are its /weights: stored once)
bad_model ckpt_nan 'w = f["weights"][:]; w[0, 5] = np.nan; f["weights"][...] = w'
resume_fails ckpt_nan "dataset 'weights' holds a non-finite value \(nan\) at row 0, column 5" \
    "checkpoint with a NaN training-space weight"
bad_model ckpt_short '
w = f["weights"][:]
del f["weights"]
f["weights"] = w[:, :-10]'
resume_fails ckpt_short "attribute dim = 104 but dataset 'weights' has 94 columns" \
    "checkpoint weights shorter than the model"
bad_model ckpt_ranks 'f["checkpoint"].attrs["n_ranks"] = np.int64(-3)'
resume_fails ckpt_ranks "attribute checkpoint/n_ranks = -3 is outside" "checkpoint n_ranks < 1"
bad_model ckpt_rows 'f.attrs["n_rows"] = np.int64(4)'
resume_fails ckpt_rows "attribute n_rows = 4 but dataset 'weights' has 14 rows" \
    "checkpoint whose model part disagrees with its attributes"

# ---- the HDF5 dataset container
expect_ok "convert yeast test to HDF5" -- "$STRUX" convert "$TEST" "$WORK/yt.h5"
bad_data() { # NAME PYTHON
    cp "$WORK/yt.h5" "$WORK/$1.h5"
    $PY - "$WORK/$1.h5" <<PY 2>&1 | diag
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r+")
$2
f.close()
PY
}
data_fails() { # NAME PATTERN DESCRIPTION
    expect_fail 3 "$2" "$3 (eval, np 2)" -- timeout 120 "${NP[@]}" "$STRUX" eval \
        --model "$WORK/m.h5" --data "$WORK/$1.h5"
}
bad_data huge_indptr '
p = f["X/indptr"][:]
del f["X/indptr"]
d = f.create_dataset("X/indptr", shape=(2**32 + len(p),), dtype="i8", chunks=(4096,))
d[:len(p)] = p'
data_fails huge_indptr \
    "huge_indptr.h5: attribute n_rows = 917 but dataset 'X/indptr' has 4294968214 entries" \
    "X/indptr of 2^32+918 entries (was read as 918)"
bad_data huge_dim 'f.attrs["dim"] = np.int64(2**32 + 50)'
data_fails huge_dim "huge_dim.h5: attribute dim = 4294967346 is outside \[0, 2147483645\]" \
    "a dim beyond int32 (was read as 50)"
bad_data short_data '
v = f["X/data"][:]
del f["X/data"]
f["X/data"] = v[:-1]'
data_fails short_data "dataset 'X/data' has [0-9]+ entries but 'X/indices' has [0-9]+" \
    "X/data shorter than X/indices"
bad_data y_rows '
p = f["Y/indptr"][:]
del f["Y/indptr"]
f["Y/indptr"] = p[:-1]'
data_fails y_rows "attribute n_rows = 917 but dataset 'Y/indptr' has 917 entries" \
    "Y/indptr one short"

# ---- output paths: refused with exit 4 before anything is read or written
cp "$D/yeast_test.svm.gz" "$WORK/t.svm.gz"
sum_before=$(md5sum "$WORK/t.svm.gz" "$WORK/m.h5")
predict_out_fails() { # OUT PATTERN DESCRIPTION
    expect_fail 4 "$2" "$3" -- timeout 60 "${NP[@]}" "$STRUX" predict --model "$WORK/m.h5" \
        --data "$WORK/t.svm.gz" --out "$1"
}
# a private character device: a strux that still wrote there as root would rename its file over
# the device node, which must not be the system's /dev/null (a non-root run cannot replace it)
CHR=/dev/null
mknod -m 666 "$WORK/null" c 1 3 2>/dev/null && CHR=$WORK/null
[ "$CHR" != /dev/null ] || [ "$(id -u)" -ne 0 ]
ok $? "the character device of the test is private ($CHR)"
if [ "$CHR" != /dev/null ] || [ "$(id -u)" -ne 0 ]; then
    predict_out_fails "$CHR" "$CHR: the output is a character device" \
        "predict --out a character device (was exit 0, replacing the device node)"
    [ -c "$CHR" ]
    ok $? "the character device is still one"
fi
predict_out_fails "$WORK/t.svm.gz" "the output is the input file .*t.svm.gz" \
    "predict --out the --data file"
ln -s "$WORK/m.h5" "$WORK/model_link"
predict_out_fails "$WORK/model_link" "the output is the input file .*m.h5" \
    "predict --out a symlink to the model"
mkfifo "$WORK/fifo"
predict_out_fails "$WORK/fifo" "the output is a FIFO" "predict --out a FIFO"
mkdir "$WORK/adir"
predict_out_fails "$WORK/adir" "the output is an existing directory" "predict --out a directory"
predict_out_fails "$WORK/t.svm.gz/sub/p.txt" "exists and is not a directory" \
    "predict --out under a regular file"
[ "$(md5sum "$WORK/t.svm.gz" "$WORK/m.h5")" = "$sum_before" ] && [ -p "$WORK/fifo" ] &&
    [ -d "$WORK/adir" ] && [ -z "$(ls -A "$WORK/adir")" ]
ok $? "the inputs, the FIFO and the directory are untouched"
no_leftovers "refused outputs" "$WORK"
expect_ok "predict into directories still to be made" -- "${NP[@]}" "$STRUX" predict \
    --model "$WORK/m.h5" --data "$WORK/t.svm.gz" --out "$WORK/new/dirs/p.txt"
[ "$(wc -l <"$WORK/new/dirs/p.txt")" -eq 917 ]
ok $? "the predictions are complete"

# ---- a full disk: a 64 KiB tmpfs when this test may mount one, and always the ENOSPC shim
full_cases() { # DESCRIPTION-SUFFIX DIR LAUNCHER-PREFIX...
    local sfx=$1 dir=$2
    shift 2
    expect_fail 4 "disk full writing $dir/p.txt \(needs about [0-9.]+ MB\)" \
        "predict on a full disk $sfx" -- timeout 120 "$@" "$STRUX" predict \
        --model "$WORK/m.h5" --data "$TEST" --out "$dir/p.txt"
    no_leftovers "predict on a full disk $sfx" "$dir" "$dir/p.txt"
    expect_fail 4 "disk full writing $dir/m.h5 \(needs about [0-9.]+ MB\)" \
        "train's model on a full disk $sfx (was a segfault in HDF5's exit handler)" -- \
        timeout 120 "$@" "$STRUX" train configs/yeast.ini --quiet --set solver.epochs=1 \
        --set output.metrics= --set output.model="$dir/m.h5" --set output.eval_every=0
    no_leftovers "train's model on a full disk $sfx" "$dir" "$dir/m.h5"
    expect_fail 4 "disk full writing $dir/c.ckpt.h5 \(needs about [0-9.]+ MB\)" \
        "a checkpoint on a full disk $sfx" -- timeout 120 "$@" "$STRUX" train configs/yeast.ini \
        --quiet --set solver.epochs=2 --set output.metrics= --set output.model="$WORK/unused.h5" \
        --set output.checkpoint="$dir/c.ckpt.h5" --set output.checkpoint_every=1 \
        --set output.eval_every=0
    no_leftovers "a checkpoint on a full disk $sfx" "$dir" "$dir/c.ckpt.h5"
}
mkdir -p "$WORK/full"
if mount -t tmpfs -o size=64k tmpfs "$WORK/full" 2>/dev/null; then
    trap 'umount "$WORK/full" 2>/dev/null; rm -rf "$WORK"' EXIT
    # leave about 4 KiB: less than any output below needs
    dd if=/dev/zero of="$WORK/full/filler" bs=4k count=15 2>/dev/null
    full_cases "(tmpfs)" "$WORK/full" "${NP[@]}"
    # the metrics log (stdio, whose writes the ENOSPC shim cannot see: tmpfs only)
    expect_fail 4 "disk full writing $WORK/full/log.jsonl \(needs about [0-9.]+ MB\)" \
        "the metrics log on a full disk (tmpfs): the run ends on every rank" -- timeout 120 \
        "${NP[@]}" "$STRUX" train configs/yeast.ini --quiet --set solver.type=sgd \
        --set solver.epochs=40 --set output.metrics="$WORK/full/log.jsonl" \
        --set output.model="$WORK/unused.h5" --set output.eval_every=0
    rm -f "$WORK/full/log.jsonl" # a log is appended in place: what reached the disk stays
    expect_fail 4 "disk full writing $WORK/full/yt.h5" "convert on a full disk (tmpfs)" -- \
        "$STRUX" convert "$TEST" "$WORK/full/yt.h5"
    no_leftovers "convert on a full disk (tmpfs)" "$WORK/full" "$WORK/full/yt.h5"
    umount "$WORK/full"
else
    echo "ok $((TAP_N += 1)) - full disk on a tmpfs # SKIP cannot mount a tmpfs here"
fi
SHIM=$WORK/enospc.so
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -o "$SHIM" tests/common/preload/enospc.c -ldl \
    2>&1 | diag
ok ${PIPESTATUS[0]} "the ENOSPC shim builds"
mkdir -p "$WORK/shim"
# (under make check-asan the shim is preloaded before the sanitizer runtime: tell ASan that is
# intended)
full_cases "(ENOSPC shim)" "$WORK/shim" "${NP[@]}" -x LD_PRELOAD="$SHIM" -x STRUX_ENOSPC_AFTER=0 \
    -x ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# ---- the metrics log is exclusive
printf 'KEEP\n' >"$WORK/held.jsonl"
flock "$WORK/held.jsonl" sleep 60 &
holder=$!
sleep 0.5
expect_fail 4 "held.jsonl: the metrics log is in use by another run" \
    "a metrics log locked by another run is refused" -- timeout 120 "${NP[@]}" "$STRUX" train \
    configs/yeast.ini --quiet --set solver.epochs=1 --set output.metrics="$WORK/held.jsonl" \
    --set output.model="$WORK/held.h5" --set output.eval_every=0
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
[ "$(cat "$WORK/held.jsonl")" = KEEP ]
ok $? "the other run's log is not truncated"
# two real runs on one log: the second fails while the first is writing; the first, then stopped
# by SIGUSR1 (mpirun forwards it; the run checkpoints and exits 0), leaves a log that parses
"${NP[@]}" "$STRUX" train configs/yeast.ini --quiet --set solver.epochs=100000 \
    --set solver.type=sgd --set output.metrics="$WORK/two.jsonl" --set output.model="$WORK/two_a.h5" \
    --set output.eval_every=0 >/dev/null 2>"$WORK/two_a.err" &
first=$!
for _ in $(seq 600); do
    [ -s "$WORK/two.jsonl" ] && break
    sleep 0.05
done
expect_fail 4 "two.jsonl: the metrics log is in use by another run" \
    "a second run on the same metrics log fails" -- timeout 120 "${NP[@]}" "$STRUX" train \
    configs/yeast.ini --quiet --set solver.epochs=2 --set output.metrics="$WORK/two.jsonl" \
    --set output.model="$WORK/two_b.h5" --set output.eval_every=0
kill -USR1 "$first"
wait "$first"
ok $? "the first run stops cleanly on SIGUSR1"
$PY -c "
import json
rows = [json.loads(l) for l in open('$WORK/two.jsonl')]
assert len(rows) >= 1 and [r['epoch'] for r in rows] == list(range(1, len(rows) + 1)), rows
" 2>&1 | diag
ok ${PIPESTATUS[0]} "the first run's metrics log is whole: valid JSON lines, epochs 1, 2, ... in order"
[ ! -e "$WORK/two_b.h5" ]
ok $? "the refused run wrote no model"

# ---- config: duplicate keys, --set without '='
printf '[data]\ntrain = %s/yeast_train.svm.gz\n[solver]\nlambda = 0.1\nepochs = 2\n[output]\nmodel = %s/dup.h5\n[solver]\nlambda = 0.2\n' \
    "$D" "$WORK" >"$WORK/dup.ini"
expect_fail 2 "dup.ini:9: duplicate key solver.lambda, already set at .*dup.ini:4" \
    "a key set twice in one file names both lines" -- "${NP[@]}" "$STRUX" train "$WORK/dup.ini"
printf '[solver]\nlambda = 0.1\n  epochs = 2\n' >"$WORK/indent.ini"
expect_fail 2 "indent.ini:3: an indented line continues the value of solver.lambda" \
    "an indented line (an inih continuation) is refused" -- "$STRUX" train "$WORK/indent.ini"
expect_fail 2 "--set 'solver.lambda' has no '='" "--set without '=' names the argument" -- \
    "${NP[@]}" "$STRUX" train configs/yeast.ini --set solver.lambda
no_leftovers "config errors" "$WORK" "$WORK/dup.h5"

[ "$TAP_FAILED" -eq 0 ]
