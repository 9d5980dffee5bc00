# tests/common/rates_fixture.sh - the small rate-constraint problem of tests/e2e/rates*.sh
# (sourced after tap.sh): rates_gen ROWS FILE writes ROWS rows of two groups A (feature 1) and B
# (feature 2) with six Gaussian features and a label from a planted score (seeded: the same rows
# every run); rates_ini DATA prints a config training it under the p%-rule
# positive_rate(A) <= 1.25 positive_rate(B) (error-rate objective, sdca at λ 0.02, 4 data blocks,
# 4 MM steps, rates.eps 1e-4).
rates_gen() {
    $PY - "$1" "$2" <<'PY'
import random, sys
random.seed(5)
with open(sys.argv[2], "w") as f:
    for i in range(int(sys.argv[1])):
        g = 1 if random.random() < 0.6 else 0
        x = [random.gauss(0, 1) for _ in range(6)]
        s = 1.2 * x[0] - 0.8 * x[1] + 0.5 * x[2] + (0.8 if g else -0.6) + random.gauss(0, 0.7)
        feats = [(1 if g else 2, 1.0)] + [(j + 3, round(v, 4)) for j, v in enumerate(x)]
        f.write(("+1" if s > 0.3 else "-1") + "".join(f" {j}:{v}" for j, v in feats) + "\n")
PY
}
rates_ini() {
    cat <<INI
[data]
train = $1
dim = 8
bias = 1
[task]
type = binary
[surrogate]
type = margin
[solver]
type = sdca
lambda = 0.02
epochs = 1000000
blocks = 4
seed = 1
[datasets]
A = feature 1 > 0
B = feature 2 > 0
[constraints]
p_rule = positive_rate(A) <= 1.25 * positive_rate(B)
[rates]
mm_steps = 4
eps = 1e-4
inner_epochs = 1000
[output]
model = $WORK/m.h5
metrics = $WORK/m.jsonl
eval_every = 0
INI
}
