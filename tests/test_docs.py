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


def test_serving_md_names_every_route_answer_schema_body_field_parameter_and_limit_of_the_server(monkeypatch, tmp_path):
    """docs/SERVING.md against the app `taskspace serve` runs (its /openapi.json, built without opening a store): every
    route is a row of "Routes" and every row a route; the /openapi.json row names each route's answer schema; the
    `POST /v1/find` row each body field (`"k"`) and the `GET /v1/models` row each query parameter; "Limits" each of
    `indexer.serve.LIMITS` with its value. Before, the page's files (`GET /static/{name}`) were in no row and the
    /openapi.json row named five answer schemas of six (not `SpaceList`, `GET /v1/spaces`'); and the fields of each answer
    of `GET /v1/models/{id}`, `/v1/spaces`, `/v1/benchmarks` and `/v1/models` are named in its row (before, the model
    page's were not: `indexed`, `strengths` and each strength's fields were in no doc)."""
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "home"))
    from indexer.serve import LIMITS, create_app

    app = create_app()
    spec = app.openapi()
    doc = (ROOT / "docs" / "SERVING.md").read_text(encoding="utf-8")
    routes = doc[doc.index("## Routes"):doc.index("## Errors")]
    rows = dict((f"{m} {p}", text)
                for m, p, text in re.findall(r"^\| `(GET|POST) (/[^`]*)` \| (.*) \|$", routes, re.M))
    served = {f"{m} {r.path.replace('{model_id:path}', '{id}').replace('{model_id}', '{id}')}"
              for r in app.routes for m in getattr(r, "methods", ()) if m != "HEAD"}
    assert sorted(served - set(rows)) == [], "routes SERVING.md does not list"
    assert sorted(set(rows) - served) == [], "rows of SERVING.md that are no route"
    for path, ops in spec["paths"].items():
        for op in ops.values():
            ref = op["responses"]["200"]["content"]["application/json"]["schema"].get("$ref", "")
            if ref:
                assert f"`{ref.rsplit('/', 1)[1]}`" in rows["GET /openapi.json"], (path, ref)
    body = spec["paths"]["/v1/find"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert len(body) >= 10
    assert [f for f in body if f'"{f}"' not in rows["POST /v1/find"]] == []
    params = [p["name"] for p in spec["paths"]["/v1/models"]["get"]["parameters"]]
    assert len(params) >= 10 and [p for p in params if not re.search(rf"[`?&]{p}[`=]", rows["GET /v1/models"])] == []
    schemas = spec["components"]["schemas"]
    for route, names in (("GET /v1/models/{id}", ("ModelDetail", "Strength")), ("GET /v1/spaces", ("SpaceList", "Space")),
                         ("GET /v1/benchmarks", ("BenchmarkList", "Benchmark")), ("GET /v1/models", ("ModelPage",))):
        for name in names:
            assert [f for f in schemas[name]["properties"] if f'"{f}"' not in rows[route]] == [], (route, name)
    limits = doc[doc.index("## Limits"):doc.index("## The search page")]
    for name, value in LIMITS.items():
        assert re.search(rf"^\| `{name}`[^|]*\| {value:,}\b", limits, re.M), (name, value)


def test_each_doc_says_whom_it_is_for_and_where_to_go_next_and_the_readme_maps_them():
    """A reader who lands on a page learns at its top whether it is theirs and where to read on: each docs/*.md has,
    right under its title, a `**For**` line naming its readers with links to the pages to read next (each link a file
    that exists), and the README's "Documentation" section links every page with whom it is for. Before, no page said
    whom it was for, and the README linked some pages from its prose alone (TESTING.md from one sentence)."""
    docs = sorted((ROOT / "docs").glob("*.md"))
    assert len(docs) >= 9
    for doc in docs:
        lines = doc.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# ") and lines[1] == "", doc.name
        line = lines[2]
        assert line.startswith("**For**"), (doc.name, line)
        links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", line)
        assert any(link != doc.name for link in links), (doc.name, "links no page to read next")
        assert [link for link in links if not (doc.parent / link).resolve().is_file()] == [], doc.name
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "\n## Documentation\n" in readme
    section = readme.split("\n## Documentation\n", 1)[1].split("\n## ", 1)[0]
    for doc in docs:
        assert f"](docs/{doc.name})" in section, doc.name


def test_the_readme_names_every_field_of_the_search_answer_as_openapi_declares_it(monkeypatch, tmp_path):
    """README "Finding models" explains `taskspace search --json` (= `POST /v1/find`, `result.to_dict()`): every field
    /openapi.json declares for that answer, its query, space, results and their metadata, coverage and evidence, is
    named there as `field`, so a field added to the answer without a word for its reader fails here."""
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "home"))
    from indexer.serve import create_app

    schemas = create_app().openapi()["components"]["schemas"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Finding models\n", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`(\w+)`", section)) | set(re.findall(r'"(\w+)"', section))
    missing = {}
    for name in ("FindAnswer", "Query", "SpaceInfo", "Result", "Metadata", "Coverage", "Evidence", "EvidencePrompt",
                 "Observed", "MeasuredNear"):
        props = schemas[name]["properties"]
        assert props, name
        missing.update({f"{name}.{p}": 1 for p in props if p not in named})
    assert sorted(missing) == []


def test_taskspace_help_lists_every_exit_code_the_readme_gives():
    """`taskspace --help` ends with the exit codes; each one the README gives (by kind 1 to 6, an interrupt's 130, 143
    and 129, a closed output's 141) is there. Before, the help left out 129, the exit of a command whose terminal
    closed (SIGHUP), which the README and the CLI's handler give."""
    import typer.main

    from indexer.cli import app

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    said = re.search(r"exit with a code by kind: (.*?); with `--json`", readme).group(1)
    kinds = dict((int(n), k) for n, k in re.findall(r"(\d) (\w+)", said))
    assert sorted(kinds) == [1, 2, 3, 4, 5, 6]
    signals = [int(n) for n in re.search(r"an interrupt \(([\d, ]+)\)", readme).group(1).split(", ")]
    assert sorted(signals) == [129, 130, 143] and "exit 141" in readme
    help_text = typer.main.get_command(app).help
    codes = help_text[help_text.index("Exit codes:"):]
    for n, kind in kinds.items():
        assert re.search(rf"\b{n} [^;]*{kind[:4]}", codes, re.I), (n, kind, codes)
    for n in (*signals, 141):
        assert re.search(rf"\b{n}\b", codes), (n, codes)


def test_every_dotted_indexer_name_the_docs_give_exists(monkeypatch, tmp_path):
    """Every `indexer.module.NAME` the README and docs/*.md name (a module, a function, a class, a constant) imports
    and resolves, so a rename in the code without the docs fails here. Before, docs/BENCHMARKS.md named
    `indexer.browse._coverage_scores`, renamed `_coverage_rows` by the commit that section measured."""
    import importlib

    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "home"))
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for name in sorted(set(re.findall(r"\bindexer(?:\.[A-Za-z_]\w*)+", doc.read_text(encoding="utf-8")))):
            if name.endswith(".NAME"):  # a placeholder: `indexer.NAME` for each name of `indexer.__all__`
                continue
            parts = name.split(".")
            for i in range(len(parts), 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                    break
                except ImportError:
                    continue
            for attr in parts[i:]:
                if not hasattr(obj, attr):
                    missing.append(f"{doc.name}: {name}")
                    break
                obj = getattr(obj, attr)
    assert missing == []


def test_every_file_of_the_checkout_the_docs_name_exists():
    """Every path into the checkout the README and docs/*.md give (`indexer/...`, `tests/...`, `benchmarks/...`,
    `scripts/...`, `migrations/...`, `docs/...`, `.ci/...`) exists, so a file moved or removed without the docs fails
    here; a glob (`tests/test_solver*.py`) matches a file. Aside: lighteval's own `tests/reference_details/` (another
    repository's path) and the `level` branch's test that RESULTS.md says was never merged."""
    aside = {"tests/reference_details", "tests/test_pipeline_level.py"}
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for p in set(re.findall(r"(?<![\w/.])((?:indexer|tests|benchmarks|scripts|migrations|docs|\.ci)/[\w/.*-]*\w)",
                                text)):
            if p in aside or "<" in p:
                continue
            if not (list(ROOT.glob(p)) if "*" in p else (ROOT / p).exists() or (doc.parent / p).exists()):
                missing.append(f"{doc.name}: {p}")
    assert sorted(missing) == []


def test_every_option_a_taskspace_command_in_the_docs_is_given_is_an_option_of_that_command():
    """Each `taskspace CMD [SUB] ... --opt` the README and docs/*.md show (inline or a line of a code block) gives CMD
    (SUB) options it has (or the global ones), so an option renamed in the code without the docs fails here. Aside:
    the two commands docs/RELIABILITY.md shows on purpose as usage errors (`search --eps`, `search -n`)."""
    import typer.main

    from indexer.cli import app

    group = typer.main.get_command(app)
    top = {o for p in group.params for o in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}
    aside = {("taskspace search --eps 1e9", "--eps"), ("taskspace search QUERY -n 5", "-n")}
    wrong, checked = [], 0
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for span in re.findall(r"`(taskspace [^`]+)`", text) + re.findall(r"^\s*(taskspace [^\n#]+)", text, re.M):
            words = span.split()[1:]
            while words and words[0] in top:
                words = words[1:]
            if not words or words[0] not in group.commands:
                continue
            cmd, rest = group.commands[words[0]], words[1:]
            if hasattr(cmd, "commands"):  # a group: its subcommand, `taskspace spaces` alone being `spaces list`
                if rest and rest[0] in cmd.commands:
                    cmd, rest = cmd.commands[rest[0]], rest[1:]
                elif words[0] == "spaces":
                    cmd = cmd.commands["list"]
                else:
                    continue
            real = top | {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
            for w in rest:
                if w == "--":
                    break
                m = re.match(r"^(--?[A-Za-z][\w-]*)", w)
                if m:
                    checked += 1
                    if m.group(1) not in real and (span.strip(), m.group(1)) not in aside:
                        wrong.append(f"{doc.name}: {span.strip()[:80]} ({m.group(1)})")
    assert checked > 200 and sorted(set(wrong)) == []


def test_every_error_class_the_docs_name_exists():
    """Each `...Error` the README and docs/*.md name is a class of `indexer/` (its error tree, `indexer/hub.py`'s), a
    Python builtin, or one of the libraries' the docs quote (SQLAlchemy's, pyarrow's, rich's, httpx's, ...), so an
    error class renamed or removed without the docs fails here."""
    import builtins

    libraries = {"OperationalError", "ProgrammingError", "IntegrityError", "DatabaseError", "ArrowNotImplementedError",
                 "MarkupError", "LocalProtocolError", "JSONDecodeError", "HTTPValidationError", "CommandError",
                 "CalledProcessError"}
    ours = {m for f in (ROOT / "indexer").rglob("*.py")
            for m in re.findall(r"^\s*class (\w+Error)\b", f.read_text(encoding="utf-8"), re.M)}
    assert {"IndexerError", "InputError", "NotFoundError", "StoreError", "BusyError", "HubOutOfTimeError"} <= ours
    named = {e for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
             for e in re.findall(r"\b([A-Z][A-Za-z]+Error)\b", doc.read_text(encoding="utf-8"))}
    assert sorted(e for e in named if e not in ours and e not in libraries and not hasattr(builtins, e)) == []


def test_check_help_names_every_drift_the_readme_says_exits_1():
    """README: `taskspace check` exits 1 on missing, stale or extra points and, in the configured space, on models a
    pass would solve (results ingested since their vector was solved) or remove (left without results). Its `--help`
    (and the command list of `taskspace --help`) says the same. Before, the help named the points alone, so `check`
    exiting 1 after a `taskspace ingest`, every point in place, read as a bug."""
    import typer.main

    from indexer.cli import app

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    row = re.search(r"\| `taskspace check \[--space NAME\] \[--json\]` \| (.*?) \|", readme).group(1)
    assert "missing, stale, extra points" in row and "exit 1 when there is any" in row
    assert "that `taskspace index` would solve" in row and "models left without results" in row
    said = " ".join(typer.main.get_command(app).commands["check"].help.split("Examples:")[0].split())
    assert "the configured space (TASKSPACE_ENCODER, TASKSPACE_METHOD, TASKSPACE_LAMBDA, TASKSPACE_EPS)" in row
    for words in ("missing, stale or extra", "exit 1", "taskspace index", "without results",
                  "the configured space (TASKSPACE_ENCODER, TASKSPACE_METHOD, TASKSPACE_LAMBDA, TASKSPACE_EPS) is not built"):
        assert words in said, (words, said)


def test_the_serving_md_example_is_a_valid_body_whose_filters_work_on_the_index_make_run_builds(taskspace_home):
    """docs/SERVING.md's curl example: its body passes the app's checks (on a home with no index the answer is the
    empty index's 404, not a 4xx about the body), and its filters need no Hub metadata, which the index `make run`
    builds offline lacks (licence, size, pipeline tag, gate). Before, its filter was `max_params` 8B: on that index
    the example answered no model at all. (That it answers five models there was checked by hand: the test of the
    README's examples indexes the sample already, minutes on a loaded machine.)"""
    import json

    from fastapi.testclient import TestClient

    from indexer.serve import create_app

    text = (ROOT / "docs" / "SERVING.md").read_text(encoding="utf-8")
    body = json.loads(re.search(r"curl -s localhost:8000/v1/find .*?-d '(\{.*?\})'", text, re.S).group(1))
    assert set(body.get("filters") or {}) <= {"open_only", "min_evidence", "benchmark"}, body
    res = TestClient(create_app(), raise_server_exceptions=False).post("/v1/find", json=body)  # no start-up: no encoder
    assert res.status_code == 404 and res.json()["error"]["field"] is None, res.text
    assert "empty" in res.json()["error"]["message"]
