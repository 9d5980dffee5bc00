#!/usr/bin/python3
# tests/bad_inputs/make_h5.py - the model and checkpoint cases of tests/bad_inputs/cases.txt, made
# from a good model and a good checkpoint that strux wrote (binary files are not kept in the
# repository: each case is one named change, readable here). Usage: make_h5.py MODEL CKPT OUTDIR
# Writes OUTDIR/<case>.h5 for every case below.
import shutil
import sys

import h5py
import numpy as np

model, ckpt, out = sys.argv[1:4]


def case(name, src, change):
    path = f"{out}/{name}.h5"
    shutil.copyfile(src, path)
    with h5py.File(path, "r+") as f:
        change(f)


def set_attr(key, value, group="/"):
    def change(f):
        f[group].attrs[key] = value
    return change


def replace(name, data):
    def change(f):
        del f[name]
        f[name] = data
    return change


def delete(name):
    def change(f):
        del f[name]
    return change


def nan_weight(name):
    def change(f):
        w = f[name][...]
        w.flat[1] = np.nan
        f[name][...] = w
    return change


def raw(name, data):
    with open(f"{out}/{name}.h5", "wb") as f:
        f.write(data)


# ---- model files (eval / predict / inspect) ----
raw("model_text", b"hello\n")
raw("model_empty", b"")
raw("model_truncated", open(model, "rb").read()[:6000])
case("model_rows_more", model, set_attr("n_rows", np.int64(50)))       # attribute > stored rows
case("model_dim_more", model, set_attr("dim", np.int64(1000)))         # attribute > stored columns
case("model_dim_less", model, set_attr("dim", np.int64(2)))            # attribute < stored columns
case("model_rows_negative", model, set_attr("n_rows", np.int64(-3)))
case("model_extra_more", model, set_attr("n_extra", np.int64(7)))
case("model_nan_weight", model, nan_weight("weights"))
case("model_no_weights", model, delete("weights"))
case("model_weights_1d", model, replace("weights", np.zeros(24)))
case("model_format_other", model, set_attr("format", "not-strux"))
case("model_version_future", model, set_attr("format_version", np.int64(99)))
case("model_curve_2d", model, replace("training/loss", np.zeros((2, 2))))
case("model_labels_negative", model, set_attr("n_labels", np.int64(-1)))
case("model_config_bad", model, replace("config", "[solver]\nlambda = banana\n"))

# ---- checkpoints (train --resume) ----
raw("ckpt_truncated", open(ckpt, "rb").read()[:6000])
case("ckpt_no_group", ckpt, delete("checkpoint"))
case("ckpt_examples_more", ckpt, set_attr("n_examples", np.int64(999), "checkpoint"))
case("ckpt_ranks_zero", ckpt, set_attr("n_ranks", np.int64(0), "checkpoint"))
case("ckpt_epoch_negative", ckpt, set_attr("epoch", np.int64(-5), "checkpoint"))
case("ckpt_blob_cut", ckpt, replace("checkpoint/examples_0", np.zeros(10, dtype=np.uint8)))
case("ckpt_blob_missing", ckpt, delete("checkpoint/examples_0"))
case("ckpt_weights_short", ckpt, replace("weights", np.zeros((3, 7))))  # the checkpoint holds its weights once, in /weights
case("ckpt_weights_nan", ckpt, nan_weight("weights"))
case("ckpt_config_bad", ckpt, replace("config", "[solver]\nlambda = banana\n"))
