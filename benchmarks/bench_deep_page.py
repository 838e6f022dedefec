"""What a page deep in a ranking costs (docs/BENCHMARKS.md, "A deep page of a ranking"): ``find_models`` with k 3 at
offsets 0, 1000, 16000 and 32800 (``--offsets``) for a benchmark query and a prompt query, ranked by ``probability``
and ``lcb``, each the median of ``--repeat`` runs, wall and CPU seconds (encoding included: the embeddings are
cached). Prints one line per case (with the page's models and probabilities, to compare two versions' answers) and
each rank's total.

    TASKSPACE_HOME=... TASKSPACE_CACHE_DIR=/work/cache HF_HUB_OFFLINE=1 python benchmarks/bench_deep_page.py

The offsets are for the 32,823-model sample + evalarena_code + metabench_openllm home (an offset past the last model
is an empty page, which ranks one model).
"""
from __future__ import annotations

import argparse
import statistics
import time

QUERIES = [dict(benchmark="mmlu_pro/law"), dict(prompts="write a python function to reverse a list")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--offsets", default="0,1000,16000,32800", help="comma-separated offsets (default %(default)s)")
    ap.add_argument("--rank", choices=["probability", "lcb"], action="append",
                    help="a rank to time (repeatable; default both)")
    args = ap.parse_args()
    offsets = [int(x) for x in args.offsets.split(",")]
    from indexer import find

    find.find_models(**QUERIES[1], k=args.k)  # the stores and the encoder opened once
    for rank in args.rank or ["probability", "lcb"]:
        total = 0.0
        for q in QUERIES:
            for offset in offsets:
                wall, cpu, page = [], [], None
                for _ in range(args.repeat):
                    t, c = time.perf_counter(), time.process_time()
                    page = find.find_models(**q, k=args.k, offset=offset, rank=rank)
                    wall.append(time.perf_counter() - t)
                    cpu.append(time.process_time() - c)
                total += statistics.median(wall)
                shown = [(r.model, round(r.probability, 6)) for r in page.results]
                print(f"{rank:11s} {list(q.values())[0][:28]:28s} offset {offset:6d} of {page.query['total']}: "
                      f"wall {statistics.median(wall):6.2f} s  cpu {statistics.median(cpu):6.2f} s  {shown}",
                      flush=True)
        print(f"{rank}: total of the medians {total:.2f} s", flush=True)


if __name__ == "__main__":
    main()
