"""PNG plots of an evaluation (matplotlib, Agg backend): ROC curves, reliability (calibration), the eps/lambda
sweep, per-benchmark bars. Every contestant has one fixed colour in every plot (:func:`colours`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import metrics

__all__ = ["write_plots", "check_plots_dir", "make_plots_dir", "plots_prefix", "remove_stale_plots", "PLOT_KINDS",
           "colours", "COLOURS"]

#: the fixed colour of each built-in contestant (matplotlib's tab10); any other contestant takes the next unused
#: one in the order of its name (:func:`colours`), so it too is the same in every plot of every run
COLOURS = {"default": "#1f77b4", "paper": "#ff7f0e", "bsp": "#2ca02c", "knn": "#d62728"}
_SPARE = ["#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8", "#ffbb78",
          "#98df8a", "#ff9896", "#c5b0d5"]


def colours(names) -> dict[str, str]:
    """name -> colour: :data:`COLOURS` for the built-in contestants, the others from a spare palette in name order."""
    out = {n: COLOURS[n] for n in names if n in COLOURS}
    spare = iter(_SPARE)
    for n in sorted(n for n in names if n not in COLOURS):
        out[n] = next(spare, "#333333")
    return out


def check_plots_dir(out_dir) -> Path:
    """``out_dir`` if PNGs can be written there: a folder that exists and can be written, or a path that does not exist
    yet whose nearest existing parent is a folder that can be written (it is created when the plots are written).
    Otherwise a :class:`~indexer.errors.ConfigError` naming the path and what is wrong, so that ``evaluate --plots``
    fails before the evaluation runs (before, a file there failed with a FileExistsError traceback at its end)."""
    from ..config import check_output_folder
    from ..errors import ConfigError, arg

    if str(out_dir) == "":
        raise ConfigError(f"{arg('plots_dir', '', flag='--plots', quote=False)}: an empty path; give a folder to write the PNGs into")
    return check_output_folder(Path(out_dir), "plots_dir", "the PNGs")


def make_plots_dir(out_dir) -> Path | None:
    """``out_dir`` checked (:func:`check_plots_dir`) and created: ``evaluate`` calls it before its work, so a folder
    that passes the check and still cannot be created (under ``/proc``, a read-only mount whose parent looks writable)
    is a ConfigError before the evaluation runs; before, it failed after all of the work, and its numbers were lost.
    Returns the outermost folder this call created (``out_dir`` or a parent), None when ``out_dir`` existed: what
    :func:`remove_new_plots_dir` removes when the evaluation then fails before writing into it."""
    out_dir = check_plots_dir(out_dir)
    made = None
    probe = out_dir
    while not (probe.exists() or probe.is_symlink()) and probe.parent != probe:
        made, probe = probe, probe.parent
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # made a file, or unwritable, since the check
        from ..errors import ConfigError, arg

        raise ConfigError(f"{arg('plots_dir', str(out_dir), flag='--plots', quote=False)}: cannot be created "
                          f"({exc.strerror or exc}); give a folder to write the PNGs into") from None
    return made


def remove_new_plots_dir(out_dir, made: Path | None) -> None:
    """Remove the folders :func:`make_plots_dir` created (``out_dir`` up to ``made``) that are still empty: an
    evaluation that failed before writing a plot (a bad data path) leaves no empty folder behind. A folder holding
    anything (a split's plots written before a later one failed), or one that existed before (``made`` None), stays."""
    import os

    if made is None:
        return
    folder, made = Path(out_dir).absolute(), Path(made).absolute()
    while True:
        try:
            os.rmdir(folder)  # only an empty folder
        except OSError:
            return
        if folder == made or folder.parent == folder:
            return
        folder = folder.parent


def roc_curves(result: dict, pooled: dict, unit: str) -> list[tuple[str, np.ndarray, np.ndarray, str, str]]:
    """(name, fpr, tpr, legend label, line style) of each contestant's ROC curve over its pooled held-out cells. A
    curve identical to an earlier contestant's (the same ranking of the cells: ``bsp`` and ``benchbest`` on a
    leave-one-benchmark-out split) is dashed and its label says whose it is: drawn solid, it hid the earlier one, whose
    legend entry then named a line the plot did not show."""
    out, seen = [], []
    for name, pool in pooled.items():
        scores, s, *_ = pool.arrays()
        fpr, tpr = metrics.roc_curve(scores, s)
        mean_auc = result.get("methods", {}).get(name, {}).get("auc", float("nan"))
        pooled_auc = metrics.roc_auc(scores, s)
        if not np.isfinite(pooled_auc):  # no positive or no negative cell: no curve (roc_curve's diagonal is a filler)
            out.append((name, fpr, tpr, f"{name}: no AUC (its held-out cells are all successes or all failures; no "
                                        "curve)", ""))
            continue
        label = f"{name}: AUC {_num(mean_auc)} mean over {unit} (pooled {pooled_auc:.3f})"
        same = next((n for n, f, t in seen if f.shape == fpr.shape and np.array_equal(f, fpr) and np.array_equal(t, tpr)),
                    None)
        if same is not None:
            label += f"; the same curve as {same} (dashed)"
        out.append((name, fpr, tpr, label, "--" if same is not None else "-"))
        seen.append((name, fpr, tpr))
    return out


def write_plots(result: dict, pooled: dict, out_dir: Path, prefix: str) -> list[Path]:
    """Write ``{prefix}_roc.png``, ``{prefix}_sweep.png`` (when there is a sweep) and ``{prefix}_benchmarks.png``.

    ``pooled``: method -> :class:`~indexer.evaluation.protocol.Pooled` held-out predictions. Returns the paths.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    make_plots_dir(out_dir)
    out_dir = Path(out_dir)
    # every data set pooled (the data "a + b" as a path is only b); one data set: its folder's name
    names = [Path(str(d["name"])).name or str(d["name"]) for d in result.get("datasets") or []]
    title = f"{' + '.join(names) if names else Path(str(result['data'])).name} ({result['split']})"
    paths = []

    col = colours(list(pooled) + list(result.get("methods", {})))
    unit = "folds" if result["split"] == "oos" else ("seeds" if result["split"] == "in-sample" else "(group, seed) folds")
    fig, ax = plt.subplots(figsize=(6, 5.5))
    for name, fpr, tpr, label, style in roc_curves(result, pooled, unit):
        # a contestant without an AUC keeps its legend entry but draws no line (before: the chance diagonal, labelled
        # "AUC nan", and "the same curve as default" for every other contestant)
        ax.plot(*((fpr, tpr) if style else ([], [])), color=col[name], ls=style or "-", label=label)
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax.set(xlabel="false-positive rate (failures predicted to succeed)",
           ylabel="true-positive rate (successes predicted to succeed)",
           title=f"success prediction ROC: {title}\ncurves: the held-out cells of all {unit} pooled\n"
                 f"AUC in the legend: the mean over {unit} (the table's), pooled in brackets")
    ax.title.set_fontsize(9)
    ax.legend(loc="lower right", fontsize=7)
    paths.append(_save(fig, out_dir / f"{prefix}_roc.png"))

    with_p = {n: pool for n, pool in pooled.items() if np.isfinite(pool.probabilities()).any()}
    if with_p:
        fig, (ax, hx) = plt.subplots(2, 1, figsize=(6, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
        for name, pool in with_p.items():
            _, s, *_ = pool.arrays()
            prob = pool.probabilities()
            rel = metrics.reliability(prob, s)
            full = rel["n"] > 0
            e = result.get("methods", {}).get(name, {}).get("ece", float("nan"))
            ax.plot(rel["p"][full], rel["s"][full], "o-", color=col[name], ms=4,
                    label=f"{name}: ECE {_num(e)} mean over {unit} (pooled {_num(metrics.ece(prob, s))})")
            centres = (rel["edges"][:-1] + rel["edges"][1:]) / 2
            hx.plot(centres, rel["n"] / max(rel["n"].sum(), 1), "o-", color=col[name], ms=3)
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--", label="perfect calibration")
        ax.set(ylabel="observed success rate in the bin", xlim=(0, 1), ylim=(0, 1),
               title=f"reliability ({metrics.ECE_BINS} equal-width bins, held-out cells pooled): {title}")
        ax.title.set_fontsize(9)
        ax.legend(loc="upper left", fontsize=7)
        hx.set(xlabel="predicted probability of success", ylabel="share of cells")
        paths.append(_save(fig, out_dir / f"{prefix}_reliability.png"))

    # an ablation without a finite number (every fold without a cell to score) has nothing to draw: no plot (matplotlib
    # refuses a log axis of NaN alone)
    sweep = [r for r in result.get("sweep") or [] if any(np.isfinite(r.get(k, np.nan))
                                                         for k in ("auc", "selection_accuracy"))]
    if sweep:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        base_lam, base_eps = result["paper"]["lam"], result["paper"]["eps"]
        for ax, key, fixed_key, fixed, label in (
            (axes[0], "eps", "lam", base_lam, f"eps (lambda = {base_lam:g})"),
            (axes[1], "lam", "eps", base_eps, f"lambda (eps = {base_eps:g})"),
        ):
            rows = sorted((r for r in sweep if r[fixed_key] == fixed), key=lambda r: r[key])
            x = [r[key] for r in rows]
            for metric, style in (("auc", "o-"), ("selection_accuracy", "s--")):
                ax.plot(x, [r[metric] for r in rows], style, color=col["paper"], label=f"paper {metric}")
                for base in ("bsp", "knn"):
                    if base in result["methods"]:
                        ax.axhline(result["methods"][base][metric], lw=0.8, ls=":", color=col[base])
            for base in ("bsp", "knn"):  # a legend entry per colour: the note below named no colour
                if base in result["methods"]:
                    ax.plot([], [], lw=0.8, ls=":", color=col[base], label=f"{base} (AUC and selection accuracy)")
            if key == "lam":
                ax.set_xscale("log")
            ax.set(xlabel=label, ylabel="AUC (o-) / selection accuracy (s--), mean over folds", title=f"ablation: {title}")
            ax.legend(fontsize=8)
        fig.text(0.5, 0.01, "dotted: bsp and knn at the same metric (their colours)", ha="center", fontsize=8)
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
            axes[0].bar(xs + k * width, auc, width, label=name, color=col[name])
            axes[1].bar(xs + k * width, acc, width, label=name, color=col[name])
        axes[0].set(ylabel="AUC (held-out cells pooled)", title=f"per benchmark: {title}")
        axes[1].set(ylabel="selection accuracy", xlabel="benchmark")
        axes[1].set_xticks(xs + 0.4 - width / 2, groups, rotation=60, ha="right", fontsize=7)
        # beside the AUC panel, one contestant a row: one row of every contestant was wider than the figure with the
        # peers (eight: `default` cut off the PNG, the rest over the axis and the bars)
        axes[0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        # (no finite bar at all, e.g. every outcome a success: no AUC anywhere, the floor stays 0.5)
        finite = [b.get_height() for b in axes[0].patches if np.isfinite(b.get_height())]
        lo = min([0.5, *finite])
        axes[0].set_ylim(lo - 0.02, None if finite else 1.0)
        if not finite:  # an empty panel with an axis from 0.1 to 0.45 said nothing of why
            axes[0].text(0.5, 0.5, "no AUC: every benchmark's held-out cells are all successes or all "
                         "failures", transform=axes[0].transAxes, ha="center", va="center", fontsize=8)
        paths.append(_save(fig, out_dir / f"{prefix}_benchmarks.png"))
    return paths


#: the most bytes of the data sets' part of a plot's file name (:func:`plots_prefix`): a file name is at most 255
#: bytes, and the hidden temporary name a plot is first written to adds ``.``, ``_<split>_reliability.png`` and
#: ``.<pid>.tmp``
PLOTS_NAME_BYTES = 120


def plots_prefix(names: list[str], split: str) -> str:
    """The prefix of the ``--plots`` file names of a split: the data sets' names joined by ``+``, then ``_<split>``
    (``mmlu_pro+evalarena_code_oos``). Names longer than :data:`PLOTS_NAME_BYTES` together are cut there (at a
    character) and followed by 8 hex of the sha256 of the whole, so that two sets of data sets never share a name;
    pooled folders of long names would otherwise make a file name past 255 bytes (an OSError, File name too long,
    after all of the evaluation's work)."""
    import hashlib

    joined = "+".join(names)
    if len(joined.encode()) > PLOTS_NAME_BYTES:
        cut = joined.encode()[:PLOTS_NAME_BYTES - 9].decode(errors="ignore")
        joined = f"{cut}-{hashlib.sha256(joined.encode()).hexdigest()[:8]}"
    return f"{joined}_{split}"


#: the plots :func:`write_plots` may write, ``{prefix}_{kind}.png`` each
PLOT_KINDS = ("roc", "reliability", "sweep", "benchmarks")


def remove_stale_plots(out_dir: Path, prefix: str, written: list[Path]) -> list[Path]:
    """Remove the ``{prefix}_{kind}.png`` (:data:`PLOT_KINDS`) in ``out_dir`` that this run did not write (``written``):
    an earlier run's plots of the same data sets and split (a ``--no-sweep`` rerun: its ``_sweep.png``), which beside
    the new ones would read as this result's. Returns the paths removed (evaluate says each)."""
    removed = []
    for kind in PLOT_KINDS:
        path = Path(out_dir) / f"{prefix}_{kind}.png"
        if path not in written and path.is_file():
            path.unlink()
            removed.append(path)
    return removed


def _num(x: float) -> str:
    """A metric in a legend: three decimals, ``-`` without a value (as the table shows it; before, "nan")."""
    return f"{x:.3f}" if np.isfinite(x) else "-"


def _save(fig, path: Path) -> Path:
    """Write ``fig`` to ``path`` whole or not at all: to a hidden temporary file beside it, then renamed into place.
    Before, straight to ``path``: Ctrl-C (or a full disk) while matplotlib wrote it left a truncated PNG under the
    plot's name, over the previous run's plot of that name."""
    import os

    import matplotlib.pyplot as plt

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fig.tight_layout()
        fig.savefig(tmp, dpi=110, format="png")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        plt.close(fig)
    return path
