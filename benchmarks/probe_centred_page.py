"""A model's page with and without centring the models nothing links to a benchmark (docs/BENCHMARKS.md, "Centring
the models nothing links to the query"): ``model_detail`` of three models of the sample + evalarena_code +
metabench_openllm home, three rounds, the two versions interleaved; prints each model's top three strengths
(benchmark, probability, rank) in the first round and each round's seconds per model.

    TASKSPACE_HOME=... TASKSPACE_CACHE_DIR=/work/cache HF_HUB_OFFLINE=1 python benchmarks/probe_centred_page.py
"""
import argparse
import time

argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
from indexer import browse, model_detail, posterior  # noqa: E402 - after --help, which needs no index

MODELS = ("01-ai/Yi-34B", "deepseek-ai/deepseek-coder-33b-instruct", "mmlu-B:r0088")

centred = posterior.Predictor.centred
for rnd in range(3):
    for mode in ("old", "new"):
        posterior.Predictor.centred = property(lambda self: False) if mode == "old" else centred
        took = []
        for m in MODELS:
            browse._EVERY.clear()  # each page computed (a process keeps the rows by state, not by map version)
            t = time.perf_counter()
            d = model_detail(m, strengths=5)
            took.append(time.perf_counter() - t)
            if rnd == 0:
                print(mode, m, [(s["benchmark"], s["probability"], s["rank"]) for s in d["strengths"][:3]])
        print(mode, [round(x, 2) for x in took])
posterior.Predictor.centred = centred
