"""What centring the models nothing links to the query costs a search (docs/RESULTS.md, "The mixed index"): on a
home whose benchmarks fall in groups no model links (the sample + evalarena_code + metabench_openllm home of 32,823
models), ``find_models`` for six queries x rank (probability, lcb) x prefer_smaller (0, 0.1) x k (5, 30), each the
median of ``--repeat`` runs, with the centring (``new``) and without it (``old``: the map's centres ignored, as
before schema 0019), interleaved per case. Prints one line per case and the totals (seconds, encoding included:
the embeddings are cached).

    TASKSPACE_HOME=... TASKSPACE_CACHE_DIR=/work/cache HF_HUB_OFFLINE=1 python benchmarks/bench_centred_search.py
"""
from __future__ import annotations

import argparse
import statistics
import time

QUERIES = [dict(prompts="write a python function to reverse a list"), dict(prompts="What happens if you swallow gum?"),
           dict(benchmark="humaneval"), dict(benchmark="truthfulqa"), dict(benchmark="mmlu_pro/law"),
           dict(prompts="Solve for x: 3x + 5 = 20")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from indexer import find, posterior

    centred = posterior.Predictor.centred
    modes = {"old": property(lambda self: False), "new": centred}
    find.find_models(**QUERIES[0], k=5, evidence=0)  # the stores and the encoder opened once
    total = {m: 0.0 for m in modes}
    for q in QUERIES:
        for rank in ("probability", "lcb"):
            for alpha in (0.0, 0.1):
                for k in (5, 30):
                    took = {}
                    for mode, prop in modes.items():
                        posterior.Predictor.centred = prop
                        ts = []
                        for _ in range(args.repeat):
                            t = time.perf_counter()
                            find.find_models(**q, k=k, rank=rank, prefer_smaller=alpha, evidence=0)
                            ts.append(time.perf_counter() - t)
                        took[mode] = statistics.median(ts)
                        total[mode] += took[mode]
                    print(f"{list(q.values())[0][:24]:26s} {rank:11s} prefer_smaller={alpha:<4} k={k:<3} "
                          + "  ".join(f"{m} {v:.2f}s" for m, v in took.items()), flush=True)
    posterior.Predictor.centred = centred
    print("total " + "  ".join(f"{m} {v:.1f}s" for m, v in total.items()))


if __name__ == "__main__":
    main()
