"""Helpers shared by several test modules (fixtures live in conftest.py): writing table sources, indexing them,
and a synthetic SourceBatch. Test modules import them as ``from helpers import ...`` (pytest puts tests/ on
sys.path); no test module imports another."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from indexer.records import Outcome, SourceBatch, SourceInfo

TOPICS = ["algebra", "biology", "contract law", "chemistry", "poetry", "astronomy", "economics", "history"]


def write_table(folder: Path, benchmark: str, models: dict[str, list[int]], n: int, offset: int = 0) -> list[str]:
    """A long-form table source: prompts.jsonl + outcomes.csv. models: name -> outcomes (0/1) per prompt."""
    texts = [f"Question {offset + j} on {TOPICS[(offset + j) % len(TOPICS)]}: what is item {j} of {benchmark}?" for j in range(n)]
    write_source(folder, benchmark, texts, models)
    return texts


def write_source(folder: Path, benchmark: str, texts: list[str], outcomes: dict) -> None:
    """prompts.jsonl (ids ``<benchmark>-<j>``) + outcomes.csv; outcomes: model -> 0/1 (None: not measured) per prompt."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "prompts.jsonl", "w") as f:
        for j, t in enumerate(texts):
            f.write(json.dumps({"prompt_id": f"{benchmark}-{j}", "benchmark": benchmark, "text": t}) + "\n")
    with open(folder / "outcomes.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "prompt_id", "correct"])
        for m, ys in outcomes.items():
            for j, y in enumerate(ys):
                if y is not None:  # None: the model was not measured on that prompt
                    w.writerow([m, f"{benchmark}-{j}", int(y)])


def index_sources(encoder, sources: list[tuple[Path, str, list[str], dict]]):
    """Write each ``(folder, benchmark, texts, outcomes)`` source (:func:`write_source`) and index them all in one
    pass into a fresh store and local Qdrant (the settings in force: TASKSPACE_METHOD ...); returns
    ``(store, vectors)`` for the caller to close."""
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    for folder, benchmark, texts, outs in sources:
        write_source(folder, benchmark, texts, outs)
    store, vectors = open_store(), VectorStore.from_settings()
    r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(folder)) for folder, *_ in sources])
    assert r.status == "ok", r.errors
    return store, vectors


def outcomes(rng, names, n):
    """Random 0/1 outcomes: model name -> n outcomes."""
    return {m: rng.integers(0, 2, n).tolist() for m in names}


def model_vectors(indexer) -> dict[str, np.ndarray]:
    """The stored model vectors of an Indexer's only space, by model, without the two level coordinates of a space
    with levels (``[.., l_i, u . mu_i]``, tests/test_levels.py): the part an index row's inner product uses."""
    from indexer import represent

    (space,) = indexer.store.list_spaces()
    return {mv.model: represent.strip_levels(np.asarray(mv.vector), space)
            for mv in indexer.store.load_model_vectors(space.id)}


BATCH_MODELS = [f"org/m{i}" for i in range(5)]


def source_batch(location, revision="r1", n_prompts=20, score=1.0) -> SourceBatch:
    """A table source of :data:`BATCH_MODELS` x ``n_prompts`` prompts (three benchmarks), every score ``score``."""
    outs = [Outcome(m, f"bench{j % 3}", f"{location} question {j}", score, prompt_id=str(j))
            for m in BATCH_MODELS for j in range(n_prompts)]
    return SourceBatch(SourceInfo("table", location, revision), {}, outs)


# -- a mixed index for the first-principles tests (tests/reference.py): prompts with and without answer options --

MC_PROMPTS = [  # (question, options); each prompt's text is the question, then one "X. option" line per option
    ("What is the derivative of x^2?", ["2x", "x", "x^2 / 2"]),
    ("Solve for x: 3x + 5 = 20.", ["3", "5", "15", "25"]),
    ("Which integral gives the area under y = x from 0 to 1?", ["1/2", "1", "2"]),
    ("What is 7 times 8?", ["54", "56", "64", "58"]),
    ("Under contract law, what is consideration?", ["A bargained-for exchange", "A gift", "A court fee"]),
    ("Which court hears appeals from federal district courts?", ["Circuit courts", "Small claims court",
                                                                  "Probate court", "Tax court"]),
    ("What does habeas corpus protect against?", ["Unlawful detention", "Double taxation", "Trespass"]),
    ("What is the burden of proof in a criminal trial?", ["Beyond a reasonable doubt", "Preponderance",
                                                           "Clear and convincing", "Probable cause"]),
]
FREE_PROMPTS = [
    "Write a Python function that reverses a linked list.",
    "Implement binary search over a sorted array and return the index.",
    "Write a SQL query that counts orders per customer.",
    "Draft a short poem about the autumn sea.",
    "Summarise the plot of Hamlet in three sentences.",
    "Write a limerick about a cat who codes.",
]
MIXED_MODELS = ["m1", "m2", "m3", "m4", "m5", "mc-only", "free-only"]


def mc_text(question: str, options: list[str]) -> str:
    return question + "\n" + "\n".join(f"{chr(65 + k)}. {o}" for k, o in enumerate(options))


def mixed_outcomes() -> np.ndarray:
    """(7, 14) outcomes of :data:`MIXED_MODELS` on the 8 multiple-choice then 6 free prompts, NaN = not observed:
    math-strong, law-strong, code-strong and mixed models (a signal GCV can pick a moderate lambda for), m6 observed
    on the multiple-choice prompts only, m7 on the free ones only."""
    rng = np.random.default_rng(21)
    math = np.r_[np.ones(4), np.zeros(4), [1, 1, 1, 0, 0, 0]]
    law = np.r_[np.zeros(4), np.ones(4), [0, 0, 0, 1, 1, 1]]
    base = [math, law, 1 - math, np.maximum(math, law), rng.integers(0, 2, 14).astype(float), law, math]
    S = np.array([np.where(rng.random(14) < 0.15, 1 - b, b) for b in base])
    S[5, 8:] = np.nan
    S[6, :8] = np.nan
    return S


def write_mixed(root: Path) -> tuple[Path, Path]:
    """The mixed index's two sources: ``root/quiz`` (benchmark quiz, the multiple-choice prompts) and ``root/tasks``
    (benchmark tasks, the free prompts)."""
    S = mixed_outcomes()
    quiz = [mc_text(q, o) for q, o in MC_PROMPTS]
    write_source(root / "quiz", "quiz", quiz,
                 {m: S[i, :8].tolist() for i, m in enumerate(MIXED_MODELS) if not np.isnan(S[i, :8]).all()})
    write_source(root / "tasks", "tasks", FREE_PROMPTS,
                 {m: S[i, 8:].tolist() for i, m in enumerate(MIXED_MODELS) if not np.isnan(S[i, 8:]).all()})
    return root / "quiz", root / "tasks"


def mixed_parts(encode):
    """First-principles rows of the mixed index's 14 prompts, in the order of :func:`mixed_outcomes`:
    ``(Xq, Xo, T, is_mc)``: question embeddings (the whole text for a free prompt), options embeddings (zeros
    without options), the four covariates ``[1, log1p(len(question)), log1p(len(options block)), log(#options)]``
    (zeros without options) and the (14,) bool is_mc."""
    blocks = ["\n".join(f"{chr(65 + k)}. {o}" for k, o in enumerate(opts)) for _, opts in MC_PROMPTS]
    Xq = np.asarray(encode([q for q, _ in MC_PROMPTS] + FREE_PROMPTS), dtype=np.float64)
    Xo = np.zeros_like(Xq)
    Xo[:8] = encode(blocks)
    T = np.zeros((14, 4))
    for j, ((q, opts), block) in enumerate(zip(MC_PROMPTS, blocks)):
        T[j] = [1.0, np.log1p(len(q)), np.log1p(len(block)), np.log(len(opts))]
    return Xq, Xo, T, np.r_[np.ones(8, bool), np.zeros(6, bool)]


#: a real prompt with blank lines: HumanEval/0 (openai/human-eval, MIT), as ../shared/data/evalarena_code holds it
#: (161 of its 2,142 code prompts have a blank line); one prompt, never two example prompts
HUMANEVAL_0 = '''from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    """ Check if in given list of numbers, are any two numbers closer to each other than
    given threshold.
    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)
    False
    >>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)
    True
    """
'''


def run_in_read_only_home(home: Path, *args: str, env: dict | None = None):
    """Run ``python -m indexer.cli ARGS`` with ``home`` (TASKSPACE_HOME) on a read-only file system: bind-mounted
    read-only in a user and mount namespace (``unshare -Urm``), or, where that is not allowed and the tests do not run
    as root, with the write permission taken away. Skips the test when neither can make it read-only."""
    import os
    import shlex
    import shutil as _shutil
    import subprocess
    import sys

    import pytest

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, **(env or {}), "TASKSPACE_HOME": str(home), "PYTHONPATH": str(root)}
    cmd = shlex.join([sys.executable, "-m", "indexer.cli", *args])
    h = shlex.quote(str(home))
    if _shutil.which("unshare"):
        script = f"mount --bind {h} {h} && mount -o remount,bind,ro {h} || exit 97; exec {cmd}"
        res = subprocess.run(["unshare", "-Urm", "sh", "-c", script], capture_output=True, text=True, env=env,
                             cwd=root, timeout=300)
        if res.returncode != 97 and not res.stderr.startswith("unshare:"):  # else: namespaces not allowed here
            return res
    if os.geteuid() == 0:
        pytest.skip("cannot make a folder read-only here (no unshare -Urm, and root ignores permissions)")
    modes = {p: p.stat().st_mode for p in [home, *home.rglob("*")]}
    try:
        for p in modes:
            p.chmod(0o555 if p.is_dir() else 0o444)
        return subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, env=env,
                              cwd=root, timeout=300)
    finally:
        for p, m in modes.items():
            p.chmod(m)


#: Python that fills the disk holding ``{path}`` with a file of that name (format it with ``path=...``)
_FILL_DISK = '''
try:
    with open({path!r}, "wb") as f:
        while True:
            f.write(b"x" * 4096)
            f.flush()
except OSError:
    pass
'''


def fill_disk_code(path) -> str:
    """Python that writes ``path`` until its disk has no byte left (for :func:`run_on_a_small_disk`'s code)."""
    return _FILL_DISK.format(path=str(path))


def run_on_a_small_disk(disk: Path, size: str, command: str | None = None, *, python: str | None = None,
                        env: dict | None = None, timeout: float = 60):
    """Run the shell ``command`` (or the Python source ``python``, dedented) with a fresh tmpfs of ``size`` (``64k``,
    ``4m``) mounted at the folder ``disk``, in a user and mount namespace (``unshare -Urm``), from the repository's
    root: a disk that fills up without filling this machine's. Skips the test where no tmpfs can be mounted."""
    import shlex
    import shutil as _shutil
    import subprocess
    import sys
    import textwrap

    import pytest

    if not _shutil.which("unshare"):
        pytest.skip("no unshare here to mount a small tmpfs in a user namespace")
    if python is not None:
        command = f"exec {sys.executable} -c {shlex.quote(textwrap.dedent(python))}"
    script = f"mount -t tmpfs -o size={size} tmpfs {shlex.quote(str(disk))} || exit 97; {command}"
    res = subprocess.run(["unshare", "-Urm", "sh", "-c", script], capture_output=True, text=True, timeout=timeout,
                         cwd=Path(__file__).resolve().parent.parent, env=env)
    if res.returncode == 97 or res.stderr.startswith("unshare:"):
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    return res


def end_lock_session(other, name: str = "index") -> None:
    """End (``pg_terminate_backend``) the PostgreSQL session holding this test's ``name`` lock, as a server restart or an
    operator does; ``other``: a Store on the same database and schema (the key is of this test's own schema, so another
    test's lock on the shared server is never touched)."""
    import zlib

    from sqlalchemy import text

    with other.engine.begin() as conn:
        scope = conn.exec_driver_sql("select current_database() || '.' || current_schema()").scalar()
        key = zlib.crc32(f"taskspace:{scope}:{name}".encode())
        n = conn.execute(text("select count(pg_terminate_backend(pid)) from pg_locks where locktype = 'advisory' "
                              "and granted and objid = (:k)::bigint::oid and pid <> pg_backend_pid()"), {"k": key}).scalar()
    assert n == 1, n
    # pg_terminate_backend only signals the backend: until it has exited it holds the lock, and a second holder taking
    # it at once was refused ("holds the 'index' lock ... server backend pid ?") on a busy machine
    import time

    deadline = time.monotonic() + 30
    while True:
        with other.engine.begin() as conn:
            held = conn.execute(text("select count(*) from pg_locks where locktype = 'advisory' and granted "
                                     "and objid = (:k)::bigint::oid"), {"k": key}).scalar()
        if not held:
            return
        assert time.monotonic() < deadline, "the ended session still holds the lock after 30 s"
        time.sleep(0.05)


def lose_lock_session(other, taken: bool, held: list) -> None:
    """End the session holding this test's 'index' lock (:func:`end_lock_session`); when ``taken``, ``other`` then
    takes the lock, as a waiting pass does, and its context manager is appended to ``held`` (the test exits it)."""
    end_lock_session(other)
    if taken:
        cm = other.lock("index")
        cm.__enter__()
        held.append(cm)


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``taskspace ARGS`` run in this process (the query module's cached stores
    closed after it)."""
    import sys

    from indexer import cli as cli_module

    argv, sys.argv = sys.argv, ["taskspace", *args]
    try:
        try:
            cli_module.main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
        if "indexer.query" in sys.modules:
            sys.modules["indexer.query"].close_cached(encoders=False)
    out = capsys.readouterr()
    return code, out.out, out.err


def hangup_as_from_a_terminal() -> None:
    """``preexec_fn`` of a child a test sends SIGHUP: SIGHUP at its default action, as for a command run from a shell.
    A test run started with ``nohup`` (or under a service manager ignoring it) ignores SIGHUP, the child inherits that,
    and the commands keep it ignored (``indexer.worker.hangup_is_ours``): SIGHUP then did nothing and those tests
    failed (the worker ran on until the 60 s timeout; `taskspace index` finished its pass and exited 0, not 129)."""
    import signal

    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def write_harness_task(folder: Path, task: str, ts: str, docs: list[tuple[str, dict]], *,
                       model: str = "meta-llama/Meta-Llama-3-8B-Instruct", version: float = 0.0) -> None:
    """One lm-eval 0.4.5 ``--log_samples`` run of a generate_until task in the shape of CALAMITA's real output
    (meta-llama__Meta-Llama-3-8B-Instruct/, harness written by the task authors, Nov. 2024): ``samples_<task>_<ts>.jsonl``
    with ``doc``, ``arguments.gen_args_0`` and the task's own per-sample metrics (``docs``: the question and its metric
    values), no ``filter``/``metrics`` keys, beside ``results_<ts>.json`` (aggregates ``<metric>,none``)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (text, metrics) in enumerate(docs):
        rows.append({"doc_id": i, "doc": {"sentence": text}, "target": f"['{text.split()[0]}']",
                     "arguments": {"gen_args_0": {"arg_0": f"[Genere marcato]: {text}\n[Espressione]:",
                                                  "arg_1": {"max_gen_toks": 128, "do_sample": False, "until": ["\n\n"]}}},
                     "resps": [["x"]], "filtered_resps": ["x"], "doc_hash": "a", "prompt_hash": "b", "target_hash": "c",
                     **metrics})
    (folder / f"samples_{task}_{ts}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    keys = list(docs[0][1]) if docs else []
    (folder / f"results_{ts}.json").write_text(json.dumps({
        "results": {task: {"alias": task, **{f"{k},none": float(np.mean([m[k] for _, m in docs])) for k in keys}}},
        "configs": {task: {"task": task, "tag": "calamita", "output_type": "generate_until", "doc_to_text": "{{sentence}}",
                           "num_fewshot": 0, "metadata": {"version": version}}},
        "versions": {task: version}, "n-shot": {task: 0},
        "config": {"model": "hf", "model_args": f"pretrained={model},dtype=bfloat16"},
        "model_name": model, "model_name_sanitized": model.replace("/", "__")}))


def write_calamita_run(root: Path) -> Path:
    """CALAMITA's output folder (tests_calamita/) in its real shape: one model folder holding a translation task scored
    by ``comet_score`` (with bleu/chrf/bleurt, chrF on a 0-100 scale) and a gender task, ``gfg_task_1_1``, scored by
    ``bert_f1`` alone; each a run of its own (timestamp). Returns the model folder."""
    d = root / "meta-llama__Meta-Llama-3-8B-Instruct"
    write_harness_task(d, "MT_CALAMITA_it_en_public", "2024-11-13T03-09-01.700058", [
        ("Ora abbiamo topi di 4 mesi che non sono diabetici.", {"bleu_score": 0.17, "chrf_score": 49.05,
                                                                 "bleurt_score": 0.30, "comet_score": 0.86}),
        ("Il dottor Ehud Ur ha avvertito che la ricerca e ancora agli inizi.", {"bleu_score": 0.4, "chrf_score": 71.2,
                                                                             "bleurt_score": 0.61, "comet_score": 0.91}),
        ("Come altri esperti, e scettico.", {"bleu_score": 0.0, "chrf_score": 20.0, "bleurt_score": 0.1,
                                             "comet_score": 0.42})])
    write_harness_task(d, "gfg_task_1_1", "2024-11-14T21-28-28.485173", [
        ("Quest'anno mi sono ammalato gia due volte.", {"bert_f1": 1.0}),
        ("La studentessa era preoccupata di andare fuori tema.", {"bert_f1": 0.0}),
        ("Le altre giocatrici sono le tue avversarie.", {"bert_f1": 1.0}),
        ("I nostri vicini sono partiti ieri.", {"bert_f1": 1.0})])
    return d


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped): a run record's process that is gone."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(proc.stdout)
