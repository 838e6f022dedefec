"""Regenerate the bundled sample (indexer/data/sample) from ../shared/data/mmlu_pro.

Deterministic: 30 prompts per MMLU-Pro category (seed 0) and the 25 models with the most observed cells
(ties by name). Run from the repository root:  python scripts/make_sample.py [SHARED_DATA_DIR]
"""

import csv
import gzip
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

src = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data") / "mmlu_pro"
dst = Path("indexer/data/sample")
dst.mkdir(parents=True, exist_ok=True)

prompts = [json.loads(line) for line in gzip.open(src / "prompts.jsonl.gz", "rt", encoding="utf-8")]
by_cat = defaultdict(list)
for p in prompts:
    by_cat[p["benchmark"]].append(p)
rng = random.Random(0)
chosen = []
for cat in sorted(by_cat):
    chosen.extend(sorted(rng.sample(by_cat[cat], 30), key=lambda p: int(p["prompt_id"].split("-")[1])))
ids = {p["prompt_id"] for p in chosen}

rows = list(csv.DictReader(gzip.open(src / "outcomes.csv.gz", "rt", encoding="utf-8")))
count = Counter(r["model"] for r in rows)
models = sorted(count, key=lambda m: (-count[m], m))[:25]
keep = set(models)

with open(dst / "prompts.jsonl", "w", encoding="utf-8") as f:
    for p in chosen:
        f.write(json.dumps({k: p[k] for k in ("prompt_id", "benchmark", "text", "src")}, ensure_ascii=False) + "\n")
with open(dst / "outcomes.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["model", "prompt_id", "correct"])
    for r in rows:
        if r["model"] in keep and r["prompt_id"] in ids:
            w.writerow([r["model"], r["prompt_id"], r["correct"]])
print(f"{len(chosen)} prompts, {len(models)} models -> {dst}")
