"""How far an index kept current by passes drifts from a fresh index while its prior and calibration map are held
(docs/WORKER.md "One pass"), for a choice of the re-estimation rule (``indexer.space.needs_refit``, ``REFIT_SHARE``):

    TASKSPACE_CACHE_DIR=/work/cache python benchmarks/bench_refit.py --data ../shared/data/evalarena_code \
        --unit block --start 0.5 --steps 5 --rule doubling 0.25 --work /tmp/refit

The data set's models are shuffled (``--seed``); a home is indexed with the first ``start`` share of them, then grows
by equal steps to all of them, one `taskspace index` pass per step (the rule set in that process only). After
each step a fresh home is indexed from the same outcomes in one pass, and both answer the same queries (``--queries``
prompts drawn from the data set, through ``indexer.find_models`` over every model): printed per step and rule are
the mean and the largest absolute difference of a model's probability, the share of queries whose first model
differs, and whether the pass re-estimated (``solved`` = every model). Not a test: it indexes the data set
(1 + steps) x (1 + rules) times. ``--unit block`` adds (model, benchmark) blocks instead of whole models,
so known models gain benchmarks as they do when a source adds a task.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

INDEX = ("import sys, indexer.space as s\n"
         "if sys.argv[1] == 'doubling':  # the rule before session 45: the model count doubled or halved\n"
         "    s.needs_refit = lambda n, fitted_on, changed: n >= 2 * fitted_on or 2 * n <= fitted_on\n"
         "else:\n"
         "    s.REFIT_SHARE = float(sys.argv[1])\n"
         "sys.argv[1:] = sys.argv[2:]\n"
         "from indexer.cli import main; main()")
ASK = """
import json, sys
from indexer import find_models
out = []
for q in json.load(open(sys.argv[1])):
    r = find_models(q, k=100000, evidence=0).to_dict()["results"]
    out.append({x["model"]: x["probability"] for x in r})
json.dump(out, sys.stdout)
"""


def _data_file(data: Path, name: str) -> Path:
    """``name`` or ``name.gz`` in a folder of the shared layout; before, ``outcomes.csv.gz`` was assumed, so the bundled
    sample (plain files) failed with a FileNotFoundError traceback."""
    for p in (data / name, data / f"{name}.gz"):
        if p.is_file():
            return p
    raise SystemExit(f"{data}: no {name} or {name}.gz (--data takes a folder of the shared layout: outcomes.csv[.gz] "
                     "and prompts.jsonl[.gz])")


def _open(path: Path):
    return gzip.open(path, "rt", newline="") if path.suffix == ".gz" else open(path, newline="")


def _write(data: Path, units: list, out: Path, bench: dict[str, str]) -> None:
    """A table source: the data set's prompts and the outcomes of ``units`` (models, or (model, benchmark) pairs)."""
    out.mkdir(parents=True, exist_ok=True)
    prompts = _data_file(data, "prompts.jsonl")
    shutil.copy(prompts, out / prompts.name)
    keep = set(units)
    with _open(_data_file(data, "outcomes.csv")) as f, open(out / "outcomes.csv", "w", newline="") as g:
        r, w = csv.reader(f), csv.writer(g)
        w.writerow(next(r))
        w.writerows(row for row in r if (row[0] if bench is None else (row[0], bench[row[1]])) in keep)


def _index(home: Path, source: Path, rule: str) -> dict:
    env = {**os.environ, "TASKSPACE_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    p = subprocess.run([sys.executable, "-c", INDEX, rule, "index", "--source", str(source), "--json"],
                       env=env, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def _ask(home: Path, queries: Path) -> list[dict]:
    env = {**os.environ, "TASKSPACE_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    p = subprocess.run([sys.executable, "-c", ASK, str(queries)], env=env, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def _compare(a: list[dict], b: list[dict]) -> tuple[float, float, float]:
    diffs, firsts = [], 0
    for x, y in zip(a, b):
        diffs += [abs(x[m] - y[m]) for m in y]
        firsts += max(x, key=x.get) != max(y, key=y.get)
    return sum(diffs) / len(diffs), max(diffs), firsts / len(a)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--start", type=float, default=0.5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rule", nargs="+", default=["doubling", "0.25"],
                    help="re-estimation rules: `doubling` (before session 45) or a REFIT_SHARE")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--unit", choices=["model", "block"], default="model",
                    help="what a step adds: models whole, or (model, benchmark) blocks (a known model gains a benchmark)")
    args = ap.parse_args()
    with _open(_data_file(args.data, "prompts.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    texts = [r["text"] for r in rows]
    if not 1 <= args.queries <= len(texts):  # before: random.sample's traceback (0: a division by zero at the end)
        raise SystemExit(f"--queries {args.queries}: give 1 to {len(texts)} (the prompts in {args.data})")
    bench = {r["prompt_id"]: r["benchmark"] for r in rows} if args.unit == "block" else None
    with _open(_data_file(args.data, "outcomes.csv")) as f:
        models = sorted({row["model"] if bench is None else (row["model"], bench[row["prompt_id"]])
                         for row in csv.DictReader(f)})
    rng = random.Random(args.seed)
    rng.shuffle(models)
    args.work.mkdir(parents=True, exist_ok=True)
    queries = args.work / "queries.json"
    queries.write_text(json.dumps(rng.sample(texts, args.queries)))
    n0 = round(args.start * len(models))
    sizes = [n0 + round(i * (len(models) - n0) / args.steps) for i in range(args.steps + 1)]
    print(f"{args.data.name}: {len(models)} {args.unit}s, homes of {sizes}, {args.queries} queries, seed {args.seed}")
    print(f"| {args.unit}s | rule | re-estimated | mean abs dp | max abs dp | first model differs |")
    print("|---|---|---|---|---|---|")
    fresh = {}
    for n in sizes:
        src, home = args.work / f"fresh-src-{n}", args.work / f"fresh-{n}"
        _write(args.data, models[:n], src, bench)
        _index(home, src, "0.25")
        fresh[n] = _ask(home, queries)
    for g in args.rule:
        src, home = args.work / f"evolve-src-{g}", args.work / f"evolve-{g}"
        for n in sizes:
            _write(args.data, models[:n], src, bench)
            rep = _index(home, src, g)
            solved, every = rep["counts"]["solved"], len(fresh[n][0])
            mean, worst, first = _compare(_ask(home, queries), fresh[n])
            print(f"| {n} | {g} | {'yes' if solved == every else f'no ({solved} solved)'} | {mean:.4f} | {worst:.4f} "
                  f"| {first:.0%} |", flush=True)


if __name__ == "__main__":
    main()
