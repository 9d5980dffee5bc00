# tests/e2e/house.sh - the house rules of STYLE.md that a machine can check: third-party headers
# only in their one module, dependencies pointing down, every public header compiling alone, every
# source file opening with a purpose comment, no exit() below src/cli.
. tests/common/tap.sh

only_in() { # header allowed-path-prefix
    local bad
    bad=$(grep -rlE "#include <$1>" src include tests/unit | grep -v "^$2" || true)
    [ -z "$bad" ]
    ok $? "<$1> is included only under $2"
    [ -z "$bad" ] || echo "$bad" | diag
}
only_in mpi.h src/dist/
only_in hdf5.h src/io/
only_in glpk.h src/lp/
only_in cblas.h src/linalg/blas.c

bad=$(grep -rlE '#include "strux/(comm|io|solver)\.h"' src/tasks src/search src/data src/linalg src/lp src/core || true)
[ -z "$bad" ]
ok $? "tasks, searches, data, linalg, lp and core do not see comm, io or solvers"
[ -z "$bad" ] || echo "$bad" | diag

bad=$(grep -rlE '#include "(\.\./)*(cli/)?cli\.h"|#include "strux_git\.h"' src | grep -v '^src/cli/' || true)
[ -z "$bad" ]
ok $? "nothing below src/cli includes the command line (the training driver takes callbacks and flags)"
[ -z "$bad" ] || echo "$bad" | diag

bad=$(grep -rnE 'strcmp\([^)]*"(sgd|sdca|bcfw|cutting_plane|margin|slack|beta|probloss|microf1|angular|bisect|binary|sarawagi|convex_hull|multilabel|multiclass|chain|pairwise)"' src/solvers src/search src/tasks | grep -v 'registry\.c' || true)
[ -z "$bad" ]
ok $? "no capability check by name in solvers, searches and tasks (registries carry flags)"
[ -z "$bad" ] || echo "$bad" | diag

bad=$(grep -rnE '(^|[^_a-z])(exit|abort)\(' src --include=*.c | grep -v '^src/cli/' || true)
[ -z "$bad" ]
ok $? "no exit() or abort() below src/cli"
[ -z "$bad" ] || echo "$bad" | diag

bad=""
for h in include/strux/*.h; do
    echo "#include \"strux/$(basename "$h")\"" >"$WORK/alone.c"
    cc -std=c11 -Wall -Wextra -Werror -Iinclude -c "$WORK/alone.c" -o "$WORK/alone.o" 2>/dev/null ||
        bad="$bad $h"
done
[ -z "$bad" ]
ok $? "every public header compiles alone, without MPI/HDF5/GLPK/BLAS headers"
[ -z "$bad" ] || echo "$bad" | diag

bad=""
for f in $(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 2>/dev/null || find src include -name '*.[ch]'); do
    head -n 1 "$f" | grep -qE '^/\* [a-z0-9_/]+\.[ch] - ' || bad="$bad $f"
done
[ -z "$bad" ]
ok $? "every source file opens with 'path - what it is'"
[ -z "$bad" ] || echo "$bad" | diag
