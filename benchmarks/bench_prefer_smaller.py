"""What ``--rank lcb --prefer-smaller`` costs a search (docs/BENCHMARKS.md, "lcb with a size penalty"): ``find_models``
for five queries (three prompts, two benchmark queries) x alpha (0.1, 1) x (k, offset) ((5, 0), (30, 0), (5, 20)) with
``rank="lcb"``, each the median of ``--repeat`` runs, wall and CPU seconds (encoding included: the embeddings are
cached). Prints one line per case and the range and total of each.

    TASKSPACE_HOME=... TASKSPACE_CACHE_DIR=/work/cache HF_HUB_OFFLINE=1 python benchmarks/bench_prefer_smaller.py
"""
from __future__ import annotations

import argparse
import statistics
import time

QUERIES = [dict(prompts="What happens if you swallow gum?"), dict(prompts="write a python function to reverse a list"),
           dict(prompts="Solve for x: 3x + 5 = 20"), dict(benchmark="humaneval"), dict(benchmark="mmlu_pro/law")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rank", default="lcb", choices=["lcb", "probability"])
    args = ap.parse_args()
    from indexer import find

    find.find_models(**QUERIES[0], k=5, evidence=0)  # the stores and the encoder opened once
    walls, cpus = [], []
    for q in QUERIES:
        for alpha in (0.1, 1.0):
            for k, offset in ((5, 0), (30, 0), (5, 20)):
                wall, cpu = [], []
                for _ in range(args.repeat):
                    t, c = time.perf_counter(), time.process_time()
                    find.find_models(**q, k=k, offset=offset, rank=args.rank, prefer_smaller=alpha, evidence=0)
                    wall.append(time.perf_counter() - t)
                    cpu.append(time.process_time() - c)
                walls.append(statistics.median(wall))
                cpus.append(statistics.median(cpu))
                print(f"{list(q.values())[0][:24]:26s} prefer_smaller={alpha:<4} k={k:<3} offset={offset:<3} "
                      f"wall {walls[-1]:.2f}s cpu {cpus[-1]:.2f}s", flush=True)
    print(f"{len(walls)} cases: wall {min(walls):.2f}-{max(walls):.2f}s (total {sum(walls):.1f}s), "
          f"cpu {min(cpus):.2f}-{max(cpus):.2f}s (total {sum(cpus):.1f}s)")


if __name__ == "__main__":
    main()
