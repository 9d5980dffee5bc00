# bench/rta_sync.sh - the rta solver's round size (solver.sync_every, issue 17 §6.3 variant): every
# example of a round steps against the same weights and one line search scales the combined
# step, so larger rounds cost fewer collectives and balance the ranks better but combine steps
# that overlap. For every set of SETS and round size of BS (0: the adaptive default), trains
# configs/SET_rta.ini for EPOCHS_<set> epochs (default 10; 4 for medical and enron) at every np of
# NPS (the trajectory is the same at every np), solver.tol = 0, a certificate after the last
# epoch only. Prints the final dual (the same at every np: load-immune) and its share of the
# serial (sync_every = 1) dual, the rounds' mean γ in the last epoch, the last epoch's round
# size, and the seconds per epoch at each np (training time over epochs, the final certificate
# excluded) with their ratio. Logs in $BENCH_OUT (default out/bench/rta_sync).
set -u
OUT=${BENCH_OUT:-out/bench/rta_sync}
mkdir -p "$OUT"
MPI="mpirun --oversubscribe"
SETS=${SETS:-"emotions yeast scene medical enron"}
BS=${BS:-"1 2 4 8 16 32 64 0"}
NPS=${NPS:-"1 2"}
cap() {
    local v="EPOCHS_$1"
    case $1 in
    medical | enron) echo "${!v:-4}" ;;
    *) echo "${!v:-10}" ;;
    esac
}
echo "| set | sync_every | epochs | dual | of serial | γ (last epoch) | round |$(for np in $NPS; do printf ' s/epoch np%s |' "$np"; done) speed-up |"
echo "|---|---|---|---|---|---|---|$(for np in $NPS; do printf -- '---|'; done)---|"
for set in $SETS; do
    E=$(cap "$set")
    serial=
    for B in $BS; do
        tags=()
        for np in $NPS; do
            tag="${set}_B${B}_np$np"
            $MPI -np "$np" "$STRUX" train "configs/${set}_rta.ini" --quiet \
                --set solver.sync_every="$B" --set solver.epochs="$E" --set solver.tol=0 \
                --set solver.certify_every=0 --set output.eval_every=0 \
                --set output.model="$OUT/$tag.h5" --set output.metrics="$OUT/$tag.jsonl" \
                >/dev/null 2>"$OUT/$tag.err" || { echo "failed: $tag"; cat "$OUT/$tag.err"; exit 1; }
            tags+=("$OUT/$tag")
        done
        [ "$B" = 1 ] && serial="${tags[0]}"
        /usr/bin/python3 - "$set" "$B" "${serial:-}" "${tags[@]}" <<'PY'
import json, sys
set_, B, serial, *tags = sys.argv[1:]
runs = [[json.loads(l) for l in open(t + ".jsonl")] for t in tags]
last = runs[0][-1]
ref = [json.loads(l) for l in open(serial + ".jsonl")][-1]["dual"] if serial else None
spe = [sum(r["inference_s"] + r["update_s"] for r in rows) / len(rows) + rows[-1]["comm_s"] / len(rows)
       for rows in runs]
cells = [set_, "0 (adaptive)" if B == "0" else B, str(len(runs[0])), f"{last['dual']:.6g}",
         f"{last['dual'] / ref:.3f}" if ref else "—", f"{last['gamma']:.2f}",
         str(int(last["round_size"]))] + [f"{s:.3g}" for s in spe] + [
         f"{spe[0] / spe[1]:.2f}x" if len(spe) > 1 else "—"]
print("| " + " | ".join(cells) + " |")
PY
    done
done
