# tests/e2e/hier_read_rank0.sh - strux train reads and validates task.hierarchy on rank 0 only and
# broadcasts the built structure (src/cli/train.c share_hierarchy, data/hierarchy_pack.c), at -np 2
# (each rank runs through a wrapper that records its own exit status):
#   - rank 1 runs in a directory where the relative task.hierarchy path does not exist: the run
#     trains anyway, and its model equals the one of a run where both ranks could read the file
#     (rank 1 never opens it);
#   - malformed files (an extra token, a non-integer id, a cycle) end BOTH ranks with exit 3,
#     with one message naming the file and line (and the value), and no model.
. tests/common/tap.sh
IM=$STRUX_DATA/imclef07a
gzip -dc "$IM/ImCLEF07A_train.svm.gz" | head -n 120 >"$WORK/im.svm"
mkdir -p "$WORK/r0" "$WORK/r1"
cp "$IM/ImCLEF07A.hier" "$WORK/r0/h.hier"
printf '[surrogate]\ntype = margin\n' >"$WORK/h.ini"
# per-rank wrapper: rank 1 starts in r1 (no h.hier there), rank 0 in r0; each writes strux's
# status and exits 0 itself (else mpirun may kill the other rank's wrapper before it writes)
cat >"$WORK/rank.sh" <<'EOF'
#!/bin/sh
w=$1; shift
r=${OMPI_COMM_WORLD_RANK:-0}
cd "$w/r$r" || exit 99
"$@"
echo "$?" >"$w/status.$r"
EOF
chmod +x "$WORK/rank.sh"
train() { # train HIER MODEL [more --set ...]
    local hier=$1 model=$2
    shift 2
    rm -f "$WORK"/status.*
    timeout 120 $MPIRUN -np 2 "$WORK/rank.sh" "$WORK" "$STRUX" train "$WORK/h.ini" --quiet \
        --set task.type=hierarchy --set task.hierarchy="$hier" --set data.train="$WORK/im.svm" \
        --set solver.epochs=2 --set output.metrics= --set output.model="$model" "$@"
}
statuses() { echo "$(cat "$WORK/status.0" 2>/dev/null) $(cat "$WORK/status.1" 2>/dev/null)"; }

train h.hier "$WORK/rel.h5" 2>"$WORK/rel.err"
[ "$(statuses)" = "0 0" ] && [ -f "$WORK/rel.h5" ]
ok $? "rank 1 cannot see the relative task.hierarchy path and the run trains, both ranks exit 0 (only rank 0 reads it)"
cp "$WORK/r0/h.hier" "$WORK/r1/h.hier"
train h.hier "$WORK/both.h5" 2>"$WORK/both.err"
[ "$(statuses)" = "0 0" ]
ok $? "the same run with the file visible to both ranks"
$PY - "$WORK/rel.h5" "$WORK/both.h5" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
same = all(np.array_equal(a[k][:], b[k][:]) for k in
           ("weights", "hierarchy/node_id", "hierarchy/parent_ptr", "hierarchy/parent_idx", "hierarchy/alpha"))
print(f"# weights and /hierarchy {'identical' if same else 'differ'}")
sys.exit(0 if same else 1)
PY
ok $? "the model equals the run where both ranks could read the file"
rm -f "$WORK/r1/h.hier"

bad() { # bad NAME CONTENT PATTERN DESCRIPTION
    local name=$1 pattern=$3 desc=$4
    printf "$2" >"$WORK/r0/$name"
    train "$name" "$WORK/$name.h5" >"$WORK/$name.out" 2>"$WORK/$name.err"
    local rc=$?
    local n
    n=$(grep -cE -- "$pattern" "$WORK/$name.err")
    if [ "$(statuses)" = "3 3" ] && [ "$n" -eq 1 ] && [ ! -e "$WORK/$name.h5" ]; then
        ok 0 "$desc: strux exits 3 on both ranks, one message, no model"
    else
        ok 1 "$desc: strux exits 3 on both ranks, one message, no model"
        echo "mpirun exit $rc, strux statuses of ranks 0 and 1 '$(statuses)', $n matching lines of /$pattern/:" | diag
        head -n 10 "$WORK/$name.err" | diag
    fi
}
bad extra.hier '0 1\n0 2\n1 3 4\n' "extra.hier:3: .*extra" "an extra token on line 3"
bad word.hier '0 1\n0 x2\n' "word.hier:2: child id 'x2' is not an integer" "a non-integer id"
bad cycle.hier '0 1\n1 2\n2 3\n3 1\n' "cycle.hier:[0-9]+: .*(1 -> 2 -> 3 -> 1|2 -> 3 -> 1 -> 2|3 -> 1 -> 2 -> 3)" "a cycle"
grep -h "strux:" "$WORK/extra.hier.err" "$WORK/cycle.hier.err" | diag
