"""tests/common/hier_fixture.py - seeded label-hierarchy fixtures for the hierarchy tests.

  hier_fixture.py dag OUT SEED NODES WINDOW P_EXTRA DIM NOISE FILE:ROWS:K[/K...] ...
      A random DAG on ids 0..NODES-1 (root 0): node i > 0 hangs below one node among the WINDOW
      before it and, for i > 3 with probability P_EXTRA, below a second one; written to
      OUT/dag.hier. Each leaf gets a Gaussian centre in DIM features; each FILE gets ROWS rows
      whose leaf set is a random sample of K leaves (K drawn from the /-separated list), features
      the sum of their centres plus N(0, NOISE), labels the closure without the root.
  hier_fixture.py layered OUT SEED NODES DEPTH P_EXTRA DIM NOISE FILE:ROWS:K[/K...] ...
      A random layered DAG shaped like a category graph (the LP statistics of bench/hierarchy.sh):
      NODES - 1 nodes over levels 1..DEPTH below root 0, level sizes growing geometrically; each
      node hangs below a random node of the level above and, with probability P_EXTRA, below a
      second one of that level. Rows as for dag (OUT/dag.hier, centres per leaf).
As a module (tests/common on sys.path): alpha_path_sums(MODEL.h5), the sum of /hierarchy/alpha
over each leaf's root path, which Algorithm 5 makes 1 on trees (the ssvm tests).
The draws come from one random.Random(SEED) in a fixed order, so a fixture is the same file on
every run."""
import random
import sys


def dag(out, seed, nodes, window, p_extra, dim, noise, files):
    r = random.Random(seed)
    par = {0: []}
    for i in range(1, nodes):
        ps = {r.randrange(max(0, i - window), i)}
        if i > 3 and r.random() < p_extra:
            ps.add(r.randrange(0, i))
        par[i] = sorted(ps)
    write(out, r, par, dim, noise, files)


def layered(out, seed, nodes, depth, p_extra, dim, noise, files):
    r = random.Random(seed)
    weights = [2.0 ** d for d in range(depth)]
    sizes = [max(1, int((nodes - 1) * w / sum(weights))) for w in weights]
    sizes[-1] += nodes - 1 - sum(sizes)
    par, above, nxt = {0: []}, [0], 1
    for size in sizes:
        level = list(range(nxt, nxt + size))
        for i in level:
            ps = {r.choice(above)}
            if len(above) > 1 and r.random() < p_extra:
                ps.add(r.choice(above))
            par[i] = sorted(ps)
        above, nxt = level, nxt + size
    write(out, r, par, dim, noise, files)


def write(out, r, par, dim, noise, files):
    with open(out + "/dag.hier", "w") as f:
        for c in range(1, len(par)):
            for p in par[c]:
                f.write(f"{p} {c}\n")
    inner = {p for c in par for p in par[c]}
    leaves = [i for i in par if i not in inner]

    def closure(s):
        got, st = set(), list(s)
        while st:
            n = st.pop()
            if n not in got:
                got.add(n)
                st.extend(par[n])
        return got

    cent = {leaf: [r.gauss(0, 1) for _ in range(dim)] for leaf in leaves}
    for spec in files:
        name, rows, ks = spec.split(":")
        ks = [int(k) for k in ks.split("/")]
        with open(out + "/" + name, "w") as f:
            for _ in range(int(rows)):
                ls = r.sample(leaves, r.choice(ks))
                x = [sum(cent[leaf][j] for leaf in ls) + r.gauss(0, noise) for j in range(dim)]
                lab = sorted(closure(ls) - {0})
                f.write(",".join(map(str, lab)) + " " +
                        " ".join(f"{j+1}:{v:.4f}" for j, v in enumerate(x)) + "\n")


def alpha_path_sums(path):
    """The sum of /hierarchy/alpha over each leaf's path to the root (first parents)."""
    import h5py
    g = h5py.File(path, "r")["hierarchy"]
    ptr, idx, al = g["parent_ptr"][:], g["parent_idx"][:], g["alpha"][:]
    kids = set(int(p) for p in idx)

    def up(n):
        s = 0.0
        while True:
            s += al[n]
            if ptr[n] == ptr[n + 1]:
                return s
            n = int(idx[ptr[n]])

    return [up(n) for n in range(len(al)) if n not in kids]



if __name__ == "__main__":
    if sys.argv[1] == "dag":
        a = sys.argv[2:]
        dag(a[0], int(a[1]), int(a[2]), int(a[3]), float(a[4]), int(a[5]), float(a[6]), a[7:])
    elif sys.argv[1] == "layered":
        a = sys.argv[2:]
        layered(a[0], int(a[1]), int(a[2]), int(a[3]), float(a[4]), int(a[5]), float(a[6]),
                a[7:])
    else:
        sys.exit(f"hier_fixture.py: unknown command {sys.argv[1]}")
