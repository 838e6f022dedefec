"""Solver speed on synthetic data: full fit vs its two unavoidable products vs the paper's SVD formula, the
time to add one model, and peak memory. Writes a Markdown table (stdout, and ``--out`` if given).

    python benchmarks/bench_solver.py                      # the full grid (32 min on the shared 2-core VM)
    python benchmarks/bench_solver.py --N 10000 --M 100 1000 --d 384 --coverage dense

Every configuration runs in its own subprocess so its peak RSS (``resource.getrusage``) is its own.
Data: D (N, d) float32 random unit rows; S (M, N) float32 0/1 outcomes (per-model accuracy 0.2-0.8).
Coverage ``dense``: every model on every prompt. ``block``: the prompts form 10 benchmarks (contiguous
blocks) and each model is evaluated on one of 4 suites of benchmarks (6, 6, 5 and 10 of them); NaN elsewhere.
S is float32 so the largest grid point (M=10k, N=100k) holds 4 GB of outcomes, not 8.

Columns:
- fit: ``HyperplaneSolver(lam=1, eps=0).fit(D, S)`` from the float32 inputs.
- DtD, YD: the two products any method must do, as float64 BLAS calls on ready float64 operands
  (``D^T D`` and ``Y @ D`` with Y = 2S-1, 0 where missing), Y prepared in chunks of 512 models outside the
  timer. products = DtD + YD; ratio = fit / products (target <= 2).
- paper: ``E = P U S' V^T`` the direct way (SVD of D, then per chunk ``((Y U) S') V^T``; for block coverage
  one SVD per suite over its prompts). max|diff| is the largest difference between the two results.
- RSS: peak resident memory of the subprocess after data + fit (before the other measurements), and the
  size of the inputs D + S in that process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from indexer.solver import HyperplaneSolver, paper_normals, signed_outcomes  # noqa: E402

CHUNK = 512
#: The paper's formula for block coverage (one SVD per suite) is run only up to this N * d.
PAPER_BLOCK_MAX_ND = 10_000 * 768
SUITES = [list(range(0, 6)), list(range(4, 10)), [0, 2, 4, 6, 8], list(range(10))]


def make_data(N: int, M: int, d: int, coverage: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    D = np.empty((N, d), dtype=np.float32)
    for lo in range(0, N, 16384):
        part = rng.standard_normal((min(16384, N - lo), d), dtype=np.float32)
        D[lo : lo + part.shape[0]] = part / np.linalg.norm(part, axis=1, keepdims=True)
    acc = rng.uniform(0.2, 0.8, M).astype(np.float32)
    S = np.empty((M, N), dtype=np.float32)
    bounds = np.linspace(0, N, 11).astype(int)
    suite_of = np.arange(M) % len(SUITES)
    for lo in range(0, M, CHUNK):
        hi = min(M, lo + CHUNK)
        S[lo:hi] = rng.random((hi - lo, N), dtype=np.float32) < acc[lo:hi, None]
        if coverage == "block":
            for i in range(lo, hi):
                covered = np.zeros(N, dtype=bool)
                for bench in SUITES[suite_of[i]]:
                    covered[bounds[bench] : bounds[bench + 1]] = True
                S[i, ~covered] = np.nan
    return D, S, suite_of, bounds


def suite_columns(suite, bounds, N):
    cols = np.zeros(N, dtype=bool)
    for bench in suite:
        cols[bounds[bench] : bounds[bench + 1]] = True
    return cols


def paper_parts(D64, coverage, bounds, N):
    """The SVD part of the paper's formula, once per data set: [(columns, rows-of-suite k, U, S', Vt)]."""
    parts = []
    for k, suite in enumerate(SUITES if coverage == "block" else [list(range(10))]):
        cols = suite_columns(suite, bounds, N)
        U, sv, Vt = np.linalg.svd(D64[cols], full_matrices=False)
        s_prime = sv / (sv**2 + 2.0)  # lambda = 1, eps = 0: S'_k = s_k / (s_k^2 + 2 lambda)
        parts.append((k, cols, U, s_prime, Vt))
    return parts


def paper_apply(parts, S, suite_of, coverage):
    """``E = P U S' V^T`` per suite, in chunks of models. Returns E (M, d)."""
    M = S.shape[0]
    E = np.empty((M, parts[0][4].shape[1]))
    for k, cols, U, s_prime, Vt in parts:
        rows = np.flatnonzero(suite_of[:M] == k) if coverage == "block" else np.arange(M)
        for lo in range(0, rows.size, CHUNK):
            r = rows[lo : lo + CHUNK]
            block = S[r][:, cols] if coverage == "block" else S[r[0] : r[-1] + 1]
            Y, _ = signed_outcomes(block)
            E[r] = ((Y @ U) * s_prime) @ Vt
    return E


def run_group(N: int, Ms: list[int], d: int, coverage: str, paper: bool, add_one: bool) -> list[dict]:
    """All M for one (N, d, coverage): the data is made once for the largest M (smaller M use its first rows)
    and the SVD of the paper's formula is computed once and its time added to each M's product part."""
    t = time.perf_counter()
    D, S_all, suite_of, bounds = make_data(N, max(Ms), d, coverage)
    gen_s = time.perf_counter() - t
    D64 = D.astype(np.float64)
    parts, svd_s = None, None
    note = None
    if paper and coverage == "block" and N * d > PAPER_BLOCK_MAX_ND:
        paper = False
        note = (f"paper formula skipped for block coverage at N*d > {PAPER_BLOCK_MAX_ND:,}: it needs one SVD per "
                "suite (4 SVDs of 50-100% of the prompts), several times the dense SVD time on this shared 2-core VM")
    if paper:
        t = time.perf_counter()
        parts = paper_parts(D64, coverage, bounds, N)
        svd_s = time.perf_counter() - t
    rows = []
    for M in sorted(Ms):
        S = S_all[:M]
        out: dict = dict(N=N, M=M, d=d, coverage=coverage, gen_s=gen_s, input_gb=(D.nbytes + S.nbytes) / 1e9,
                         load=os.getloadavg()[0])
        if note:
            out["paper_note"] = note
        # small configurations: best of 3 (the machine is shared; the minimum is the least disturbed run)
        repeats = 3 if M * N * d <= 1e10 else 1
        out["repeats"] = repeats
        fit_times, dtd_times, yd_times = [], [], []
        for rep in range(repeats):
            if rep == 0:
                tracemalloc.start()
            t = time.perf_counter()
            solver = HyperplaneSolver(lam=1.0, eps=0.0).fit(D, S)
            fit_times.append(time.perf_counter() - t)
            if rep == 0:
                out["fit_peak_gb"] = tracemalloc.get_traced_memory()[1] / 1e9
                tracemalloc.stop()

            # the two unavoidable products, float64 BLAS on ready operands
            t = time.perf_counter()
            G = D64.T @ D64
            dtd_times.append(time.perf_counter() - t)
            yd = 0.0
            Y = np.empty((min(CHUNK, M), N))
            b = np.empty((min(CHUNK, M), d))
            for lo in range(0, M, CHUNK):
                k = min(CHUNK, M - lo)
                np.multiply(S[lo : lo + k], 2.0, out=Y[:k])
                Y[:k] -= 1.0
                np.nan_to_num(Y[:k], copy=False, nan=0.0)
                t = time.perf_counter()
                np.matmul(Y[:k], D64, out=b[:k])
                yd += time.perf_counter() - t
            yd_times.append(yd)
        out["fit_s"], out["dtd_s"], yd = min(fit_times), min(dtd_times), min(yd_times)
        out["patterns"] = len(solver.patterns_)
        out["yd_s"] = yd
        out["products_s"] = out["dtd_s"] + yd
        out["ratio"] = out["fit_s"] / out["products_s"]
        out["gram_diff"] = float(np.abs(G - solver.gram_).max())
        del Y, b, G
        if paper:
            t = time.perf_counter()
            E = paper_apply(parts, S, suite_of, coverage)
            out["svd_s"] = svd_s
            out["paper_s"] = svd_s + time.perf_counter() - t
            out["paper_diff"] = float(np.abs(E - solver.normals_).max())
            del E
        if add_one and M == min(Ms):
            out.update(time_add_one(solver, D, S))
        del solver
        rows.append(out)
        # progress file (one JSON row per line), so finished rows survive an interrupted run
        with open(os.environ.get("BENCH_SOLVER_ROWS", "/tmp/bench_solver_rows.jsonl"), "a") as fh:
            fh.write(json.dumps(dict(out, rss_gb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9)) + "\n")
    for r in rows:
        r["rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
    return rows


def time_add_one(solver: HyperplaneSolver, D: np.ndarray, S: np.ndarray, repeats: int = 15) -> dict:
    """Median time to add one model (a copy of an existing model's coverage, new 0/1 outcomes).

    Splits it into the b pass and the solve (the pattern's projection is cached), and times the plain
    streaming pass ``y @ D`` (float32 BLAS gemv over all of D) for reference.
    """
    rng = np.random.default_rng(1)
    N = D.shape[0]
    res: dict = {}
    tot, bpass, solve, gemv = [], [], [], []
    for r in range(repeats):
        s = (rng.random(N) < 0.5).astype(np.float64)
        s[np.isnan(S[r % S.shape[0]])] = np.nan
        t = time.perf_counter()
        solver.add_models(s, [f"added{r}"])
        tot.append(time.perf_counter() - t)
        # the two parts on the same input
        y, observed = signed_outcomes(s)
        pat = solver.patterns_[solver.pattern_of_[-1]]
        t = time.perf_counter()
        bi = solver._coverage.sparse_b(y[0], observed[0], pat)
        bpass.append(time.perf_counter() - t)
        t = time.perf_counter()
        _ = bi @ pat.proj
        solve.append(time.perf_counter() - t)
        y32 = y[0].astype(np.float32)
        t = time.perf_counter()
        _ = y32 @ D
        gemv.append(time.perf_counter() - t)
    res["add_one_ms"] = 1e3 * float(np.median(tot))
    res["add_one_min_ms"] = 1e3 * float(np.min(tot))
    res["add_b_ms"] = 1e3 * float(np.median(bpass))
    res["add_solve_ms"] = 1e3 * float(np.median(solve))
    res["gemv32_ms"] = 1e3 * float(np.median(gemv))
    res["d_mb"] = D.nbytes / 1e6
    return res


def fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def table(rows: list[dict]) -> str:
    head = (
        "| N | M | d | coverage | patterns | fit s | DtD s | YD s | ratio fit/(DtD+YD) | paper SVD s | "
        "of which SVD s | max abs diff | fit peak alloc GB | inputs GB | process peak RSS GB |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        lines.append(
            f"| {r['N']:,} | {r['M']:,} | {r['d']} | {r['coverage']} | {r['patterns']} | {fmt(r['fit_s'])} | "
            f"{fmt(r['dtd_s'])} | {fmt(r['yd_s'])} | {fmt(r['ratio'])} | "
            f"{'skipped (1)' if r.get('paper_note') else fmt(r.get('paper_s'))} | "
            f"{fmt(r.get('svd_s'))} | {fmt(r.get('paper_diff'), '.1e')} | {fmt(r['fit_peak_gb'], '.2f')} | "
            f"{fmt(r['input_gb'], '.2f')} | {fmt(r['rss_gb'], '.1f')} |"
        )
    text = head + "\n".join(lines) + "\n"
    notes = sorted({r["paper_note"] for r in rows if r.get("paper_note")})
    if notes:
        text += "\n" + "\n".join(f"({i}) {n}." for i, n in enumerate(notes, 1)) + "\n"
    adds = [r for r in rows if "add_one_ms" in r]
    if adds:
        text += (
            "\nAdding ONE model (0/1 outcomes, coverage of an existing model, pattern projection cached), "
            "median of 15:\n\n| N | d | coverage | M | add one ms (min) | b pass ms | solve ms | "
            "plain float32 gemv y@D ms | D MB |\n|---|---|---|---|---|---|---|---|---|\n"
        )
        for r in adds:
            text += (
                f"| {r['N']:,} | {r['d']} | {r['coverage']} | {r['M']:,} | {fmt(r['add_one_ms'], '.1f')} "
                f"({fmt(r['add_one_min_ms'], '.1f')}) | {fmt(r['add_b_ms'], '.1f')} | {fmt(r['add_solve_ms'], '.2f')} | "
                f"{fmt(r['gemv32_ms'], '.1f')} | {fmt(r['d_mb'], '.0f')} |\n"
            )
    return text


def environment() -> str:
    try:
        from threadpoolctl import threadpool_info

        blas = ", ".join(f"{i['internal_api']} {i.get('version')} ({i.get('architecture')}, {i['num_threads']} threads)"
                         for i in threadpool_info())
    except Exception:  # pragma: no cover - threadpoolctl missing
        blas = "unknown"
    return (
        f"numpy {np.__version__}; BLAS: {blas}; {os.cpu_count()} CPUs; {platform.processor() or platform.machine()}; "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; load average at start "
        f"{os.getloadavg()[0]:.1f}"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--N", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--M", type=int, nargs="+", default=[100, 1_000, 10_000])
    ap.add_argument("--d", type=int, nargs="+", default=[384, 768])
    ap.add_argument("--coverage", nargs="+", default=["dense", "block"], choices=["dense", "block"])
    ap.add_argument("--no-paper", action="store_true", help="skip the paper's SVD formula")
    ap.add_argument("--out", type=Path, help="also write the Markdown table here")
    ap.add_argument("--table-from", type=Path, help="only print the table of a progress file (JSON rows)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one configuration, print JSON
    args = ap.parse_args(argv)
    if args.one:
        cfg = json.loads(args.one)
        print(json.dumps(run_group(**cfg)))
        return 0
    if args.table_from:
        rows = [json.loads(line) for line in args.table_from.read_text().splitlines() if line.strip()]
        print(table(rows))
        return 0
    rows = []
    env = environment()
    print(env, file=sys.stderr)
    for N in args.N:
        for d in args.d:
            for coverage in args.coverage:
                cfg = dict(N=N, Ms=args.M, d=d, coverage=coverage, paper=not args.no_paper,
                           add_one=(N == 100_000 and d == 768))
                proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(cfg)],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"FAILED {cfg}:\n{proc.stderr}", file=sys.stderr)
                    return 1
                for row in json.loads(proc.stdout.strip().splitlines()[-1]):
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
    text = f"Environment: {env}\n\n" + table(rows)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
