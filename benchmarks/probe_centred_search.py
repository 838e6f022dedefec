"""Whether a search on a mixed home is exact (docs/RESULTS.md, "The mixed index"): each query, rank, filter and k
ranked with the adaptive fetch of `indexer.query.coverage_ranked` (COVERAGE_FETCH 40) and with every model fetched
at once; prints ok or MISMATCH per case and the count of mismatches.

    TASKSPACE_HOME=... TASKSPACE_CACHE_DIR=/work/cache HF_HUB_OFFLINE=1 python benchmarks/probe_centred_search.py

The queries name benchmarks of the sample + evalarena_code + metabench_openllm home (humaneval, truthfulqa, arc).
"""
import argparse
import time

argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
from indexer import find, query  # noqa: E402 - after --help, which needs no index
queries = [dict(prompts="write a python function to reverse a list"), dict(prompts="What happens if you swallow gum?"),
           dict(benchmark="humaneval"), dict(benchmark="truthfulqa"), dict(benchmark="mmlu_pro/law"),
           dict(prompts="Solve for x: 3x + 5 = 20"), dict(benchmark="arc")]
bad = 0
for qd in queries:
    for rank in ("probability", "lcb"):
        for kw in ({}, {"prefer_smaller": 0.1}, {"filters": {"benchmark": "mbpp"}}):
            for k in (5, 30):
                query.COVERAGE_FETCH = 40
                t = time.perf_counter()
                a = find.find_models(**qd, k=k, rank=rank, evidence=0, **kw)
                ta = time.perf_counter() - t
                query.COVERAGE_FETCH = 10 ** 6
                b = find.find_models(**qd, k=k, rank=rank, evidence=0, **kw)
                ma = [(r.model, round(r.probability, 9)) for r in a.results]
                mb = [(r.model, round(r.probability, 9)) for r in b.results]
                ok = ma == mb
                bad += not ok
                print(("ok " if ok else "MISMATCH"), list(qd.values())[0][:30], rank, kw, k, f"{ta:.2f}s", ma[:2] if ok else (ma[:4], mb[:4]))
print("mismatches", bad)
