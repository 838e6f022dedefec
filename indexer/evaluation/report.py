"""Plain-text tables of an evaluation result (the dict :func:`indexer.evaluate.evaluate` returns)."""

from __future__ import annotations

import math

from ..errors import counted

__all__ = ["format_result", "format_sweep", "rejected_summary"]

_COLS = [
    ("auc", "AUC"),
    ("accuracy", "sign acc"),
    ("correlation", "bench r"),
    ("selection_accuracy", "sel acc"),
    ("selection_recall", "sel recall"),
    ("ece", "ECE"),
    ("brier", "Brier"),
]
#: the main table in two, each within 80 columns (a name of 10, columns of 13: ``-0.105±0.084`` is 12): success
#: prediction and its calibration, then model selection with the oracle's row; one table of the seven columns was
#: 115 wide, and on an 80-column terminal each row wrapped, its numbers under the wrong headers
_PREDICTION_COLS = [c for c in _COLS if c[0] not in ("selection_accuracy", "selection_recall")]
_SELECTION_COLS = [c for c in _COLS if c[0] in ("selection_accuracy", "selection_recall")]
_W = 13
#: the columns of the covered / uncovered and per-data-set tables
_PART_COLS = [("auc", "AUC"), ("selection_accuracy", "sel acc"), ("ece", "ECE"), ("brier", "Brier")]


def _num(x: float | None, std: float | None = None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if std is None or (isinstance(std, float) and math.isnan(std)):
        return f"{x:.3f}"
    return f"{x:.3f}±{std:.3f}"


def format_result(res: dict) -> str:
    """The method x metric table of one split (mean ± std over folds or seeds), the oracle and fold details."""
    lines = [
        f"{res['data']}: {counted(res['models'], 'model')} x {counted(res['prompts'], 'prompt')} (density {res['density']:.3f}), "
        f"encoder {res['encoder']}",
        *([("pooled: " + ", ".join(f"{d['name']} ({counted(d['models'], 'model')}, {counted(d['prompts'], 'prompt')})"
                                   for d in res["datasets"]))] if len(res.get("datasets", [])) > 1 else []),
        # (the coverage split's protocol starts with its name: "split coverage: coverage: ..." said it twice)
        f"split {res['split']}: {res['protocol'].removeprefix(res['split'] + ': ')}",
        "",
    ]
    if res.get("queries", "full") != "full":
        lines[-1:-1] = [f"queries: {res['queries']} ({res['queries_changed']} of {res['prompts']} prompts queried with "
                        f"a shorter text than the one the models answered)"]
    # what reading the data warned of first (outcomes averaged, prompts left out: before, on stderr and in the JSON
    # only, so `taskspace evaluate DATA > result.txt` kept the numbers without them), then the evaluation's warnings
    for w in [*res.get("data_warnings", []), *res.get("warnings", [])]:
        lines[-1:-1] = [f"warning: {w}"]
    if res.get("rejected_rows"):
        rej = res["rejected_rows"]
        n = res.get("rejected_count", len(rej))
        lines[-1:-1] = [f"warning: {n} input {'rows or problems' if n > 1 else 'row or problem'} skipped, first: {rej[0]}"
                        + (f" (--json lists {len(rej)} under rejected_rows)" if n > 1 else "")]
    for title, cols in (("success prediction and calibration", _PREDICTION_COLS),
                        ("model selection (the oracle: the best observed model on every prompt)", _SELECTION_COLS)):
        header = f"{'method':<10}" + "".join(f"{label:>{_W}}" for _, label in cols)
        if cols is _SELECTION_COLS:
            lines.append("")
        lines += [title, header, "-" * len(header)]
        for name, m in res["methods"].items():
            lines.append(f"{name:<10}" + "".join(f"{_num(m[k], m.get(k + '_std')):>{_W}}" for k, _ in cols))
    o = res["oracle_detail"]
    lines.append(f"{'oracle':<10}" + "".join(f"{_num(o[k]):>{_W}}" for k, _ in _SELECTION_COLS))
    for part in ("covered", "uncovered"):
        if any(part in m for m in res["methods"].values()):
            lines += ["", f"{part} models (selection among them only)", _part_table({n: m.get(part) for n, m in res["methods"].items()})]
    names = sorted({k for m in res["methods"].values() for k in m.get("datasets", {})}, key=str)
    for ds in names:
        lines += ["", f"data set {ds} (its target prompts)",
                  _part_table({n: m.get("datasets", {}).get(ds) for n, m in res["methods"].items()})]
    probs = [(n, m.get("probabilities")) for n, m in res["methods"].items()]
    if any(p for _, p in probs):  # a contestant a line: `; `-joined they were one line of 400-700 characters
        lines.append("\nprobabilities (ECE: 10 equal-width bins; Brier):")
        lines += [f"  {n}: {p or 'none'}" for n, p in probs]
    if res.get("folds"):  # fit + predict time of each contestant (the peers' training included)
        lines.append("\nseconds per fold (fit + predict): " + ", ".join(
            f"{n} {m.get('seconds', 0.0) / len(res['folds']):.2f}" for n, m in res["methods"].items()))
    d = res["methods"].get("default", {}).get("options")
    if d is not None:
        lines.append(f"\ndefault = {res['default_method']} {d}; paper = lambda {res['paper']['lam']}, eps {res['paper']['eps']}")
    if res.get("sweep"):
        lines += ["", format_sweep(res["sweep"])]
    lines.append(f"\n{res['seconds']['total']:.1f}s (encode {res['seconds']['encode']:.1f}s)")
    return "\n".join(lines)


def rejected_summary(res: dict) -> str | None:
    """The line ``taskspace evaluate`` ends with on stderr when the reader rejected input (it then exits 1, as
    ``taskspace ingest`` does for rejected input): how many rows or problems, how many outcome cells were kept and
    evaluated, and where the details are; None when nothing was rejected. ``res``: one split's result, or the
    several splits' (they share the data)."""
    part = next((v for v in res.values() if isinstance(v, dict) and "rejected_count" in v), res)
    n = part.get("rejected_count", len(part.get("rejected_rows", [])))
    if not n:
        return None
    listed = len(part.get("rejected_rows", []))
    return (f"{n} input {'rows or problems were' if n > 1 else 'row or problem was'} rejected; the rest "
            f"({part['cells']} outcome cells of {counted(part['models'], 'model')} x {counted(part['prompts'], 'prompt')}) was evaluated: "
            f"--json lists {'the first ' if listed < n else ''}{listed} under rejected_rows (file:line: what is wrong)")


def _part_table(entries: dict) -> str:
    header = f"{'method':<10}" + "".join(f"{label:>{_W}}" for _, label in _PART_COLS)
    out = [header, "-" * len(header)]
    for name, m in entries.items():
        if m:
            out.append(f"{name:<10}" + "".join(f"{_num(m.get(k), m.get(k + '_std')):>{_W}}" for k, _ in _PART_COLS))
    return "\n".join(out)


def format_sweep(rows: list[dict]) -> str:
    """The eps / lambda ablation of the paper's method."""
    out = ["paper-method ablation over eps and lambda (mean over folds)", f"{'lambda':>8} {'eps':>6} {'AUC':>7} {'sign acc':>9} {'sel acc':>8} {'sel recall':>11}"]
    for r in rows:
        out.append(
            f"{r['lam']:>8g} {r['eps']:>6g} {_num(r['auc']):>7} {_num(r['accuracy']):>9} "
            f"{_num(r['selection_accuracy']):>8} {_num(r['selection_recall']):>11}"
        )
    return "\n".join(out)
