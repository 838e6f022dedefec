"""The docs name real things: every test docs/RELIABILITY.md cites exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_cited_in_reliability_md_exists():
    text = (ROOT / "docs" / "RELIABILITY.md").read_text()
    cited = set(re.findall(r"(test_\w+\.py)::(test_\w+)", text))
    assert len(cited) > 40
    missing = [f"{f}::{t}" for f, t in sorted(cited)
               if not re.search(rf"^def {t}\(", (ROOT / "tests" / f).read_text(), re.M)]
    assert missing == []
    for f in set(re.findall(r"`(test_\w+\.py)`", text)):
        assert (ROOT / "tests" / f).is_file(), f


def test_every_row_of_the_docs_tables_is_inside_a_table():
    """A row appended after a section's table (below a list, or under the next heading) renders as a paragraph of
    pipes: each ``|`` line follows a header, its separator or another row, in every doc."""
    stray = []
    for doc in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        lines = doc.read_text().splitlines()
        for n, line in enumerate(lines):
            if line.startswith("|") and not (lines[n - 1].startswith("|") if n else False):
                if not (n + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|$", lines[n + 1])):  # not a table's header
                    stray.append(f"{doc.name}:{n + 1}")
    assert stray == []


def test_testing_md_cites_real_tests_and_every_mutant():
    """docs/TESTING.md: every test it cites exists, and every mutant of scripts/mutants.py is in its table with
    test ids that exist."""
    import importlib.util
    import itertools

    text = (ROOT / "docs" / "TESTING.md").read_text()
    for f, t in set(re.findall(r"(test_\w+\.py)::(test_\w+)", text)):
        assert re.search(rf"^def {t}\(", (ROOT / "tests" / f).read_text(), re.M), f"{f}::{t}"
    spec = importlib.util.spec_from_file_location("mutants", ROOT / "scripts" / "mutants.py")
    mutants = importlib.util.module_from_spec(spec)
    import sys

    sys.modules["mutants"] = mutants  # dataclasses look their module up
    try:
        spec.loader.exec_module(mutants)
    finally:
        sys.modules.pop("mutants", None)
    assert len(mutants.MUTANTS) >= 20
    rows = list(itertools.takewhile(lambda line: line.startswith("| "),
                                    text[text.index("| mutant (file) | caught by |"):].splitlines()[2:]))
    assert len(rows) == len(mutants.MUTANTS), f"{len(rows)} rows in TESTING.md's mutant table, {len(mutants.MUTANTS)} mutants"
    for m in mutants.MUTANTS:
        assert (ROOT / m.path).read_text().count(m.old) == 1, m.name  # still applies to the code
        for node in m.tests:
            f, _, t = node.partition("::")
            assert (ROOT / f).is_file(), node
            if t:
                assert re.search(rf"^def {t}\(", (ROOT / f).read_text(), re.M), node


def test_the_docs_give_the_result_limits_of_the_cli_http_and_library_as_the_code_has_them():
    """How many results (`k`) and evidence items each interface takes differs: `taskspace search -k` 1 to 1,000, `POST
    /v1/find` at most 100 (`max_k`), `taskspace demo -k` and the library any number; `max_evidence` 20 over HTTP only.
    The README and docs/SERVING.md say so; before, only the HTTP limit was written anywhere, so `search -k 500` working
    and `"k": 500` answering 422 looked like a bug of one of them."""
    import typer.main

    from indexer.cli import app
    from indexer.serve import LIMITS

    group = typer.main.get_command(app)

    def option(cmd, name):
        return next(p for p in group.commands[cmd].params if p.name == name)

    assert (option("search", "top").min, option("search", "top").max) == (1, 1000)
    assert option("demo", "top").max is None and getattr(option("search", "evidence"), "max", None) is None
    assert (LIMITS["max_k"], LIMITS["max_evidence"]) == (100, 20)
    readme = (ROOT / "README.md").read_text()
    assert "`-k` 1 to 1,000 (`POST /v1/find` takes `k` up to 100, `indexer.find_models` any k)" in readme
    serving = (ROOT / "docs" / "SERVING.md").read_text()
    assert ("| `max_k` | 100 (`taskspace search -k` takes up to 1,000; `taskspace demo -k` and "
            "`indexer.find_models(k=...)` any number) |") in serving
    assert ("| `max_evidence` (evidence items per result) | 20 (`taskspace search --evidence` and "
            "`indexer.find_models(evidence=...)`: any number) |") in serving


def test_the_readme_says_how_to_upgrade_a_home():
    """An upgrading user looks in the README: its Upgrading section names what each part of a home needs (the SQL
    migration, `db upgrade` for PostgreSQL, `db downgrade` to go back, `reindex` for the vector index, `index` for the
    configured method's space). Before, the README had no word on upgrading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "\n## Upgrading\n" in text
    section = text.split("\n## Upgrading\n", 1)[1].split("\n## ", 1)[0]
    for needed in ("migrated", "taskspace db upgrade", "taskspace db downgrade REV --yes", "newer than this taskspace",
                   "taskspace reindex", "taskspace index", "--space NAME"):
        assert needed in section, needed


def test_the_readme_names_every_function_and_class_the_package_exports():
    """A notebook user reads `indexer.__all__` (what `from indexer import *` and completion offer) and looks each name
    up in the README's "Finding models" section; every one is there as `indexer.NAME`. Before, `list_models`,
    `model_detail`, `ModelResult` and `parse_params` were exported and named nowhere in the README."""
    import indexer

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Finding models\n", 1)[1].split("\n## ", 1)[0]
    missing = [n for n in indexer.__all__ if n != "__version__" and f"`indexer.{n}" not in section]
    assert not missing, missing


def test_the_readme_layout_names_every_module_of_the_package():
    """README "Layout" is where a reader looks for the module that does X: every module and sub-package of `indexer/`
    is named there. Before, `spaces.py` and `cli_spaces.py` (`taskspace spaces`, added with the command) and
    `outcomes.py` were missing, so the layout did not say where the spaces' listing and drop live."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"[\w.]+", layout))
    pkg = ROOT / "indexer"
    modules = {p.name for p in pkg.glob("*.py") if p.name != "__init__.py"}
    packages = {p.name for p in pkg.iterdir() if (p / "__init__.py").is_file()}
    assert len(modules) > 30
    assert sorted(modules - named) == []
    assert sorted(p for p in packages if f"{p}/" not in layout) == []


def test_every_option_the_readme_commands_table_shows_exists_and_every_option_is_shown():
    """Each row of the README's "Commands" table gives a command's synopsis: every `-x`/`--xyz` it shows is an option
    of that command (or of the subcommands the row lists, `sources list|add|remove`), and every option of the command
    is shown (`--every` of `serve`, another name of `--worker-every`, and the negations `--sweep` / `--metadata` of
    `--no-sweep` / `--no-metadata` aside). A flag renamed or added in the code without the table fails here."""
    import typer.main

    from indexer.cli import app

    group = typer.main.get_command(app)
    table = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Commands\n", 1)[1].split("\nEvery command", 1)[0]
    aside = {"--every", "--sweep", "--metadata"}
    seen = set()
    for row in table.splitlines():
        m = re.match(r"\| `taskspace ([^`]*)` \|", row)
        if not m:
            continue
        words = m.group(1).split()
        cmd = group.commands[words[0]]
        subs = [cmd]
        if hasattr(cmd, "commands"):  # a group: the subcommands the row names (`[list]`, `add`, `drop`, `upgrade`)
            names = {w for w in re.split(r"[\s\[\]|\\]+", m.group(1)) if w in cmd.commands}
            subs = [cmd.commands[n] for n in names]
            seen.update((words[0], n) for n in names)
        else:
            seen.add((words[0],))
        shown = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", m.group(1)))
        real = {o for c in subs for p in c.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}
        real -= {"--help", "-h"}
        assert sorted(shown - real) == [], (m.group(1), "not options of the command")
        if len(subs) == 1:
            assert sorted(real - shown - aside) == [], (m.group(1), "options the row does not show")
    every = {(n,) for n, c in group.commands.items() if not hasattr(c, "commands")}
    every |= {(n, s) for n, c in group.commands.items() if hasattr(c, "commands") for s in c.commands}
    assert sorted(every - seen) == []


def test_serving_md_names_every_note_the_search_page_shows_under_its_status_line():
    """docs/SERVING.md's "The search page" lists the notes the page writes under its status line (indexer/web/app.js
    `notes.push`): each note's words are in the doc. Before, the doc named the order and prefer smaller's 100B charge
    only; the notes for a prompt cut by the encoder (added with `query.truncated`), options filled from neighbours,
    filters' exclusions and compare mode's unranked models were on the page with no word in the doc; and so, with
    `query.measured_near`, how many results were measured near the query and that none in the index was."""
    app = (ROOT / "indexer" / "web" / "app.js").read_text(encoding="utf-8")
    serving = " ".join((ROOT / "docs" / "SERVING.md").read_text(encoding="utf-8").split())
    assert app.count("notes.push(") >= 7
    for words in ("longer than the encoder reads", "answer options taken from the nearest indexed questions",
                  "charged as 100B", "no vector in this space: `taskspace index` solves", "removed by a filter, or without a vector", "none of the listed models is ranked", "excluded",
                  "of these", "(other indexed models were)",
                  "no model in the index was measured on anything like this query"):
        assert words in app, words  # the page still says it
        assert words in serving, words


def test_the_formats_md_examples_ingest_as_shown(taskspace_home, tmp_path):
    """docs/FORMATS.md's "Minimal examples": each file written from its block (its path on the line above), the
    lighteval script run, and every example folder ingested without an error, as the page says."""
    import subprocess
    import sys

    from indexer.ingest import ingest
    from indexer.store.sql import Store

    text = (ROOT / "docs" / "FORMATS.md").read_text()
    section = text[text.index("## Minimal examples"):text.index("## Per-sample scores")]
    work = tmp_path / "formats"
    files = re.findall(r"^`([^`\n]+)`[^\n]*\n```[a-z]*\n(.*?)```", section, re.M | re.S)
    assert {Path(p).parts[0] for p, _ in files} == {"results", "results-matrix", "out"}
    for path, body in files:
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(body)
    (work / "results-matrix" / "prompts.csv").write_text((work / "results" / "prompts.csv").read_text())
    script = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    subprocess.run([sys.executable, "-c", script], cwd=work, check=True, timeout=120)
    store = Store(f"sqlite:///{tmp_path / 'formats.db'}", upgrade=True)
    try:
        got = {}
        for folder in ("results", "results-matrix", "out", "light-out"):
            summary = ingest(str(work / folder), store=store, fetch_metadata=False)
            assert summary.errors == [] and summary.sources == 1, (folder, summary)
            got[folder] = (summary.models, summary.prompts, summary.outcomes)
        assert got == {"results": (2, 3, 6), "results-matrix": (0, 0, 5), "out": (1, 2, 2), "light-out": (1, 1, 1)}
        assert "added 2 models, 3 prompts; 6 outcomes stored from 1 source" in section
    finally:
        store.close()
