"""PNG plots of an evaluation (matplotlib, Agg backend): ROC curves, the eps/lambda sweep, per-benchmark bars."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import metrics

__all__ = ["write_plots"]


def write_plots(result: dict, pooled: dict, out_dir: Path, prefix: str) -> list[Path]:
    """Write ``{prefix}_roc.png``, ``{prefix}_sweep.png`` (when there is a sweep) and ``{prefix}_benchmarks.png``.

    ``pooled``: method -> :class:`~indexer.evaluation.protocol.Pooled` held-out predictions. Returns the paths.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    title = f"{Path(str(result['data'])).name} ({result['split']})"
    paths = []

    fig, ax = plt.subplots(figsize=(5.5, 5))
    for name, pool in pooled.items():
        scores, s, *_ = pool.arrays()
        fpr, tpr = metrics.roc_curve(scores, s)
        ax.plot(fpr, tpr, label=f"{name} (pooled AUC {metrics.roc_auc(scores, s):.3f})")
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax.set(xlabel="false-positive rate", ylabel="true-positive rate", title=f"success prediction ROC: {title}")
    ax.legend(loc="lower right", fontsize=8)
    paths.append(_save(fig, out_dir / f"{prefix}_roc.png"))

    sweep = result.get("sweep") or []
    if sweep:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        base_lam, base_eps = result["paper"]["lam"], result["paper"]["eps"]
        for ax, key, fixed_key, fixed, label in (
            (axes[0], "eps", "lam", base_lam, f"eps (lambda = {base_lam:g})"),
            (axes[1], "lam", "eps", base_eps, f"lambda (eps = {base_eps:g})"),
        ):
            rows = sorted((r for r in sweep if r[fixed_key] == fixed), key=lambda r: r[key])
            x = [r[key] for r in rows]
            for metric, style in (("auc", "o-"), ("selection_accuracy", "s-")):
                ax.plot(x, [r[metric] for r in rows], style, label=f"paper {metric}")
                for base in ("bsp", "knn"):
                    if base in result["methods"]:
                        ax.axhline(result["methods"][base][metric], lw=0.8, ls=":", color="C2" if base == "bsp" else "C3")
            if key == "lam":
                ax.set_xscale("log")
            ax.set(xlabel=label, title=f"ablation: {title}")
            ax.legend(fontsize=8)
        fig.text(0.5, 0.01, "dotted: bsp (green) and knn (red) at the same metric", ha="center", fontsize=8)
        paths.append(_save(fig, out_dir / f"{prefix}_sweep.png"))

    groups = sorted({str(g) for pool in pooled.values() for g in pool.arrays()[2]})
    if groups:
        fig, axes = plt.subplots(2, 1, figsize=(max(6, 0.7 * len(groups) * len(pooled) / 2), 7), sharex=True)
        width = 0.8 / max(len(pooled), 1)
        xs = np.arange(len(groups))
        for k, (name, pool) in enumerate(pooled.items()):
            scores, s, g, sel, sel_g = pool.arrays()
            g, sel_g = g.astype(str), sel_g.astype(str)
            auc = [metrics.roc_auc(scores[g == b], s[g == b]) for b in groups]
            acc = [float(sel[sel_g == b].mean()) if (sel_g == b).any() else np.nan for b in groups]
            axes[0].bar(xs + k * width, auc, width, label=name)
            axes[1].bar(xs + k * width, acc, width, label=name)
        axes[0].set(ylabel="AUC", title=f"per benchmark: {title}")
        axes[1].set(ylabel="selection accuracy")
        axes[1].set_xticks(xs + 0.4 - width / 2, groups, rotation=60, ha="right", fontsize=7)
        axes[0].legend(fontsize=8, ncol=len(pooled))
        lo = min(0.5, *(b.get_height() for b in axes[0].patches if np.isfinite(b.get_height())))
        axes[0].set_ylim(lo - 0.02, None)
        paths.append(_save(fig, out_dir / f"{prefix}_benchmarks.png"))
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
