"""``taskspace evaluate``: the paper's protocol (DESIGN.md §3) on a folder of real outcomes.

I/O lives here (read the data, encode the prompts through the embedding cache, write plots); the logic is in
:mod:`indexer.evaluation` (splits, metrics, contestants, protocol, report, plots).

The contestants compared in one run (under the key ``methods`` of the results; :mod:`indexer.evaluation.contestants`):

- ``default``: what taskspace serves, the method ``TASKSPACE_METHOD`` (or ``method``; :mod:`indexer.space`) in its
  own representation (:mod:`indexer.represent`: covariates, the question/options split), its models in the index
  form (:func:`indexer.represent.index_vectors`), its probabilities from the space's own calibration
  (:mod:`indexer.posterior`), each fitted on the fold's source exactly as ``taskspace index`` fits them;
- ``paper``: the paper's exact method (lambda 1, eps 0 unless ``lam``/``eps`` say otherwise);
- ``knn``: k = 5 nearest source prompts by cosine, the model's mean outcome there;
- ``bsp``: best source performer (each model's mean source outcome, the same for every prompt);
- with ``peers`` (``--peers``) ``fast``: ``clusters`` (k-means cluster profiles) and ``benchbest`` (per-benchmark
  best); ``all`` adds ``embedllm`` and ``irt`` (trained, torch CPU): the published peers,
  :mod:`indexer.evaluation.peers`;

``paper``'s probabilities are those an index of the method ``paper`` would give (the same calibration as the
default's, on in-sample source scores since the plain method has no leverages); ``knn`` and ``bsp`` give
probabilities through a Platt map of their score cross-fitted on the source
(:class:`~indexer.evaluation.contestants.PlattCalibrated`); ``contestants`` adds more (name -> contestant). The
oracle (the best observed model on every prompt) is the ceiling.

Splits (``split``): ``in-sample``, ``oos`` (leave one group out), ``coverage`` (issue 13: a group's outcomes
hidden from half of the models, half of its prompts the targets, :func:`indexer.evaluation.splits.coverage`),
``all`` (the three), ``both`` (in-sample and oos). Several data folders are pooled into one index (models merged by
their index key, :func:`load_matrix`, :func:`indexer.outcomes.merge`), with every metric also per data set (``datasets`` of each method).

**Threads.** The folds run with one BLAS thread (:func:`indexer.solver.kernels.single_threaded_lapack`): their
products are many and of medium size (a fold's Grams, ``b`` sums, kNN similarities), and with two threads on a
shared two-core machine OpenBLAS's hand-offs cost more than they save (mmlu_pro leave-one-category-out, load average
4-5: 63.5 s wall / 52.3 s CPU with two threads, 38.3 s / 28.1 s with one; docs/BENCHMARKS.md).

``queries="stem"`` queries every held-out prompt with its question alone (the text before its answer options,
:mod:`indexer.evaluation.queries`) instead of its full text: closer to what a person types, still judged on the
outcomes of the full prompt.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from pathlib import Path

import numpy as np

from .errors import CLI, ConfigError, InputError, arg, counted
from .evaluation import protocol, splits
from .evaluation.contestants import PEER_SETS, BSPContestant, KNNContestant, PlattCalibrated, SolverContestant, peer_contestants
from .evaluation.queries import query_texts
from .outcomes import OutcomeMatrix, from_batch, merge
from .sources.common import count_rejected, is_summary
from .space import rounded_down

log = logging.getLogger(__name__)

__all__ = ["SPLITS", "SPLIT_CHOICES", "evaluate", "load_matrix", "load_pooled", "sweep_grid"]

#: what ``split`` accepts, and what each runs
SPLITS = {"in-sample": ("in-sample",), "oos": ("oos",), "coverage": ("coverage",),
          "all": ("in-sample", "oos", "coverage"), "both": ("in-sample", "oos")}
#: the choices ``taskspace evaluate --split`` shows (``both``, in-sample and oos, is still accepted)
SPLIT_CHOICES = ("in-sample", "oos", "coverage", "all", "both")
#: the most seeds ``evaluate`` takes (``--seeds``): each is a full fit of every contestant, so 1000 already runs for
#: days on a real data set; a larger number (a typo, 99999999999) ran until killed
MAX_SEEDS = 1000
#: the eps / lambda ablation: eps at the paper's lambda, lambda at the paper's eps
SWEEP_EPS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)
SWEEP_LAMBDA = (0.01, 0.1, 1.0, 10.0, 100.0)


def load_matrix(data: str | Path, group_by: str | None = None, format: str | None = None) -> OutcomeMatrix:
    """Read DATA with the ingest layer (``format``: its reader, default detected, as ``taskspace ingest --format``)
    and build the outcome matrix, each model under the key an index stores it under (:mod:`indexer.identity`).

    Extra prompt fields (``src``, ``category`` ...) are read from a table source's prompts file
    (:func:`indexer.sources.tables.prompt_fields`) when ``group_by`` asks for one, since the readers keep only
    prompt_id, benchmark and text.
    """
    from .errors import READING_FOR
    from .ingest import drop_unusable_rows
    from .sources import read_source, tables

    # the rule ingest holds for every reader: a text no hash, database or encoder takes (a lone surrogate from a JSON
    # escape in lm-eval samples, a NUL, only invisible characters) costs its rows with an error, as in an index; before,
    # the table reader alone checked, and a lone surrogate in lm-eval output ended evaluate in a UnicodeEncodeError
    reading = READING_FOR.set("evaluate")  # the readers' advice names evaluate, not ingest (errors.READING_FOR)
    try:
        batch = drop_unusable_rows(read_source(data, format))
    except InputError:
        _data_folders_inside(data, format)
        raise
    finally:
        READING_FOR.reset(reading)
    if not batch.n_outcomes:
        # a whole file's problem (an empty prompts file) first: it is why each row after it was dropped
        # then a prompts file's rows (:func:`_causes_first`)
        detail = "; ".join(str(e) for e in _causes_first(batch.errors)[:3])
        raise InputError(f"no readable outcomes{': ' + detail if detail else ''}", file=str(data))
    _refuse_mostly_rejected(data, batch)
    listed = tables.prompt_fields(data)  # every prompt id of a table source's prompts file ({} for other sources)
    fields = listed if group_by not in (None, "benchmark") else None
    # a model is the key an index stores it under (its Hub repo id when known), so that its names in several data
    # sets (`Qwen--Qwen1.5-72B-Chat`, `Qwen1.5-72B-Chat`, any case) are one model here too, as in the index
    from .identity import resolve_many

    m = from_batch(batch, fields, lambda names: {n: i.key for n, i in resolve_many(names).items()})
    _warn_repeated_texts(data, batch, m)
    _warn_whitespace_twins(data, batch, m)
    _warn_unanswered(data, batch, listed)
    return m


def _refuse_mostly_rejected(data, batch) -> None:
    """An InputError when more input was rejected than outcome rows were read: the metrics of the few rows left are
    not the data's (a `correct` column of graded values, 0.13, 0.5 ...: 5,519 of 5,575 rows rejected as not binary,
    and a full result table printed from the 56 left, exit 1 with a warning). It names a rejected row of the file that
    lost the most, its value and column, and what to do; a little rejected data is still evaluated, with a warning."""
    rejected, kept = count_rejected(batch.errors), batch.n_outcomes
    if rejected <= kept:
        return
    by_file: dict[str, int] = {}
    for e in batch.errors:
        by_file[str(e.file)] = by_file.get(str(e.file), 0) + count_rejected([e])
    worst = max(by_file, key=by_file.get)
    rows = [e for e in _causes_first(batch.errors) if str(e.file) == worst and not is_summary(e)]
    example = str(rows[0] if rows else _causes_first(batch.errors)[0])
    raise InputError(f"{rejected} of {rejected + kept} input rows were rejected, more than were read ({kept}): "
                     f"no metrics from so little of the data; e.g. {example}. Fix the data as the errors say "
                     "(the formats and their columns: docs/FORMATS.md) and run again", file=str(data))


def _data_folders_inside(data, format: str | None) -> None:
    """When DATA, which no reader took, is a folder holding data folders of the ../shared/data format (``taskspace
    evaluate ../shared/data``), an InputError naming them and the command that evaluates them; before, "cannot tell
    the format of this folder ... pass --format", which no format reads."""
    from .sources.tables import find_table_files, looks_like_table_folder

    folder = Path(str(data))
    if format not in (None, "table") or not folder.is_dir() or any(find_table_files(folder)):  # a table of its own
        return                                                                                  # has its own error
    inside = sorted((p for p in folder.iterdir() if p.is_dir() and looks_like_table_folder(p)), key=lambda p: p.name)
    if not inside:
        return
    raise InputError(f"holds no outcomes of its own but {len(inside)} data folder{'s' if len(inside) > 1 else ''} "
                     f"({', '.join(p.name for p in inside)}): give {'them' if len(inside) > 1 else 'it'} "
                     f"(`taskspace evaluate {' '.join(str(p) for p in inside)}`"
                     + (" pools them into one index; one at a time evaluates each alone)" if len(inside) > 1 else ")"),
                     file=str(folder)) from None


def _warn_unanswered(data, batch, listed: dict) -> None:
    """A warning when prompts of a table source's prompts file have no outcome row (nobody answered them): they are
    not in the evaluation. Before, "20 models x 250 prompts" for a prompts file of 251, without a word. Only when the
    reader rejected nothing: a rejected prompt (or its rejected outcome rows) is listed as rejected already, and which
    prompt ids those were is not kept apart."""
    if not listed or batch.errors:
        return
    answered = {str(i) for i in batch.to_table().prompt_ids if i is not None}
    missing = [pid for pid in listed if pid not in answered]
    if missing:
        log.warning("%s: %d of the %d prompts of its prompts file have no outcome (e.g. %s) and are not evaluated",
                    data, len(missing), len(listed), ", ".join(repr(p) for p in missing[:3]))


def _causes_first(errors: list) -> list:
    """The rejected rows with the causes first: a whole file's problems (an empty prompts file), then a prompts file's
    rows (a prompt rejected there, e.g. a prompts file without a benchmark column, is why its outcome rows were
    dropped), then the rest. The readers sort them by file name, outcomes first: before, the first shown (the
    one-line error, the table's warning) was "outcomes.csv:2: prompt_id 'p1' was rejected in the prompts file ...",
    and the cause none of them."""
    from .sources.tables import PROMPT_NAMES

    whole = [e for e in errors if e.line is None and not is_summary(e)]
    cause = [e for e in errors if e not in whole and not is_summary(e)
             and Path(str(e.file)).name.split(".")[0].lower() in PROMPT_NAMES]
    return whole + cause + [e for e in errors if e not in whole and e not in cause]


def _warn_repeated_texts(data, batch, m: OutcomeMatrix) -> None:
    """A warning when some prompt text was read under more than one (benchmark, prompt id): each text is one prompt
    (as in an index), a model's outcomes on its copies averaged, its benchmark the first one read. Before, the data
    simply had fewer prompts than its prompts file, without a word (30 mbpp prompts with the text of humaneval ones:
    "20 models x 220 prompts" of 250, the 30 counted in humaneval's fold)."""
    if m.copies is None or not (m.copies > 1).any():
        return
    from .records import prompt_hash

    t = batch.to_table()
    seen: dict[str, list[tuple[str, str]]] = {}
    for text, bench, pid in zip(t.texts, t.benchmarks, t.prompt_ids):
        seen.setdefault(prompt_hash(text), []).append((str(bench), str(pid) if pid else "?"))
    repeated = [c for c in seen.values() if len(c) > 1]
    if not repeated:
        return
    across = [c for c in repeated if len({b for b, _ in c}) > 1]
    example = " = ".join(f"{b} {i!r}" for b, i in repeated[0][:3])
    log.warning("%s: %d prompt text%s read more than once (%d rows of prompts; e.g. %s): each text is one prompt, "
                "a model's outcomes on its copies averaged%s", data, len(repeated),
                " was" if len(repeated) == 1 else "s were", sum(len(c) for c in repeated),
                example, (f"; {len(across)} of them are in more than one benchmark and count in the first one read "
                          f"(e.g. {across[0][0][0]}, not {across[0][1][0]})" if across else ""))


def _warn_whitespace_twins(data, batch, m: OutcomeMatrix) -> None:
    """A warning when prompt texts differ from another only in whitespace (a trailing newline, Windows line ends,
    doubled spaces): each is a prompt of its own, as in an index, with one embedding to rounding, so a split can hold
    one out while its twin is a source prompt. Before, without a word (an exact copy has :func:`_warn_repeated_texts`)."""
    groups: dict[str, list[str]] = {}
    for text in m.texts:
        groups.setdefault(" ".join(text.split()), []).append(text)
    twins = [g for g in groups.values() if len(g) > 1]
    if not twins:
        return
    t = batch.to_table()
    where: dict[str, tuple[str, str]] = {}
    for text, bench, pid in zip(t.texts, t.benchmarks, t.prompt_ids):
        where.setdefault(text, (str(bench), str(pid) if pid else "?"))
    (b0, i0), (b1, i1) = where.get(twins[0][0], ("?", "?")), where.get(twins[0][1], ("?", "?"))
    log.warning("%s: %d prompt text%s from another only in whitespace (%d prompts; e.g. %s %r and %s %r): each is a "
                "prompt of its own, as in an index, so a held-out prompt can have its twin among the source prompts; "
                "write each prompt once to evaluate it once", data, len(twins),
                " differs" if len(twins) == 1 else "s differ", sum(len(g) for g in twins), b0, i0, b1, i1)


@contextlib.contextmanager
def _warnings_said():
    """The messages of the warnings this module logs inside the block (a list filled as they are said; they still
    reach stderr), for the result: reading the data warns of what it changed (a text under several prompt ids
    averaged, prompts nobody answered, a data set's prompts also in another), and `--json` held the evaluation's
    warnings but not these."""
    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    keep = Keep(logging.WARNING)
    log.addHandler(keep)
    try:
        yield said
    finally:
        log.removeHandler(keep)


def load_pooled(datas, group_by: str | None = None,
                format: str | None = None) -> tuple[OutcomeMatrix, np.ndarray | None, list[str]]:
    """(matrix, per-prompt data set names or None, the names) of one or several data folders: several are
    pooled into one matrix as one index holds them (:func:`indexer.outcomes.merge`: models merged by their index
    key, :func:`load_matrix`).
    A data set's name is its folder's name (its path when two share a name)."""
    paths = [Path(str(d)) for d in datas]
    if len(paths) == 1:
        return load_matrix(paths[0], group_by, format), None, [paths[0].name or str(paths[0])]
    short = [p.name or str(p) for p in paths]
    names = short if len(set(short)) == len(short) else [str(p) for p in paths]
    resolved = [p.resolve() for p in paths]
    if len(set(names)) != len(names) or len(set(resolved)) != len(paths):  # ../ or a link to it too
        raise InputError(f"the same data folder is given twice: {', '.join(names)}")
    for a, ra in zip(paths, resolved):  # a file of a folder given too: its outcomes would be pooled with themselves
        for b, rb in zip(paths, resolved):
            if ra != rb and rb.is_relative_to(ra):
                raise InputError(f"the same data is given twice: {b} lies inside {a}; give one of them")
    matrices = [load_matrix(p, group_by, format) for p in paths]
    m, origin = merge(matrices, names)
    first = dict(zip(m.prompt_hashes, origin.tolist()))
    for name, part in zip(names, matrices):  # prompts another data set holds count there: say so, not "0 prompts"
        elsewhere = [first[h] for h in part.prompt_hashes if first[h] != name]
        if elsewhere:
            log.warning("%s: %d of its %d prompts are also in %s, where they count (in the per-data-set numbers); a "
                        "model's outcomes on a prompt in both are averaged", name, len(elsewhere),
                        len(part.prompt_hashes), ", ".join(sorted(set(elsewhere))))
    _warn_shared_benchmarks(m, matrices, names)
    return m, origin, names


def _warn_shared_benchmarks(m: OutcomeMatrix, matrices: list[OutcomeMatrix], names: list[str]) -> None:
    """A warning per benchmark name that several pooled data sets hold with different prompts (each its own
    `mmlu` subset, or another benchmark of the same name): pooled, it is one benchmark (one oos fold, one row of the
    per-benchmark numbers). Before, merged without a word. The same prompts under one name in several is no case."""
    held: dict[str, dict[str, set]] = {}  # benchmark -> data set -> its prompt hashes
    for name, part in zip(names, matrices):
        for b, h in zip(part.benchmarks.tolist(), part.prompt_hashes):
            held.setdefault(str(b), {}).setdefault(name, set()).add(h)
    for bench, by_set in held.items():
        sets = list(by_set.values())
        if len(sets) < 2 or all(s == sets[0] for s in sets[1:]):
            continue
        where = [f"{n} ({len(s)} prompts)" for n, s in by_set.items()]
        listed = " and ".join(where) if len(where) == 2 else ", ".join(where[:-1]) + " and " + where[-1]
        log.warning("benchmark %r is in %s with different prompts (%d in %s): pooled as one benchmark of %d prompts "
                    "(one oos fold, one row of per-benchmark numbers); to keep them apart, name the benchmarks "
                    "differently in one of the folders", bench, listed, len(set.intersection(*sets)),
                    "both" if len(sets) == 2 else "all", int((m.benchmarks == bench).sum()))


def sweep_grid(lam: float, eps: float) -> list[tuple[float, float]]:
    """(lambda, eps) pairs of the ablation: the eps grid at ``lam`` and the lambda grid at ``eps``."""
    grid = [(lam, e) for e in sorted(set(SWEEP_EPS) | {eps})]
    grid += [(l, eps) for l in sorted(set(SWEEP_LAMBDA) | {lam}) if (l, eps) not in grid]
    return grid


def _default_space(method: str | None):
    """The space of the ``default`` contestant: the method ``method`` (default ``TASKSPACE_METHOD``) with
    ``TASKSPACE_LAMBDA`` / ``TASKSPACE_EPS`` (:func:`indexer.space.configured`)."""
    from .space import configured

    return configured(method=method)


def _paper_space(lam: float, eps: float):
    """The space of the ``paper`` contestant: the method ``paper`` at ``lam``/``eps``, so that its probabilities
    are the calibration an index of that method would fit (in-sample scores: the plain method has no leverages)."""
    from .space import SpaceSpec, get_method

    return SpaceSpec(None, lam, eps, "paper", get_method("paper").params)


def _contestants(lam: float, eps: float, default, own: tuple | None, knn_k: int, extra: dict | None = None) -> dict:
    """name -> contestant. ``default``: the default contestant's space (:func:`_default_space`); ``own``: its
    rows when they are not the embeddings (:func:`_default_rows`); ``extra``: more contestants (name -> contestant)."""
    rows, fill = (own[:2], own[2]) if own is not None else (None, None)
    out = {
        "default": SolverContestant(default.options, rows=rows, fill=fill, space=default),
        "paper": SolverContestant({"lam": lam, "eps": eps}, space=_paper_space(lam, eps)),
        "knn": PlattCalibrated(KNNContestant(knn_k)),
        "bsp": PlattCalibrated(BSPContestant()),
    }
    for name, c in (extra or {}).items():
        if name in out:
            raise InputError(f"contestant {name!r} is built in; give it another name")
        out[name] = c
    return out


def evaluate(
    data,
    *,
    split: str = "oos",
    seeds: int = 5,
    encoder: str | None = None,
    group_by: str | None = None,
    lam: float | None = None,
    eps: float | None = None,
    method: str | None = None,
    sweep: bool = True,
    plots_dir: str | Path | None = None,
    knn_k: int = 5,
    matrix: OutcomeMatrix | None = None,
    embeddings: np.ndarray | None = None,
    queries: str = "full",
    query_embeddings: np.ndarray | None = None,
    contestants: dict | None = None,
    datasets: np.ndarray | None = None,
    peers: str = "none",
    format: str | None = None,
) -> dict:
    """Run the protocol on DATA (a folder or table, or a list of them: pooled) and return every number (see the
    module docstring for the contestants).

    ``split``: ``in-sample`` (a random 20% of prompts held out, ``seeds`` times), ``oos`` (leave one group out:
    the benchmark, or ``group_by`` field), ``coverage`` (every group, ``seeds`` times: its outcomes hidden from half
    of the models, half of its prompts the targets), or ``all`` / ``both`` (several; returns ``{"split": "all",
    "in-sample": .., "oos": .., "coverage": .., "skipped": {}}``, a split that cannot run on the data left out
    and why under ``skipped``). ``contestants``: more contestants (name -> contestant).
    ``datasets`` (N,): with ``matrix``, the data set of each prompt (as pooling several folders gives).
    ``lam``/``eps``: the paper method's lambda and eps (default 1 and 0). ``method``: the default method's name
    (default ``TASKSPACE_METHOD``). ``matrix``/``embeddings``: skip reading/encoding (tests, benchmarks).
    ``queries``: what a held-out prompt is queried with, ``full`` (its text, the paper's protocol) or ``stem``
    (its question without the answer options); ``query_embeddings`` skips encoding those texts.
    ``peers``: the published peers compared too, ``none``, ``fast`` (training-free) or ``all``
    (:data:`~indexer.evaluation.contestants.PEER_SETS`). ``format``: the reader of every DATA (default detected; the
    detection's error says to pass it).
    """
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r}; use one of {', '.join(SPLIT_CHOICES)}")
    if peers not in PEER_SETS:
        raise InputError(f"unknown {arg('peers', peers)}; use one of {', '.join(PEER_SETS)}")
    if isinstance(knn_k, bool) or not isinstance(knn_k, (int, np.integer)) or knn_k < 1:
        # before, "5" or None was a TypeError ('<' not supported), 2.5 or True ran the kNN baseline with them
        raise InputError(f"{arg('knn_k', knn_k)} must be a positive integer (the neighbours of the kNN baseline)",
                         item="knn_k")
    if split in ("in-sample", "coverage", "all", "both") and (isinstance(seeds, bool) or not isinstance(seeds, int)
                                                              or not 1 <= seeds <= MAX_SEEDS):
        raise ConfigError(f"{arg('seeds', seeds)}: need 1 to {MAX_SEEDS} seeds")  # before the data is read, not after
    made = None  # the folder of plots_dir this run created: removed if it fails before writing into it
    if plots_dir is not None:
        from .evaluation.plots import make_plots_dir

        # a file there, or a folder that cannot be written or created: now, not after the evaluation
        made = make_plots_dir(plots_dir)
    try:
        return _evaluate(data, split=split, seeds=seeds, encoder=encoder, group_by=group_by, lam=lam, eps=eps,
                         method=method, sweep=sweep, plots_dir=plots_dir, knn_k=knn_k, matrix=matrix,
                         embeddings=embeddings, queries=queries, query_embeddings=query_embeddings,
                         contestants=contestants, datasets=datasets, peers=peers, format=format)
    except BaseException:
        # a run that failed (a bad data path, an interrupt) before writing a plot leaves no empty folder it made;
        # before, `evaluate --plots NEWDIR BADPATH` left NEWDIR behind, empty. A folder that existed stays.
        if made is not None:
            from .evaluation.plots import remove_new_plots_dir

            remove_new_plots_dir(plots_dir, made)
        raise


def _evaluate(data, *, split, seeds, encoder, group_by, lam, eps, method, sweep, plots_dir, knn_k, matrix, embeddings,
              queries, query_embeddings, contestants, datasets, peers, format) -> dict:
    """:func:`evaluate` past its checks of the options and the creation of ``plots_dir``."""
    from .config import check_penalty

    # a bad option value: exit 2 naming it, as the others
    cli = CLI.get()  # the option and its value, or the parameter's (indexer.errors.arg)
    lam = check_penalty("--lambda" if cli else "lam", 1.0 if lam is None else lam, " " if cli else "=")
    eps = check_penalty("--eps" if cli else "eps", 0.0 if eps is None else eps, " " if cli else "=")
    # an empty name (`--encoder "$ENC"` of an unset variable) is refused: get_encoder("") is the default encoder, so
    # the evaluation would run with it without a word, as if the option had been left out
    if encoder is not None and not str(encoder).strip():
        raise ConfigError(f"{arg('encoder', encoder)}: an empty name; give an encoder name or folder, or leave "
                          f"{arg('encoder')} out for TASKSPACE_ENCODER's")
    if format is not None:
        from .sources.registry import get_reader

        try:
            get_reader(format)
        except InputError as exc:
            raise ConfigError(f"{arg('format', format)}: {exc}") from None
    try:
        default = _default_space(method)
    except InputError as exc:
        if method is None:
            raise
        raise ConfigError(f"{arg('method', method)}: {exc}") from None
    t0 = time.perf_counter()
    datas = list(data) if isinstance(data, (list, tuple)) else [data]
    if not datas:
        raise InputError("no data folder given")
    if any(not str(d).strip() for d in datas):  # Path("") is the current folder: not what an empty DATA means
        raise InputError("a DATA is empty; give a folder or a file (an empty path is not the current folder: write . "
                         "for that)")
    for d in datas if matrix is None else ():  # a source spec `taskspace ingest` takes: "no such file or folder" said
        spec = str(d)                           # nothing of why
        if spec.startswith(("hub:", "hub-org:")) and not Path(spec).exists():
            from .ingest import parse_spec

            # the spec as `taskspace ingest` reads it (a malformed one, an @ with no revision after it: its error;
            # before, `hub:org/repo@` was advised as the default branch's download)
            got = parse_spec(spec)
            repo, rev = got.target, got.revision
            get = (f"it first (`hf download {repo} --repo-type dataset{' --revision ' + rev if rev else ''} "
                   "--local-dir DIR`)" if spec.startswith("hub:") else
                   "each of its datasets first (`hf download ORG/NAME --repo-type dataset --local-dir DIR`)")
            raise InputError(f"taskspace evaluate reads local files and folders, not Hub sources: download {get} "
                             "and give DIR", file=spec)
    data_warnings: list[str] = []  # what reading the data warned of (none when the matrix is given)
    if matrix is not None:
        m, ds_names = matrix, (sorted(set(np.asarray(datasets, dtype=object).tolist()), key=str)
                               if datasets is not None else [Path(str(datas[0])).name])
        if datasets is not None and len(datasets) != len(m.texts):
            raise InputError(f"{len(datasets)} data set labels for {len(m.texts)} prompts")
    else:
        with _warnings_said() as data_warnings:  # also on stderr, as before
            m, datasets, ds_names = load_pooled(datas, group_by, format)
    try:
        labels = m.labels(group_by)  # validates --group-by before the (slow) encoding
    except InputError as exc:  # a bad option value, known once the data is read: exit 2 as the parser's
        raise ConfigError(f"{arg('group_by', group_by)}: {exc}") from None
    # every split's folds before anything is encoded or run: a split that cannot run on this data (oos of one group,
    # coverage of one model) is known now, not after the splits before it ran; of several (`all`, `both`), those that
    # can run do, and the result says in one line why each other did not (``skipped``); before, `--split all` on one
    # benchmark failed whole with oos's error. A single split that cannot run, or none of several, is the error.
    folds_of, skipped = _all_folds(split, labels, len(m.models), len(m.texts), seeds)
    splits_todo = tuple(folds_of)
    qtexts = query_texts(m.texts, queries)  # validates the form before encoding too
    if embeddings is None:
        _check_eps_unencoded(eps, folds_of)  # an eps no encoding can keep a component at: now, not after it
    changed = [i for i, (q, t) in enumerate(zip(qtexts, m.texts)) if q != t]
    if queries == "stem" and not changed:  # said, as the result is that of `full`
        data_warnings.append(f"{arg('queries', 'stem', quote=False)}: no prompt has answer options (an 'A.' or 'A)' "
                             "line followed by a 'B.' or 'B)' line) to cut, so every prompt is queried with its full "
                             f"text: the result is that of {arg('queries', 'full', quote=False)}")
    t_read = time.perf_counter() - t0
    enc_name = "given"
    if embeddings is None:
        from .encoder import get_encoder

        enc = get_encoder(encoder)
        D = enc.encode(m.texts)
        enc_name = enc.id
    else:
        D = np.asarray(embeddings)
        if D.shape[0] != len(m.texts):
            raise InputError(f"{D.shape[0]} embeddings for {len(m.texts)} prompts")
    Q = D
    if query_embeddings is not None:
        Q = np.asarray(query_embeddings)
        if Q.shape != np.shape(D):
            raise InputError(f"query embeddings of shape {Q.shape} for embeddings of shape {np.shape(D)}")
    elif changed:  # only the prompts whose query differs from their text need encoding
        from .encoder import get_encoder

        Q = np.array(D, copy=True)
        Q[changed] = get_encoder(encoder).encode([qtexts[i] for i in changed])
    own = _default_rows(m.texts, qtexts, D, Q, default, encoder)
    eps_warnings = _check_eps(eps, D, folds_of)
    t_enc = time.perf_counter() - t0 - t_read
    base = {
        "data": " + ".join(str(d) for d in datas),
        "datasets": _dataset_summary(m, datasets, ds_names),
        "encoder": enc_name,
        "models": len(m.models),
        "prompts": len(m.texts),
        "cells": int(m.observed.sum()),
        "density": m.density,
        "group_by": group_by or "benchmark",
        "queries": queries,
        "queries_changed": len(changed),
        "rejected_rows": [str(e) for e in _causes_first(m.errors)],  # at most 20 of each problem, then "N more rows rejected"
        "rejected_count": count_rejected(m.errors),
        "data_warnings": data_warnings,
    }
    extra = dict(peer_contestants(peers, m.benchmarks))  # the published peers (--peers), then the caller's
    extra.update(contestants or {})
    out = {}
    from .solver.kernels import single_threaded_lapack

    for sp in splits_todo:
        t1 = time.perf_counter()
        res = dict(base, split=sp)
        with single_threaded_lapack():  # the folds' products on one BLAS thread (the module docstring, "Threads")
            res.update(_run_split(m, D, (Q, own), folds_of[sp], sp, seeds, lam, eps, default, sweep, knn_k, plots_dir,
                                  res, extra, datasets))
        res["warnings"] += eps_warnings.get(sp, [])
        res["seconds"] = {"read": t_read, "encode": t_enc, "evaluate": time.perf_counter() - t1}
        res["seconds"]["total"] = t_read + t_enc + res["seconds"]["evaluate"]
        out[sp] = res
    if len(SPLITS[split]) > 1:
        return {"split": split, **out, "skipped": skipped}
    return out[split]


def _all_folds(split: str, labels, n_models: int, n_prompts: int, seeds: int) -> tuple[dict, dict]:
    """(split -> its folds, split -> why it cannot run on this data) of the splits ``split`` runs; an InputError
    when ``split`` is one split that cannot run, or none of its splits can."""
    todo = SPLITS[split]
    folds_of, skipped = {}, {}
    for sp in todo:
        try:
            folds_of[sp] = _folds(sp, labels, n_models, n_prompts, seeds)
        except InputError as exc:
            if len(todo) == 1:
                raise
            skipped[sp] = str(exc)
    if not folds_of:
        raise InputError(f"no split of {arg('split', split, quote=False)} can run on this data: "
                         + "; ".join(f"{sp}: {why}" for sp, why in skipped.items()))
    return folds_of, skipped


def _dataset_summary(m: OutcomeMatrix, datasets, names: list[str]) -> list[dict]:
    """Per data set: its name, models (with an outcome there), prompts and cells."""
    if datasets is None:
        return [{"name": names[0], "models": len(m.models), "prompts": len(m.texts), "cells": int(m.observed.sum())}]
    ds = np.asarray(datasets, dtype=object)
    out = []
    for name in names:
        cols = ds == name
        obs = m.observed[:, cols]
        out.append({"name": name, "models": int(obs.any(axis=1).sum()), "prompts": int(cols.sum()),
                    "cells": int(obs.sum())})
    return out


def _default_rows(texts, qtexts, D, Q, default, encoder) -> tuple | None:
    """``(X, XQ, fill)``: the default contestant's own rows of the prompts and of their queries when the
    representation of its space ``default`` is not the plain embedding (:mod:`indexer.represent`: covariates, the
    question/options split, whose queries without options are completed per fold from the nearest source
    questions by ``fill``); None when it is."""
    from . import represent

    params = default.params
    if not represent.feature_set(params):
        return None
    if represent.is_split(params):  # question and options embedded apart (through the encoder's cache)
        from .encoder import get_encoder

        encode = get_encoder(encoder).encode
        X = represent.rows(texts, encode, params)
        return X, represent.query_rows(qtexts, encode, params), represent.fill_from_neighbours
    return represent.design(D, texts, params), represent.design(Q, qtexts, params), None


def _folds(split: str, labels, n_models: int, n_prompts: int, seeds: int) -> list:
    """The folds of ``split`` (an InputError when the data cannot be split so)."""
    if split == "in-sample":
        return splits.in_sample(n_prompts, seeds)
    if split == "coverage":
        return splits.coverage(labels, n_models, seeds)
    return splits.leave_one_group_out(labels)


def _run_split(m, D, query, folds, split, seeds, lam, eps, default, sweep, knn_k, plots_dir, header, extra=None,
               datasets=None) -> dict:
    Q, own = query
    if split == "in-sample":
        # the share held out is rounded and at least one prompt: said as a count when it is not 20% (1 of 2 prompts)
        k, n = len(folds[0].test), len(folds[0].test) + len(folds[0].train)
        held = "random 20% of prompts held out" if f"{k / n:.0%}" == "20%" else f"random {k} of {n} prompts held out"
        desc = (f"{held}, {counted(seeds, 'seed')}; "
                + ("mean ± std over seeds" if seeds > 1 else "one seed, so no spread (--seeds 2 or more gives one)"))
    elif split == "coverage":
        n_groups = len(folds) // seeds
        desc = (f"coverage: per {header['group_by']} ({n_groups}) and seed ({seeds}), its outcomes hidden from a random "
                f"half of the models (uncovered), a random half of its prompts the targets, every model scored; "
                + (f"mean ± std over the {len(folds)} (group, seed) folds" if len(folds) > 1 else "one fold, no spread"))
        sweep = False  # the ablation is of the paper method on the paper's splits
    else:
        desc = (f"leave one {header['group_by']} out ({len(folds)} folds); "
                + ("mean ± std over folds" if len(folds) > 1 else "one fold, no spread"))
    contestants = _contestants(lam, eps, default, own, knn_k, extra)
    pooled: dict = {} if plots_dir is not None else None
    results = protocol.run_folds(D, m.scores, m.benchmarks, _counted(folds, f"{split} folds"), contestants,
                                 pooled=pooled, queries=Q, datasets=datasets)
    # a fold with nothing to score (no model of the source was measured on its targets: e.g. every model measured on
    # one benchmark only, then leaving a benchmark out leaves none) has NaN metrics: say so instead of printing NaN
    empty = [r.name for r in results if r.cells == 0]
    # what helps depends on the split: leaving a group out of models each measured on one group needs another split;
    # elsewhere the data is too thin (every model measured on a held-out prompt had no other outcome)
    why = ("(each model measured on its own benchmark only?), so their metrics are NaN; use --split in-sample or "
           "--split coverage for such data" if split == "oos" else
           f"(every model measured on a held-out prompt has no other outcome: {int(m.observed.sum())} outcomes in all), "
           "so their metrics are NaN; such data is too thin to evaluate")
    warnings = ([f"{len(empty)} of {len(results)} folds have no cell to score ({', '.join(map(str, empty[:5]))}"
                 f"{', ...' if len(empty) > 5 else ''}): no model with a source outcome was measured on their targets "
                 + why] if empty else [])
    if len(m.models) == 1:  # sel acc equal to the oracle's read as perfect selection, with nothing to select from
        warnings.append(f"the data has one model ({m.models[0]}): selection has nothing to choose from, so every "
                        "contestant's sel acc and sel recall are that model's own (the oracle's), and bsp's score is one "
                        "constant (AUC 0.5); evaluate several models to measure selection")
    seen = m.scores[m.observed]
    if seen.size and seen.min() == seen.max():  # nothing to rank against (all 1, all 0, or graded all one value)
        kind = {1.0: "a success", 0.0: "a failure"}.get(float(seen[0]), f"{float(seen[0]):g}")
        warnings.append(f"every observed outcome is {kind}: AUC and bench r "
                        "have no value (shown as -), and selection cannot tell the models apart; the data needs "
                        + ("both successes and failures" if kind.startswith("a ") else "outcomes that differ"))
    else:  # a fold whose held-out outcomes are all of one kind has no AUC: the column's mean is over the others
        noauc = [r.name for r in results if r.cells and not np.isfinite(r.methods["default"]["auc"])]
        if noauc:
            unit = "seeds" if split == "in-sample" else "folds"
            warnings.append(
                f"{len(noauc)} of {len(results)} {unit} have no AUC ({', '.join(map(str, noauc[:5]))}"
                f"{', ...' if len(noauc) > 5 else ''}): their held-out outcomes are all successes or all failures; "
                + (f"AUC (and bench r where it has none) is the mean over the other {len(results) - len(noauc)}"
                   if len(noauc) < len(results) else "AUC has no value (shown as -)"))
    warnings += _graded_outcomes_warning(m)
    warnings += _one_cluster(folds, extra)
    warnings += _benchmarks_unseen(folds, m.benchmarks, extra)
    if split == "coverage":  # an uncovered model measured on the hidden group only keeps no source outcome
        alone = [f.group for f in folds if not _uncovered_kept(m.observed, f)]
        if alone:
            warnings.append(
                f"{len(alone)} of {len(folds)} folds have no uncovered model left to score "
                f"({', '.join(sorted(set(alone), key=str)[:5])}{', ...' if len(set(alone)) > 5 else ''}): the models "
                f"hidden from the group that were measured on it were measured on it alone, so they have no source "
                f"outcome; their uncovered metrics have no value (shown as -; the uncovered part needs models measured "
                f"on the group and on another {header['group_by']})")
    agg = protocol.aggregate(results)  # the contestants' numbers stay under the key "methods" (what readers read)
    if (not np.isfinite(agg["methods"]["default"]["correlation"]) and len(empty) < len(results)
            and not any(w.startswith("every observed outcome is") for w in warnings)):
        # a "-" column says why, as AUC's does; before, bench r was "-" in every row without a word (two models left
        # one benchmark out: 2 pairs a fold), and also beside a fold without an AUC, whose warning ("AUC (and bench r
        # where it has none) is the mean over the other N") named bench r but not why it has no value at all
        pairs, n_models, n_benches = max((_bench_pairs(m, f) for f in folds), default=(0, 0, 0))
        warnings.append("bench r has no value (shown as -): it correlates per fold the (model, benchmark) pairs of the "
                        + (f"held-out prompts, and no fold has 3 (at most {pairs}: {n_models} model"
                           f"{'s' if n_models != 1 else ''} x {n_benches} benchmark{'s' if n_benches != 1 else ''})"
                           if pairs < 3 else
                           "held-out prompts, and in no fold do their accuracies (or the default's mean scores) vary"))
    agg["methods"]["default"]["options"] = default.options
    agg["methods"]["paper"]["options"] = {"lam": lam, "eps": eps}
    out = {
        "protocol": desc,
        "methods": agg["methods"],
        "oracle": agg["oracle"],
        "oracle_detail": agg["oracle_detail"],
        "default_method": default.method,
        "paper": {"lam": lam, "eps": eps},
        "folds": [
            {"name": r.name, "models": r.models, "prompts": r.prompts, "cells": r.cells, "methods": r.methods, "oracle": r.oracle}
            for r in results
        ],
        "sweep": _sweep(m, D, Q, folds, lam, eps) if sweep else [],
        "warnings": warnings,
    }
    out["warnings"] += _sweep_past_eps(D, folds, out["sweep"])
    if plots_dir is not None:
        from .evaluation.plots import plots_prefix, remove_stale_plots, write_plots

        slug = plots_prefix([Path(d["name"]).name or "data" for d in header["datasets"]], split)
        written = write_plots(dict(header, **out), pooled, Path(plots_dir), slug)
        out["plots"] = [str(p) for p in written]
        out["warnings"] += [f"removed {p}, an earlier run's plot of this data and split: this run drew none of it"
                            + (" (--no-sweep)" if p.name.endswith("_sweep.png") and not sweep else "")
                            for p in remove_stale_plots(Path(plots_dir), slug, written)]
    return out


#: whose embeddings :func:`_check_eps` bounds eps by, and what an eps past it does to the paper contestant (said after
#: :func:`indexer.space.eps_drops_every_component`'s one wording)
EPS_FOLDS = "every fold's source prompt embeddings"
EPS_PAPER = "in every fold, every paper score would be 0 (AUC 0.5)"


def _check_eps(eps: float, D: np.ndarray, folds_of: dict) -> dict[str, list[str]]:
    """The ``paper`` contestant's ``eps`` against the data: it drops the components whose singular value is below it,
    so past the largest singular value of a fold's source prompt embeddings every paper score of that fold is 0 (AUC
    0.5; the bundled sample's folds: 5.81, and eps 8 scored as eps 100). Past every fold's: a ConfigError naming the
    usable range; past some folds': split -> a warning naming them. Before, constant scores without a word."""
    if eps <= 0:
        return {}
    top = {sp: _fold_tops(D, folds) for sp, folds in folds_of.items()}
    most = max(max(t) for t in top.values())
    if eps > most:
        from .space import eps_drops_every_component

        raise ConfigError(f"{arg('eps', eps)}: {eps_drops_every_component(eps, most, EPS_FOLDS, whatever=False)}; "
                          f"{EPS_PAPER}")
    said = {}
    for sp, t in top.items():
        past = [v for v in t if v < eps]
        if past:
            said[sp] = [f"paper: eps {eps:g} drops every component in {len(past)} of {len(t)} folds (the largest singular "
                        f"value of their source prompt embeddings: {rounded_down(min(past)):g}"
                        + (f"-{rounded_down(max(past)):g}" if len(past) > 1 else "")
                        + "), so its scores there are all 0 (AUC "
                        f"0.5); eps up to {rounded_down(min(t)):g} keeps one in every fold"]
    return said


def _sweep_past_eps(D: np.ndarray, folds, rows: list[dict]) -> list[str]:
    """A warning naming the ablation's eps values past the largest singular value of some fold's source prompt
    embeddings (:func:`_check_eps`): there every component is dropped and the paper method's scores are all 0 (AUC
    0.5). On a small data set eps 4 and 8 are (mmlu_pro, three categories of 60 prompts: 8 in every fold), and their
    rows read as a measured effect of eps without a word, where ``--eps`` itself is refused or warned of."""
    grid = sorted({r["eps"] for r in rows if r["eps"] > 0})
    if not grid:
        return []
    top = _fold_tops(D, folds)
    past = [(e, sum(t < e for t in top)) for e in grid if any(t < e for t in top)]
    if not past:
        return []
    listed = ", ".join(f"{e:g}" for e, _ in past)
    counts = ", ".join(f"{e:g}: {n} of {len(top)}" for e, n in past)
    return [f"ablation: eps {listed} drop{'s' if len(past) == 1 else ''} every component in some folds ({counts}; the "
            f"largest singular value of their source prompt embeddings is {rounded_down(min(top)):g}"
            + (f"-{rounded_down(max(top)):g}" if len(top) > 1 else "")
            + "), so the paper method's scores there are all 0 "
            "(AUC 0.5): those rows measure no eps, only that nothing was kept; a larger data set keeps components at "
            "larger eps"]


def _check_eps_unencoded(eps: float, folds_of: dict) -> None:
    """The ``paper`` contestant's ``eps`` against what the folds' sizes alone bound, before the prompts are encoded (a
    large data set's encoding takes minutes): every encoder's embeddings are of length 1, so the largest singular value
    of a fold's n source prompt embeddings is at most sqrt(n) (the Frobenius norm; reached when all n are one
    prompt), and an eps past sqrt of the largest fold's source prompts drops every component whatever the prompts
    are: a ConfigError naming that bound now. The exact bound (:func:`_check_eps`) is the embeddings' largest
    singular value, known only once they are encoded: eps between the two is refused after the encoding. Before,
    every eps past it was refused only then (eps 1000 on evalarena_code, 2,142 prompts, with a cold embedding cache:
    after 241 s)."""
    if eps <= 0:
        return
    from .space import eps_bound, eps_drops_every_component

    n = max(len(f.train) for folds in folds_of.values() for f in folds)
    if eps > eps_bound(n):  # (float32 rows are of length 1 to about 1e-7)
        said = eps_drops_every_component(eps, math.sqrt(n), f"the source prompt embeddings of a fold (at most {n:,} "
                                         f"prompts, each embedding of length 1: sqrt({n:,}) bounds them)")
        raise ConfigError(f"{arg('eps', eps)}: {said}; {EPS_PAPER} (the exact bound is known once the prompts are "
                          "encoded)")


def _fold_tops(D: np.ndarray, folds) -> list[float]:
    """The largest singular value of each fold's source prompt embeddings (its training rows of ``D``): past it the
    paper contestant's ``eps`` drops every component of that fold (:func:`_check_eps`, :func:`_sweep_past_eps`)."""
    return [_largest_singular(D[f.train]) for f in folds]


def _largest_singular(X: np.ndarray) -> float:
    """The largest singular value of the rows ``X`` (n, d): the square root of the top eigenvalue of the (d, d) Gram."""
    if not X.size:
        return 0.0
    X = np.asarray(X, dtype=np.float64)
    return float(np.sqrt(max(np.linalg.eigvalsh(X.T @ X)[-1], 0.0)))


def _graded_outcomes_warning(m: OutcomeMatrix) -> list[str]:
    """A warning when some observed outcomes are graded (between 0 and 1, not an average over copies of a prompt
    text, which reading the data warns of): what the metrics make of them (docs/RESULTS.md, "Graded outcomes count
    fractionally"), so that a table of graded outcomes is not taken for one of successes and failures, nor the
    oracle's sel recall below 1 (the mean of its best outcomes) for a fault of the oracle."""
    single = np.ones(len(m.texts), dtype=bool) if m.copies is None else np.asarray(m.copies) <= 1
    seen = m.scores[:, single][m.observed[:, single]]
    n = int(((seen > 0) & (seen < 1)).sum())
    if not n:
        return []
    return [f"{n:,} of the {int(m.observed.sum()):,} observed outcomes are graded (between 0 and 1): AUC, sign acc, "
            "ECE and Brier count an outcome s as s of a success and 1 - s of a failure, sel acc is the picked model's "
            "mean outcome and sel recall the same over the prompts some observed model scored above 0, so the "
            "oracle's sel recall is its mean best outcome, below 1 where no model scored 1"]


def _one_cluster(folds, extra: dict | None) -> list[str]:
    """A warning per cluster-profiles peer (``--peers fast``) whose folds have fewer source prompts than two clusters
    need (:attr:`~indexer.evaluation.peers.ClusterContestant.min_prompts`): there it is one cluster, the scores of
    ``bsp``, so that its row equalling bsp's is explained."""
    from .evaluation.peers import ClusterContestant

    said = []
    for name, c in (extra or {}).items():
        if not isinstance(c, ClusterContestant):
            continue
        few = sorted({int(f.train.size) for f in folds if f.train.size < c.min_prompts})
        if few:
            n = sum(f.train.size < c.min_prompts for f in folds)
            said.append(f"{name}: {n} of {len(folds)} folds have fewer than {c.min_prompts} source prompts "
                        f"({few[0]}{'' if len(few) == 1 else f'-{few[-1]}'}): the cluster profiles need {c.min_size} a "
                        "cluster and 2 clusters at least, so there they are one cluster, each model's source success "
                        "rate, the scores of bsp")
    return said


def _benchmarks_unseen(folds, benchmarks, extra: dict | None) -> list[str]:
    """A warning per per-benchmark-best peer (``--peers fast``) whose folds hold out every prompt of their target
    prompts' benchmarks (leave one benchmark out): there no model has a source rate on the benchmark, so it scores each
    model's overall source success rate (:class:`~indexer.evaluation.peers.BenchmarkBestContestant`), the scores of
    bsp, so that its row equalling bsp's in AUC, sign acc, bench r and selection is explained (as the cluster
    profiles' on few prompts are, :func:`_one_cluster`)."""
    from .evaluation.peers import BenchmarkBestContestant

    bench = np.asarray(benchmarks, dtype=object)
    said = []
    for name, c in (extra or {}).items():
        if not isinstance(c, BenchmarkBestContestant):
            continue
        n = sum(bool(f.test.size) and not np.isin(bench[f.test], bench[f.train]).any() for f in folds)
        if n:
            said.append(f"{name}: {n} of {len(folds)} folds have no source prompt of their target prompts' benchmarks "
                        "(each is held out whole), so there it is each model's overall source success rate, the "
                        "scores of bsp")
    return said


def _bench_pairs(m: OutcomeMatrix, fold) -> tuple[int, int, int]:
    """(pairs, models, benchmarks) of a fold's bench r (:func:`indexer.evaluation.metrics.benchmark_correlation`):
    the (model, benchmark) pairs with an observed held-out cell among the models with a source outcome (the hidden
    ones of a coverage fold not counted), how many models and benchmarks those pairs have."""
    src = m.observed[:, fold.train].copy()
    if fold.hide_models is not None:
        src[np.ix_(np.asarray(fold.hide_models), np.flatnonzero(np.isin(fold.train, fold.hide_prompts)))] = False
    tgt = m.observed[src.any(axis=1)][:, fold.test]
    bench = np.asarray(m.benchmarks, dtype=object)[fold.test]
    seen = np.stack([tgt[:, bench == b].any(axis=1) for b in sorted(set(bench.tolist()), key=str)], axis=1) \
        if tgt.size else np.zeros((0, 0), dtype=bool)
    return int(seen.sum()), int(seen.any(axis=1).sum()), int(seen.any(axis=0).sum())


def _uncovered_kept(observed: np.ndarray, fold) -> bool:
    """Whether some uncovered model of a coverage ``fold`` keeps a source outcome (outside the hidden prompts), so
    that it takes part in the fold (:func:`indexer.evaluation.protocol.run_folds`), and was measured on a held-out
    prompt, so that it has a cell to score; before, only the first, and the folds of a group only some models were
    measured on (pooled data sets) had no uncovered cell without a word."""
    src = np.setdiff1d(fold.train, fold.hide_prompts, assume_unique=True)
    hidden = np.asarray(fold.hide_models)
    kept = observed[np.ix_(hidden, src)].any(axis=1)
    return bool(observed[np.ix_(hidden[kept], np.asarray(fold.test))].any())


def _sweep(m: OutcomeMatrix, D: np.ndarray, Q: np.ndarray, folds, lam: float, eps: float) -> list[dict]:
    return protocol.run_sweep(D, m.scores, m.benchmarks, _counted(folds, "ablation folds"), sweep_grid(lam, eps),
                              queries=Q)


def _counted(folds: list, what: str):
    """``folds``, with a bar on stderr counting those done when stderr is a terminal (the bars of `taskspace index`,
    :class:`indexer.pipeline.Progress`); unchanged otherwise (a log, a pipe: nothing added). A split's folds can take
    minutes (mmlu_pro, both splits, ``--peers all``), as the encoding before them, which has its bar too."""
    from .pipeline import Progress

    bar = Progress().bar(len(folds), what, unit="fold")
    if bar is None:
        return folds

    def ticking():
        try:
            for fold in folds:
                yield fold
                bar.update()
        finally:
            bar.close()

    return ticking()
