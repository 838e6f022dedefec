// taskspace search page: plain JavaScript, no build step, no request to any other host.
// The query lives in the URL (?q=...&k=...&offset=...; ?model=ID for a model page), so a result can be shared.
"use strict";

const $ = (id) => document.getElementById(id);
const FIELDS = ["benchmark", "space", "license", "min_params", "max_params", "pipeline_tag", "min_evidence", "measured_on",
                "models", "k", "prefer_smaller", "rank"];
const INPUT = { license: "licenses" };  // URL parameter -> input id where they differ
const FLAGS = ["exclude_gated", "open_only"];
// a flag in the URL: true/false/1/0 in any case (before, only 1 counted: open_only=true was ignored); anything else
// is null, sent as given for the server to name
const FLAG_WORDS = new Map([["true", true], ["1", true], ["false", false], ["0", false], ["", false]]);
const flag = (v) => (v === null ? false : FLAG_WORDS.has(v.trim().toLowerCase()) ? FLAG_WORDS.get(v.trim().toLowerCase()) : null);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    // a style through the CSSOM, which the page's Content-Security-Policy (no inline styles) allows; a style
    // attribute set with setAttribute is refused by it
    if (k === "class") node.className = v; else if (k === "text") node.textContent = v;
    else if (k === "style") node.style.cssText = v; else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

const pct = (p) => (p === null || p === undefined ? "n/a" : `${Math.round(p * 100)}%`);
// a count as the CLI writes it (indexer.cli_find.count): "32,823", not "32823" (the API's JSON keeps the plain number)
const count = (n) => (typeof n === "number" && Number.isFinite(n) ? n.toLocaleString("en-US") : String(n));
// a count with its noun, singular for one: "1 prompt", "4 models", "0 models" (before: "1 prompt(s)", "1 model(s)",
// and "1 prompts measured" on a model page)
const counted = (n, one, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

// the reasons the CLI prints under its table (indexer/cli_find.py), said the same way here
const NO_SIGNAL = "no calibrated signal: in this index's held-out results success did not rise with the score beyond chance " +
  "(too few results?), so every probability is the base rate and no interval is given; the order is the models' raw scores";
const NOT_CALIBRATED = (space) => `not calibrated: space ${space} stores no calibration map (indexed by a taskspace from ` +
  "before one was stored), so P(success) is (1 + score) / 2, not a probability fitted on held-out results, and no " +
  "interval is given; `taskspace index` gives the configured method's space one";
const NEAR_UNKNOWN = "measured near unknown: this index cannot tell whether those models were measured on prompts near this " +
  "query; it holds none of their per-prompt results, and its pulled records do not say which prompts each model was " +
  "measured on (records published, or pulled, by a taskspace from before they did): pulling them again, " +
  "published again by a newer taskspace if need be, gives it (and where the map weighs it, the publisher's " +
  "order and probabilities)";

// a result whose results_changed is true (indexer.find.RESULTS_CHANGED, the CLI's note)
const RESULTS_CHANGED = "results changed since this model was indexed; its score is from before them " +
  "(the next `taskspace index` pass includes them)";
// a model page whose results_changed is true (indexer.browse.MODEL_RESULTS_CHANGED, the CLI's note)
const MODEL_RESULTS_CHANGED = "results changed since this model was indexed: its observed accuracy is of its results now, " +
  "its predicted strengths are from before them (the next `taskspace index` pass includes them)";

// query.measured_near said once, as the CLI's line under its table (indexer.cli_find.measured_near_note): that no model
// in the index was measured on anything like the query (a caveat: the ranking rests on general ability alone), or how
// many of the results were measured near it when not all were (a note); before, only each row's "not measured near"
const FAR = "far from everything measured: no model in the index was measured on anything like this query (no indexed " +
  "prompt is near it), so the ranking rests on the models' general ability alone";
function nearCount(q) {
  const mn = q.measured_near;
  if (!mn || mn.results === mn.of || !mn.any_model) return null;
  const on = q.kind === "benchmark" ? `on benchmark ${q.benchmark}` : "near this query";
  // one result (compare mode, k 1): "this model", not "none of these 1 models", as the CLI's line
  if (mn.results === 0 && mn.of === 1) return `this model was not measured ${on} (other indexed models were)`;
  return mn.results === 0 ? `none of these ${count(mn.of)} models was measured ${on} (other indexed models were)` + measuredInstead(q)
    : `${count(mn.results)} of these ${count(mn.of)} models ${mn.results === 1 ? "was" : "were"} measured ${on}`;
}

// the choice that lists the models measured there instead (the CLI's indexer.cli_find._measured_instead), for a list
// none of whose rows was: not in compare mode (the user's models). Before, only why: on a home of 32,676
// single-benchmark rows ten truthfulqa/mmlu rows topped a Python coding prompt, and the page did not say what to do
function measuredInstead(q) {
  if (q.models && q.models.length) return "";
  if (q.kind === "benchmark" && q.benchmark) return `; "Measured on benchmark" ${q.benchmark} lists only the models measured on it`;
  return (q.rank || "probability") === "probability"
    ? "; ranking by the lower end of its interval favours the models measured near it" : "";
}

// three significant digits, as the Hub shows a size, and at least one decimal (indexer.find.format_params): 8.03B,
// 70.6B, 8.0B (before, one decimal: Meta-Llama-3-8B's 8.03B read "8.0B", which max params 8B excludes)
function formatParams(n) {
  if (n === null || n === undefined) return "unknown";
  const units = [["T", 1e12], ["B", 1e9], ["M", 1e6], ["K", 1e3]];
  for (let i = 0; i < units.length; i++) {
    let [u, s] = units[i];
    if (n < s) continue;
    const v = n / s;
    let text = v.toFixed(Math.max(1, 2 - Math.floor(Math.log10(v))));
    // 999.95M rounds to 1000.0M: one of the next unit, as the CLI writes it (before, "1000.0M")
    if (i > 0 && Number(text) >= 1000) [text, u] = ["1.0", units[i - 1][0]];
    while (text.endsWith("0") && text.split(".")[1].length > 1) text = text.slice(0, -1);
    return `${text}${u}`;
  }
  return String(n);
}

// a model's API path, and its page, in the space chosen (?space=; none: the default space)
// an id with a segment "." or ".." ("../benchmarks", "org/..") goes as one segment, its slashes as %2F (which the API
// takes as a slash): the browser's URL parser resolves dot segments, even percent-encoded, so before, /?model=..%2Fbenchmarks
// fetched /v1/benchmarks and the page failed ("Cannot read properties of undefined"), and ../.. fetched the page itself
const DOTS = (s) => s === "." || s === "..";
function modelPath(id, space) {
  const parts = id.split("/");
  return "/v1/models/" + (parts.some(DOTS) ? encodeURIComponent(id) : parts.map(encodeURIComponent).join("/")) +
    (space ? "?space=" + encodeURIComponent(space) : "");
}
function modelPage(id, space) { return "/?model=" + encodeURIComponent(id) + (space ? "&space=" + encodeURIComponent(space) : ""); }

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const names = (text, word) => new RegExp(`(^|[^\\w.])${escapeRe(word)}(?![\\w])`).test(text);

// an error's text naming its field once: the server's message already starts "FIELD: " and most go on to name it
// ("k: k must be a positive integer"), so that prefix is dropped then, and the field is added only where no word names it
function errorText(e, status) {
  const msg = e.message || `HTTP ${status}`;
  if (!e.field) return msg;
  // one of the task's prompts: by its place in the box, from 1 (before: the API's "prompts[0]: ...", counted from 0)
  const nth = /^prompts\[(\d+)\]$/.exec(e.field);
  if (nth) return `prompt ${Number(nth[1]) + 1}: ` + (msg.startsWith(`${e.field}: `) ? msg.slice(e.field.length + 2) : msg);
  const leaf = e.field.split(".").pop();
  // a filter, a knob or the compare box by the form's words, as the notes say it (FILTER_LABELS, FORM_LABELS): "min
  // parameters", not "filters.min_params"; a message starting with the API's name has it replaced ("min prompts
  // measured must be ...", not "min_evidence must be ..." under a box labelled "Min prompts measured"), any other is
  // headed by it ("compare exactly these models: unknown model ...", not "models[0]: ..."; "measured on benchmark:
  // unknown benchmark 'zzz'", which the benchmark picked as the query is not). Before, the API's names, and for that
  // filter "unknown benchmark 'zzz'" alone, read as the picker's
  const base = leaf.replace(/\[\d+\]$/, "");
  const words = e.field.startsWith("filters.") ? FILTER_LABELS[base] : FORM_LABELS[base];
  const rest = msg.startsWith(`${e.field}: `) ? msg.slice(e.field.length + 2) : msg;
  if (words) return rest.startsWith(`${leaf} `) ? words + rest.slice(leaf.length) : `${words}: ${rest}`;
  if (rest !== msg) return names(rest, leaf) ? rest : `${e.field}: ${rest}`;
  return names(msg, e.field) || names(msg, leaf) ? msg : `${e.field}: ${msg}`;
}

// an error's pointer to the HTTP API's listing (indexer.serve._http_hints: "(GET /v1/models lists them)", "GET
// /v1/models?benchmark=B lists the models measured on it, POST /v1/find with {...} ranks the models for it"), for an API
// client, said on the page by what the page offers: the picker that lists the benchmarks, a search whose results link
// to each model's page. Before, the page told its user to send GET /v1/models (found on a first-time user's walk
// through the page, /?model=nosuch). The suggestions ("did you mean ...") are kept.
const BENCHMARK_LISTS = { benchmark: '"…or a benchmark"', "filters.benchmark": '"Measured on benchmark"' };
function pageHints(msg, field) {
  const base = (field || "").replace(/\[\d+\]$/, "");
  return msg
    .replace(/GET \/v1\/models\?benchmark=\S+ lists the models measured on it, POST \/v1\/find with \{.*?\} ranks the models for it/,
             '"…or a benchmark" on the search page ranks the models for it, "Measured on benchmark" under "Filters and knobs" keeps those measured on it')
    .replace("(GET /v1/benchmarks lists them)", `(the ${BENCHMARK_LISTS[base] || '"…or a benchmark"'} list offers them)`)
    .replace("(GET /v1/models lists them)", base === "models"
      ? "(empty the box to rank every model: the results name them)"
      : "(a search ranks them: each result links to its model page)");
}

async function api(path, options) {
  let res;
  try {
    res = await fetch(path, options);
  } catch (err) {  // fetch rejects with a TypeError ("Failed to fetch") when no answer came: the server is not there
    if (!(err instanceof TypeError)) throw err;
    const gone = new Error("cannot reach the taskspace server (is it running?)");
    gone.raw = err.message;  // the browser's own words, kept in the message's title
    // asked again as a 503 without Retry-After is (retryLater): a server restarted meanwhile shows this view again by
    // itself; before, the error stayed, and "Find models" searched the form's query from its first page
    gone.unavailable = true;
    gone.unreachable = true;
    gone.retryAfter = null;
    throw gone;
  }
  // an answer that is not the API's JSON object (a proxy's or a login portal's HTML page, a gateway's 502 text) is
  // said so, with its status and type (before: "HTTP 502", or for a 200 a script error, "Cannot read properties of
  // undefined (reading 'map')")
  const body = await res.json().catch(() => null);
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    const type = (res.headers.get("content-type") || "no content type").split(";")[0];
    throw new Error(`the answer to ${path} is not the taskspace API's JSON (HTTP ${res.status}${res.statusText ? " " + res.statusText : ""}, ` +
                    `${type}): is something else, a proxy, answering for the server?`);
  }
  if (!res.ok) {
    const err = new Error(pageHints(errorText(body.error || {}, res.status), (body.error || {}).field));
    err.field = (body.error || {}).field || null;  // the field it names, marked in the form (markInvalid)
    err.code = (body.error || {}).code || null;
    err.status = res.status;
    // a 503's Retry-After: the whole seconds the server expects it to last (a pass publishing the benchmark or index
    // asked for, an encoder's next load); absent where it does not know (docs/SERVING.md "Errors")
    if (res.status === 503) {
      const after = Number(res.headers.get("retry-after"));
      err.unavailable = true;
      err.retryAfter = Number.isInteger(after) && after > 0 ? after : null;
    }
    throw err;
  }
  return body;
}

// a view that got a 503, or no answer at all (the server not reachable), asks again by itself, at most RETRIES times
// in a row and only while it is shown, and says when: after the Retry-After seconds where the server said how long it
// lasts; where it did not (a first pass, a pass already longer than the ones before, a store down, no server), after
// 5 s, doubling each time up to a minute. Before: the error
// alone, "ask again when it has published", and the page never did nor said when (seen on `serve --worker-every 2s`:
// a benchmark of a source just added stood at the error for the whole pass)
const RETRIES = 10;
function retryWait(err, attempt) {  // the seconds before asking again (above)
  return err.retryAfter !== null ? err.retryAfter : Math.min(60, 5 * 2 ** attempt);
}
function retryLater(err, mine, attempt, again) {
  if (!err.unavailable) return "";
  if (attempt >= RETRIES) return ` (asked ${attempt + 1} times: try again to ask once more)`;
  const wait = retryWait(err, attempt);
  setTimeout(() => { if (mine === view) again(attempt + 1); }, wait * 1000);
  return err.retryAfter !== null ? ` (the server expects this to last ${wait} s: asking again then)`
    : err.unreachable ? ` (asking again in ${wait} s)` : ` (the server does not say for how long: asking again in ${wait} s)`;
}

// a view waiting for its answer (node still saying `words`, "searching…" or "loading…") says every WAITED seconds how
// long it has waited and that it still waits, in that live region; the answer, or another view, ends it (the returned
// function stops it). Before, "searching…" alone stood for as long as the server took, a hung server's forever, the
// page not saying whether it still waited (a model page of the 32,823-model home takes 18 s)
const WAITED = 15;
function sayWaiting(node, words, mine) {
  let waited = 0;
  const timer = setInterval(() => {
    if (mine !== view || !node.textContent.startsWith(words)) { clearInterval(timer); return; }
    waited += WAITED;
    node.textContent = `${words} (no answer yet after ${waited} s; still waiting for the server)`;
  }, WAITED * 1000);
  return () => clearInterval(timer);
}

// -- the form <-> the URL
// the search the form says, as URL parameters without the defaults; or, given a URL's parameters (`from`), the search
// they say written the same way (the form paramsToForm would fill from them), so the two compare (busy)
function formToParams(from = null) {
  const value = (f, id) => (from ? from.get(f) || "" : $(id).value);
  const p = new URLSearchParams();
  const task = value("q", "task").trim();
  if (task) p.set("q", task);
  for (const f of FIELDS) {
    const v = value(f, INPUT[f] || f).trim();
    const dflt = { k: "10", prefer_smaller: "0", rank: "probability" }[f];
    if (v && v !== dflt) p.set(f, v);
  }
  for (const f of FLAGS) if (from ? flag(from.get(f)) === true : $(f).checked) p.set(f, "1");
  return p;
}

function paramsToForm(p) {
  $("task").value = p.get("q") || "";
  for (const f of FIELDS) {
    const input = $(INPUT[f] || f);
    const dflt = { k: "10", prefer_smaller: "0", rank: "probability" }[f] || "";
    const v = p.get(f) || dflt;
    if (input.tagName === "SELECT" && v && ![...input.options].some((o) => o.value === v)) input.append(el("option", { value: v, text: v }));
    input.value = v;
  }
  for (const f of FLAGS) $(f).checked = flag(p.get(f)) === true;
  const hasFilters = ["license", "min_params", "max_params", "pipeline_tag", "min_evidence", "measured_on", "models", "prefer_smaller", "rank",
                      ...FLAGS].some((f) => p.has(f)) || (p.get("k") && p.get("k") !== "10");
  // shown as this URL's search shows it: Back to a search without filters closes it (before: it stayed open)
  $("options").open = Boolean(hasFilters);
}

// a numeric URL parameter as a number; one that is not a number is an error naming it (before, parseInt's NaN went
// out as JSON null, "not None", or the filter was dropped); a non-integer is sent as given, the server names it
function number(p, f) {
  const v = p.get(f).trim();
  const n = Number(v);
  if (v === "" || !Number.isFinite(n)) throw Object.assign(new Error(`${f}: not a number (${JSON.stringify(p.get(f))})`), { field: f });
  return n;
}
const given = (p, f) => p.has(f) && p.get(f).trim() !== "";

// the task box's prompts: several example prompts are separated by a line of three dashes (---, spaces around them
// allowed); a text without such a line is one prompt, its blank lines kept (a HumanEval prompt has some). Before, every
// blank line split the text, so one pasted code prompt became several example prompts and the query their mean. The
// same rule as a text prompts file of `taskspace search -f` (indexer/cli_find.py split_prompts) that has a --- line.
const SEPARATOR = /^[^\S\n]*---[^\S\n]*$/m;
const splitPrompts = (text) => text.replace(/\r\n?/g, "\n").split(SEPARATOR).map((s) => s.trim()).filter(Boolean);

// a task and a benchmark are two queries: the page refuses both rather than rank the benchmark and drop the task
// without a word (before: a benchmark left picked from an earlier search silently replaced the task typed after it)
const BOTH = "a task and a benchmark were both given: empty the task box, or set the benchmark to (none)";

function findBody(p) {
  const body = {};
  // a task of only --- lines holds no prompt: no task (before: the API's "prompts is an empty list ... or a query
  // vector instead", and beside a benchmark "a task and a benchmark were both given")
  const prompts = p.get("q") ? splitPrompts(p.get("q")) : [];
  if (p.get("benchmark") && prompts.length) throw new Error(BOTH);
  if (p.get("benchmark")) body.benchmark = p.get("benchmark");
  else if (prompts.length) body.prompts = prompts;
  body.k = given(p, "k") ? number(p, "k") : 10;
  // a page of the ranking past the first (the pager's links, a shared or reloaded URL): ranks offset + 1 to offset + k,
  // as POST /v1/find pages (before, ?offset= was ignored and the page showed only the best k)
  // one that is no rank (-5, 3.5, abc, made by hand) is the URL's, no field holds it: said with what to do (before: the
  // API's "offset must be a non-negative integer", or "offset: not a number", naming a field the page does not have)
  if (given(p, "offset")) {
    const v = p.get("offset").trim();
    if (!/^\d+$/.test(v)) throw new Error(`the URL's offset ${JSON.stringify(p.get("offset"))} is not a rank to start from (a whole number, 0 or more): "Find models" searches again from the first page`);
    body.offset = Number(v);
  }
  if (given(p, "prefer_smaller")) body.prefer_smaller = number(p, "prefer_smaller");
  if (p.get("rank")) body.rank = p.get("rank");
  if (p.get("space")) body.space = p.get("space");
  // the compare box of commas alone names no model: every model is ranked, as with the box empty (before: the API's
  // "models must be a non-empty list of model names"), as the licenses box below
  const models = (p.get("models") || "").split(",").map((s) => s.trim()).filter(Boolean);
  if (models.length) body.models = models;
  const filters = {};
  // a box of commas alone names no license: no filter, as an empty box (the API refuses an empty list of licenses)
  const licenses = (p.get("license") || "").split(",").map((s) => s.trim()).filter(Boolean);
  if (licenses.length) filters.licenses = licenses;
  for (const f of ["min_params", "max_params", "pipeline_tag"]) if (p.get(f)) filters[f] = p.get(f);
  if (given(p, "min_evidence")) filters.min_evidence = number(p, "min_evidence");
  if (p.get("measured_on")) filters.benchmark = p.get("measured_on");
  for (const f of FLAGS) {
    const on = flag(p.get(f));
    if (on) filters[f] = true;
    else if (on === null) filters[f] = p.get(f);  // not a flag word: the server's error names it
  }
  if (Object.keys(filters).length) body.filters = filters;
  return body;
}

// -- results
// the interval is the 90% one, said so as the CLI's column and the README say (before: "(67%–77%)", no level); a
// screen reader hears the bar's label, which says the probability and the interval (or why there is none), once: the
// figures written beside it for the eye are hidden from it (before: said twice, the reason for no interval not at all
// in the label)
function probabilityBar(r, signal) {
  const [lo, hi] = r.interval || [null, null];
  const ci = lo !== null && hi !== null ? `90% interval ${pct(Math.min(lo, hi))}–${pct(Math.max(lo, hi))}`
    : signal ? "no interval" : "no interval: no calibrated signal";
  const label = `probability of success ${pct(r.probability)}, ${ci.replace("–", " to ")}`;
  const bar = el("div", { class: "bar", role: "img", "aria-label": label });
  if (r.probability !== null) bar.append(el("span", { class: "fill", style: `width:${(r.probability * 100).toFixed(1)}%` }));
  if (lo !== null && hi !== null) bar.append(el("span", { class: "band", style: `left:${(Math.min(lo, hi) * 100).toFixed(1)}%;width:${(Math.abs(hi - lo) * 100).toFixed(1)}%` }));
  if (r.probability !== null) bar.append(el("span", { class: "point", style: `left:${(r.probability * 100).toFixed(1)}%` }));
  return el("div", { class: "prob" }, bar, el("span", { class: "pct", "aria-hidden": "true", text: pct(r.probability) }),
            el("span", { class: "ci", "aria-hidden": "true", text: `(${ci})` }));
}

function outcomeText(o) {
  if (o === null || o === undefined) return el("span", { class: "outcome", text: "?" });
  if (o >= 1) return el("span", { class: "outcome ok", text: "✓ correct" });
  if (o <= 0) return el("span", { class: "outcome bad", text: "✗ wrong" });
  return el("span", { class: "outcome", text: `${Math.round(o * 100)}% correct` });
}

function evidencePanel(r) {
  const ev = r.evidence || { prompts: [], benchmarks: [] };
  const panel = el("details", { class: "evidence" },
                   el("summary", {}, "Evidence", el("span", { class: "visually-hidden", text: ` for ${r.model}` })));
  // the prompts this model was measured on, nearest first (before: "Nearest indexed prompts", read as the query's
  // nearest overall, which this model may not have been measured on)
  panel.append(el("h4", { text: "Nearest indexed prompts this model was measured on, with its outcome" }));
  const ul = el("ul");
  for (const p of ev.prompts) {
    // cut by code point, not UTF-16 unit: a cut through an emoji or a CJK extension character left half a surrogate
    // pair, shown as "�"
    const chars = Array.from(p.text);
    // class "prompt": shown with its line breaks and indentation (a code prompt read as one line before)
    // the outcome and where the prompt is from on a line of their own, the prompt under them: its first line starts
    // where the others do (before: after "✓ correct", so a code prompt's body stood left of its "def" line)
    ul.append(el("li", {}, outcomeText(p.outcome),
                 el("span", { class: "meta", text: ` (${p.benchmark}; similarity ${p.similarity === null ? "n/a" : p.similarity.toFixed(2)})` }),
                 el("span", { class: "prompt", text: chars.length > 300 ? chars.slice(0, 300).join("") + "…" : p.text })));
  }
  const unknown = r.coverage && r.coverage.measured_near === null;
  if (!ev.prompts.length) ul.append(el("li", { text: unknown
    ? "unknown: this index does not hold this model's per-prompt results (an index pulled from a published dataset holds none)"
    : r.coverage && r.coverage.measured_near
    ? `measured on ${counted(r.coverage.near, "indexed prompt")} near this query; its outcomes there are not in this index (pulled from a published dataset)`
    : "no indexed prompt near this query was measured on this model" }));
  panel.append(ul, el("h4", { text: "Observed accuracy on the nearest benchmarks" }));
  const ub = el("ul");
  for (const b of ev.benchmarks) ub.append(el("li", { text: b.n === null || b.n === undefined
    ? `${b.name}: ${pct(b.accuracy)} (as published; the number of prompts is not in this index)`
    : `${b.name}: ${pct(b.accuracy)} of ${counted(b.n, "prompt")}` }));
  if (!ev.benchmarks.length) ub.append(el("li", { text: unknown ? "unknown (no per-prompt results in this index)" : "none" }));
  panel.append(ub);
  return panel;
}

// a benchmark query's observed accuracy of the model on that benchmark (the method's probability is shrunk toward the
// model's general level and may differ from it; before, only the probability was shown), or null when not measured
function observedOn(r, benchmark) {
  const b = ((r.evidence || {}).benchmarks || []).find((x) => x.name === benchmark && x.accuracy !== null);
  if (!b) return null;
  return `observed on ${benchmark}: ${pct(b.accuracy)}` + (b.n === null || b.n === undefined ? " (as published)" : ` of ${counted(b.n, "prompt")}`);
}

// a result's coverage in words: for a prompt, of the indexed prompts near it; for a benchmark query, whose neighbourhood
// is the benchmark's own prompts nearest its mean (indexer.find._near_hits), of those (before, "measured on 50 nearby
// prompt(s) (mbpp)" beside "observed on mbpp: 74% of 378 prompts": true, but read as two counts of the same thing)
function measuredNear(cov, q) {
  const on = cov.benchmarks && cov.benchmarks.length ? ` (${cov.benchmarks.join(", ")})` : "";
  if (q && q.kind === "benchmark") {
    const own = cov.benchmarks && cov.benchmarks.length === 1 && cov.benchmarks[0] === q.benchmark;
    return `measured on ${count(cov.near || 0)} of the ${q.benchmark} prompts nearest the benchmark's mean` + (own || !on ? "" : on);
  }
  return `measured on ${counted(cov.near || 0, "nearby prompt")}` + on;
}

function resultItem(r, rank, signal, q, space) {
  const name = r.hub_id
    ? el("a", { class: "name", href: `https://huggingface.co/${r.hub_id}`, rel: "noopener", title: "its page on the Hugging Face Hub" }, r.model)
    : el("span", { class: "name", text: r.model });
  // each result is headed by its model (h3 under the Results h2; the evidence panel's h4 under it), and its links
  // and panel are named for it: before, a screen reader's list of links read "model page" ten times, its list of
  // headings only "Nearest indexed prompts ..." (h4 under h2), neither saying which model
  const head = el("div", { class: "head" }, el("span", { class: "rank", text: `${count(rank)}.` }), el("h3", { class: "title" }, name));
  if (r.api_only) head.append(el("span", { class: "badge", text: "API only" }));
  const near = r.coverage ? r.coverage.measured_near : null;
  if (near === null) head.append(el("span", { class: "badge unknown", title: NEAR_UNKNOWN, text: "measured near this query: unknown" }));
  // a benchmark query's neighbourhood is the benchmark itself: "not measured on B", as the CLI's "measured on it: no"
  // (before: "not measured near this query", as for a prompt)
  else if (!near) head.append(el("span", { class: "badge far",
    text: q && q.kind === "benchmark" ? `not measured on ${q.benchmark}` : "not measured near this query" }));
  // its results changed since its vector was solved (an index pass not yet published, or `taskspace ingest` without
  // `taskspace index`): said on the result, as the CLI's "(results changed)" and --json's results_changed
  if (r.results_changed) {
    head.append(el("span", { class: "badge unknown", title: RESULTS_CHANGED, text: "results changed since indexed" }));
  }
  head.append(el("a", { class: "detail", href: modelPage(r.model, space), "data-model": r.model, "data-space": space || null,
                        "aria-label": `model page of ${r.model}` },
                 "model page"));
  const md = r.metadata || {};
  const cov = r.coverage || {};
  const meta = el("p", { class: "meta", text: [`parameters ${formatParams(md.params)}${md.params_from && md.params != null ? ` (of ${md.params_from})` : ""}`, `license ${md.license || "unknown"}`,
    md.pipeline_tag ? md.pipeline_tag : null, md.gated ? "gated" : null, md.base_model ? `based on ${md.base_model}` : null,
    q && q.kind === "benchmark" ? observedOn(r, q.benchmark) : null,
    // a result not measured near the query says so once, by its badge (before: the badge and "measured on 0 nearby
    // prompt(s)" here too)
    cov.measured_near === null || cov.measured_near === undefined ? "measured on nearby prompts: unknown"
      : cov.measured_near ? measuredNear(cov, q) : null]
    .filter(Boolean).join(" · ") });
  return el("li", { class: "result" }, head, probabilityBar(r, signal), meta, evidencePanel(r));
}

// a filter of the answer's counts -> the form's words for it (before: "benchmark excluded 88" for "Measured on
// benchmark", read as the benchmark picked as the task having excluded them); the CLI names its options the same way
const FILTER_LABELS = { licenses: "licenses", min_params: "min parameters", max_params: "max parameters",
  pipeline_tag: "pipeline tag", exclude_gated: "exclude gated", open_only: "open weights only",
  min_evidence: "min prompts measured", benchmark: "measured on benchmark", prefer_smaller: "prefer smaller" };
// a field of the body that is no filter -> the form's words for it, where they differ from the API's name (k and rank
// are named so in their labels)
const FORM_LABELS = { prefer_smaller: "prefer smaller", models: "compare exactly these models" };

function renderResults(data, askedSpace) {
  const list = $("ranked");
  const signal = !data.space || data.space.signal !== false;
  // a model page opened from a result predicts in the space this search asked for (none: the default)
  const asked = data.space && askedSpace ? data.space.name : null;
  const q = data.query || {};
  const offset = q.offset || 0;
  // each numbered by its rank in the whole ranking (before, 1 to k on every page)
  list.replaceChildren(...data.results.map((r, i) => resultItem(r, offset + i + 1, signal, data.query, asked)));
  // the ordered list says the same number to a screen reader as the rank shown beside each result
  if (offset) list.setAttribute("start", String(offset + 1)); else list.removeAttribute("start");
  const what = q.kind === "benchmark" ? `benchmark ${q.benchmark}` : counted(q.prompts, "prompt");
  $("status").className = "";
  const filtered = Object.keys(q.filters || {}).length > 0;
  // compare mode without a filter: the one reason a listed model is left out is that it has no vector, said in the
  // notes with what solves it, as `taskspace search -m` (before: "loosen the filters", "no vector, or filtered out",
  // naming filters the user never gave)
  const compared = (q.models || []).length > 0;
  // which space answered, where the index holds several (the chooser is shown)
  const where = data.space && (askedSpace || !$("space-field").hidden) ? ` in space ${data.space.name}` : "";
  const paged = offset > 0 || (q.next_offset !== null && q.next_offset !== undefined);
  $("status").textContent = data.results.length ? (paged
      ? `models ${count(offset + 1)}–${count(offset + data.results.length)} of ${count(q.total)} ranked for ${what}${where}`
      : `${counted(data.results.length, "model")} ranked for ${what}${where}`)
    // a page past the last model (a link kept after the index changed, a hand-made offset): how many there are
    : offset && q.total ? `no model past the best ${count(offset)}: the ranking holds ${counted(q.total, "model")} for ${what}${where}`
    : filtered ? `no model matches (${what}): loosen the filters`
    : compared ? `none of the listed models is ranked (${what})`
    : `no model found (${what}): the server's index has drifted from its database (taskspace check, taskspace reindex)`;
  const notes = [];
  const label = (f) => FILTER_LABELS[f] || f;
  // the models a filter excluded for want of its metadata, said in its note as the CLI's line (before: a second note
  // of the same models, "N without the metadata licenses needs")
  const excluded = data.excluded || {}, missing = data.missing_metadata || {};
  for (const [f, n] of Object.entries(excluded)) {
    if (n) notes.push(`${label(f)} excluded ${count(n)}` + (missing[f] ? ` (${count(missing[f])} without the metadata it needs)` : ""));
  }
  // what the order is when it is not the probability's, and what prefer smaller did to a model of no known size (it
  // is ranked, charged as 100B: indexer.find.UNKNOWN_PARAMS), as the CLI says under its table; before, nothing of the
  // first, and "N without the metadata prefer smaller needs", as if they had been filtered out
  // (rank by lower bound where no model has an interval ranks by the score, so by probability: said so, as the CLI)
  const noBound = data.results.every((r) => r.interval === null && r.rank_score === r.score);
  if (q.rank === "lcb" && noBound) notes.push("ranked by probability (no model here has an interval, so none a lower bound to rank by)");
  else if (q.rank === "lcb" || q.prefer_smaller > 0) {
    // (the size is charged on the score the probability rises with, not on the probability: the CLI's caption)
    notes.push(`ranked by ${q.rank === "lcb" ? "the lower end of the interval" : "score"}` +
               (q.prefer_smaller > 0 ? ` − ${q.prefer_smaller} × log10(parameters)` : "") +
               (q.rank === "lcb" ? "" : " (the probability rises with the score)"));
  }
  for (const [f, n] of Object.entries(missing)) {
    if (n && !excluded[f]) notes.push(f === "prefer_smaller" ? `${count(n)} without a parameter count charged as 100B by prefer smaller`
                                             : `${count(n)} without the metadata ${label(f)} needs`);
  }
  if (q.options_filled) notes.push("answer options taken from the nearest indexed questions");
  if (q.truncated && q.truncated.length) {
    const which = q.prompts === 1 ? "the prompt is" : q.truncated.length === 1
      ? `prompt ${count(q.truncated[0] + 1)} of ${count(q.prompts)} is` : `prompts ${q.truncated.map((i) => count(i + 1)).join(", ")} of ${count(q.prompts)} are`;
    notes.push(`${which} longer than the encoder reads (${q.max_tokens} word pieces): only its beginning was embedded`);
  }
  if (nearCount(q)) notes.push(nearCount(q));
  if (q.unranked && q.unranked.length) {
    notes.push(`not ranked (${filtered ? "removed by a filter, or without a vector in this space"
      : "no vector in this space: `taskspace index` solves the models whose results were ingested since its last pass"}): ` +
      q.unranked.join(", "));
  }
  $("notes").textContent = notes.join(" · ");
  const caveats = [];
  if (data.results.length && data.space && data.space.calibrated === false) {
    caveats.push(el("p", { text: NOT_CALIBRATED(data.space.name) }));
  }
  if (data.results.length && !signal) caveats.push(el("p", { text: NO_SIGNAL }));
  if (data.results.some((r) => r.coverage && r.coverage.measured_near === null)) caveats.push(el("p", { text: NEAR_UNKNOWN }));
  const mn = q.measured_near;
  if (mn && mn.results < mn.of && !mn.any_model) caveats.push(el("p", { text: FAR }));
  $("caveats").replaceChildren(...caveats);
  $("caveats").hidden = !caveats.length;
  showPager(q);
}

// -- the pages of a ranking longer than k: links to the previous and next pages (their URLs, the search's own with
// the offset set, so a page can be opened in a new tab, shared and reloaded), shown when there is more than one
const pageUrl = (offset) => {
  const p = new URLSearchParams(location.search);
  if (offset > 0) p.set("offset", String(offset)); else p.delete("offset");
  return "/?" + p.toString();
};
function showPager(q) {
  const offset = q.offset || 0;
  const k = q.k || 10;
  const total = q.total || 0;
  const next = q.next_offset === null || q.next_offset === undefined ? null : q.next_offset;
  // from past the end, "previous" goes to the last page that holds a model
  const prev = offset <= 0 ? null : offset >= total ? Math.max(0, Math.floor((total - 1) / k) * k) : Math.max(0, offset - k);
  $("pager").hidden = next === null && prev === null;
  $("prev").hidden = prev === null;
  $("next").hidden = next === null;
  if (prev !== null) { $("prev").href = pageUrl(prev); $("prev").textContent = offset >= total ? "← last page" : `← previous ${count(k)}`; }
  if (next !== null) { $("next").href = pageUrl(next); $("next").textContent = `next ${count(Math.min(k, total - next))} →`; }
  $("page-of").textContent = total && offset < total ? `ranks ${count(offset + 1)}–${count(Math.min(offset + k, total))} of ${count(total)}` : "";
}
function hidePager() { $("pager").hidden = true; }

// the rows, notes and caveats of the answer shown: emptied on an error, and when a search starts (before: while a
// slow search ran, "searching…" stood above the previous query's ranking, under the new query's URL and title)
function clearResults() {
  $("ranked").replaceChildren();
  hidePager();
  $("notes").textContent = "";
  $("caveats").replaceChildren();
  $("caveats").hidden = true;
}

// the form's field an error names (the API's field, "filters.min_params", "prompts[0]"; a URL parameter's name) is
// marked invalid (aria-invalid: a screen reader says so on reaching it; the error colour), its panel opened if it is
// in "Filters and knobs"; a search starting clears the mark. Before, only the status said it, the field unmarked and,
// with the panel closed, hidden
const FIELD_INPUTS = { "filters.benchmark": "measured_on", prompts: "task", q: "task", license: "licenses" };
function markInvalid(field) {
  for (const node of document.querySelectorAll("#search [aria-invalid]")) node.removeAttribute("aria-invalid");
  if (!field) return;
  const name = field.replace(/\[\d+\]$/, "");
  const input = document.getElementById(FIELD_INPUTS[name] || FIELD_INPUTS[name.replace(/^filters\./, "")] || name.replace(/^filters\./, ""));
  if (!input || !$("search").contains(input) || !/^(INPUT|SELECT|TEXTAREA)$/.test(input.tagName)) return;
  input.setAttribute("aria-invalid", "true");
  if ($("options").contains(input)) $("options").open = true;
}

function showError(err, after = "") {
  markInvalid(err.field);
  $("status").className = "error";
  $("status").textContent = `error: ${err.message}${after}`;
  if (err.raw) $("status").title = err.raw; else $("status").removeAttribute("title");
  clearResults();
}

const EMPTY = "type a task or pick a benchmark";

// runSearch(p, true) for a search the user asked for: with neither a task nor a benchmark it says what to give (in
// #status, a polite live region, so a screen reader announces it) rather than nothing; a page opened without a query
// stays quiet
// the tab's and the history entry's title names the view (before: one title for every search and model page)
const TITLE = document.title;
// a page of the ranking past the first says where it starts (`suffix`), so the pages' history entries differ
function titleFor(what, suffix = "") {
  const chars = Array.from(what || "");  // by code point, as the evidence texts: never half an emoji ("�")
  document.title = what ? `${chars.length > 60 ? chars.slice(0, 60).join("") + "…" : what}${suffix} – taskspace` : TITLE;
}

// each view (a search, a model page) takes a number; an answer that comes after another view was opened is dropped
// (before: a slow search's answer, or a model's, came in after the next search or Back and replaced what was shown,
// the results of a query the URL and the form no longer said)
let view = 0;

// the search button while a search runs: marked busy (aria-disabled), never disabled, which would take the keyboard
// focus from a user who pressed it (before: focus fell to the page's body, and after an error the next Tab went to
// the footer); a press meanwhile is ignored, as a disabled button's was, while the form still says that search. Once
// the form says another (the task or a filter changed), the button is marked ready and a press searches that: the
// running search's answer is dropped when it comes (view). Before, it stayed busy until the answer came, so a page
// whose server hung could search nothing more until reloaded.
// (the search running, not the form as it stood when it started: a search asked again by itself after a 503 may run
// under a form changed meanwhile, whose press then searches)
let running = null;  // the search whose answer is awaited, written as formToParams writes the form's, or null
const unchanged = () => running !== null && formToParams().toString() === running;
const markBusy = () => (unchanged() ? $("go").setAttribute("aria-disabled", "true") : $("go").removeAttribute("aria-disabled"));
const busy = (p) => { running = p ? formToParams(p).toString() : null; markBusy(); };

async function runSearch(p, asked = false, attempt = 0) {
  const mine = ++view;
  busy(null);
  $("model").hidden = true;
  $("results").hidden = false;
  document.querySelector("a.skip").textContent = "Skip to results";
  // the box's prompts, not its text: one of --- lines alone holds none, so no title (before: "--- – taskspace")
  const task = splitPrompts(p.get("q") || "").join(" --- ").split(/\s+/).join(" ");
  const from = Number(p.get("offset"));  // (not a number: no suffix; findBody says what is wrong with it)
  titleFor(p.get("benchmark") ? `benchmark ${p.get("benchmark")}` : task,
           Number.isInteger(from) && from > 0 ? ` (from rank ${count(from + 1)})` : "");
  markInvalid(null);
  let body;
  try { body = findBody(p); } catch (err) { showError(err); return; }
  clearResults();
  if (!body.prompts && !body.benchmark) {
    $("status").className = "";
    $("status").removeAttribute("title");
    $("status").textContent = "";
    // set after a moment: a live region announces a change, so the same words again are said again. Said for a search
    // submitted, and for a URL that carries one's settings (a shared `?models=a,b`: before, nothing at all); a page
    // opened bare stays quiet
    if (asked || [...p.keys()].length) setTimeout(() => { if (!$("status").textContent) $("status").textContent = EMPTY; }, 50);
    return;
  }
  $("status").className = "";
  $("status").removeAttribute("title");
  $("status").textContent = "searching…";
  busy(p);
  const waiting = sayWaiting($("status"), "searching…", mine);
  try {
    const data = await api("/v1/find", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (mine === view) { renderResults(data, body.space); loadBenchmarks(); if (!spacesListed) loadSpaces(); }
  } catch (err) {
    // a task over the bytes the server reads in one request (max_body_bytes; its prompts each within their limit): said
    // of the task, which is marked, with what to do (before: the server's "the request body is N bytes ...", of a
    // request the user never sees, no field marked)
    if (err.code === "body_too_large" && body.prompts) {
      const n = body.prompts.length;
      err.message = `the task is too long to send: ${n === 1 ? "its prompt is" : `its ${count(n)} prompts are`} more than ` +
        `the server reads in one search (${err.message}): shorten its prompts or give fewer`;
      err.field = "prompts";
    }
    if (mine === view) showError(err, retryLater(err, mine, attempt, (n) => runSearch(p, asked, n)));
  } finally {
    waiting();
    if (mine === view) busy(null);
  }
}

// -- the model page
// a benchmark's name with a line-break opportunity (<wbr>) after each "/" and "_": a narrow table cell wraps it there,
// "mmlu_pro/" above "philosophy", and inside a word only where that word alone is wider than the cell (app.css); before,
// the cell broke anywhere, "mmlu_pro/phil" above "osophy" at 360 px
const breakable = (name) => name.split(/(?<=[/_])/).flatMap((part, i) => (i ? [el("wbr"), part] : [part]));

// a strengths row's difference: that of the two percentages shown beside it, so the row adds up; before, the exact
// difference rounded on its own ("64% · 45% · +20 pts", xwincoder-34b on mbpp: 176 of evalarena_code's 735 rows)
function difference(s) {
  if (s.probability === null || s.probability === undefined || s.mean === null || s.mean === undefined) return "n/a";
  const d = Math.round(s.probability * 100) - Math.round(s.mean * 100);
  return `${d >= 0 ? "+" : ""}${d} pts`;
}
// the tables and their headings are shown once the model's answer came: before, while it loaded (20 s and more on
// a home of 32,823 models) and under an error ("unknown model"), their headings stood over empty tables
function clearModelTables() {
  $("model-tables").hidden = true;
  for (const id of ["strengths", "observed"]) $(id).tBodies[0].replaceChildren();
  $("observed-note").textContent = "";
  $("observed-note").hidden = true;
  $("changed-note").textContent = "";
  $("changed-note").hidden = true;
}

// a URL parameter as written, its '+' kept (URLSearchParams reads it as a space), when that differs: `?model=a+b` typed
// by hand means the model a+b where no model "a b" exists
function plusForm(name) {
  const raw = location.search.slice(1).split("&").find((kv) => kv.split("=")[0] === name);
  if (!raw || !raw.includes("+")) return null;
  try { return decodeURIComponent(raw.slice(name.length + 1)); } catch (err) { return null; }
}

async function showModel(id, space, attempt = 0, alt = null) {
  const mine = ++view;
  $("results").hidden = true;
  $("search").hidden = true;
  const sec = $("model");
  sec.hidden = false;
  document.querySelector("a.skip").textContent = "Skip to the model page";
  $("model-title").textContent = id;
  $("model-title").dataset.model = id;
  titleFor(`model ${id}`);
  $("model-meta").textContent = "loading…";  // a live region (index.html), as the search's status: said while it loads
  $("model-meta").removeAttribute("title");
  $("model-meta").classList.remove("error");
  clearModelTables();  // the previous model's rows never stand under this one's title
  $("model-tables").setAttribute("aria-busy", "true");  // being filled: busy until the answer (or its error) came
  const from = document.activeElement;  // the page's body when the link opening this page was hidden with the results
  const waiting = sayWaiting($("model-meta"), "loading…", mine);
  try {
    // "." or ".." alone is a dot segment however it is written: no URL path can carry it
    if (DOTS(id)) throw new Error(`the model id ${JSON.stringify(id)} cannot be written in a URL path (a browser resolves it); \`taskspace model ${id}\` looks it up`);
    const m = await api(modelPath(id, space)).finally(waiting);
    if (mine !== view) return;
    const title = $("model-title");
    title.replaceChildren(m.hub_id ? el("a", { href: `https://huggingface.co/${m.hub_id}`, rel: "noopener" }, m.model) : m.model);
    const md = m.metadata || {};
    $("model-meta").textContent = [`parameters ${formatParams(md.params)}${md.params_from && md.params != null ? ` (of ${md.params_from})` : ""}`, `license ${md.license || "unknown"}`,
      md.pipeline_tag, md.gated ? "gated" : null, md.base_model ? `based on ${md.base_model}` : null, m.api_only ? "API only" : (md.open_weights ? "open weights" : null),
      `${counted(m.n_prompts || 0, "prompt")} measured`, space && m.space ? `predicted in space ${m.space}` : null, m.aliases && m.aliases.length ? `also known as ${m.aliases.join(", ")}` : null]
      .filter(Boolean).join(" · ");
    $("strengths").tBodies[0].replaceChildren(...m.strengths.map((s) => el("tr", {},
      el("td", {}, ...breakable(s.benchmark), s.measured ? "" : " (not measured)"), el("td", { text: pct(s.probability) }),
      el("td", { text: pct(s.mean) }), el("td", { text: difference(s) }),
      el("td", { text: `${count(s.rank)} of ${count(s.of)}` }))));
    $("observed").tBodies[0].replaceChildren(...m.benchmarks.map((b) => el("tr", {},
      el("td", {}, ...breakable(b.name)), el("td", { text: pct(b.accuracy) }),
      el("td", { text: b.n === null || b.n === undefined ? "unknown" : count(b.n) }))));
    // a pulled index: the accuracy each benchmark was published with, the number of prompts unknown here
    $("observed-note").textContent = m.benchmarks_note || "";
    $("observed-note").hidden = !m.benchmarks_note;
    // its results changed since its vector was solved (an index pass not yet published, or `taskspace ingest`
    // without `taskspace index`): the observed accuracies are the new results, the strengths from before them
    $("changed-note").textContent = m.results_changed ? MODEL_RESULTS_CHANGED : "";
    $("changed-note").hidden = !m.results_changed;
    $("model-tables").hidden = false;
  } catch (err) {
    if (mine !== view) return;
    if (alt && err.status === 404 && err.field === "model") {  // no model "a b": the '+' form, its URL written encoded
      history.replaceState(history.state, "", modelPage(alt, space));
      return showModel(alt, space);
    }
    clearModelTables();
    $("model-meta").classList.add("error");  // in the error colour, as the search's (before: grey, as its metadata)
    $("model-meta").textContent = `error: ${err.message}` + retryLater(err, mine, attempt, (n) => showModel(id, space, n));
    if (err.raw) $("model-meta").title = err.raw;
  }
  $("model-tables").removeAttribute("aria-busy");
  // the section takes the focus once loaded, unless the user moved it meanwhile (Tab to "back to search" while the
  // model loads): before, the answer took it from there, and Enter then pressed on the section did nothing
  if (document.activeElement === from || document.activeElement === document.body) sec.focus();
}

function route() {
  const p = new URLSearchParams(location.search);
  if (p.get("model")) {
    $("back").href = (history.state && history.state.back) || "/";
    return showModel(p.get("model"), p.get("space"), 0, plusForm("model"));
  }
  $("search").hidden = false;
  paramsToForm(p);
  return runSearch(p);
}

// a view switched by Back/Forward or "back to search": the keyboard focus, lost with the model page it was in (its
// section hidden), goes to that model's "model page" link among the results, else to the view shown; before, it fell
// to the page's body and the next Tab went to the footer. A focus still in the page (a search left by Back) stays.
async function routeKeepingFocus() {
  const left = new URLSearchParams(location.search).get("model") ? null : $("model").hidden ? null : $("model-title").dataset.model;
  await route();
  const lost = !document.activeElement || document.activeElement === document.body;
  if (!lost) return;
  const link = left && [...document.querySelectorAll("#ranked a.detail")].find((a) => a.dataset.model === left);
  (link || ($("model").hidden ? $("results") : $("model"))).focus();
}

// asked again after each search answered, so a page left open follows the index: a benchmark an indexing pass has
// published since is offered, one whose source was dropped is no longer (unless chosen); before, the list the page
// loaded with stayed, and a benchmark of a source added to a running `serve --worker-every` was not in the picker
// until the page was reloaded
async function loadBenchmarks() {
  try {
    const { benchmarks } = await api("/v1/benchmarks");
    const listed = new Set(benchmarks.map((b) => b.name));
    for (const id of ["benchmark", "measured_on"]) {
      const sel = $(id);
      // in the list's order, each with its prompts: one the URL named (added by paramsToForm before the list came) is
      // labelled and moved to its place, still selected (before: first, bare "mbpp" above "cruxeval-input (800 prompts)")
      const have = new Map([...sel.options].map((o) => [o.value, o]));
      for (const b of benchmarks) {
        const text = `${b.name} (${counted(b.prompts, "prompt")})`;
        const o = have.get(b.name);
        if (o) { o.textContent = text; sel.append(o); } else sel.append(el("option", { value: b.name, text }));
      }
      for (const o of [...sel.options]) if (o.value && !listed.has(o.value) && o.value !== sel.value) o.remove();
    }
  } catch (err) { /* the picker stays empty; a search still says what is wrong */ }
}

// the space chooser, shown only when the index holds several spaces: each by its name, encoder, method and models, the
// default one first as "" (no space in the URL or the query); a space the URL named that is not listed stays chosen
// (the server's error names it). Before, the page searched the default space alone. A server that did not answer
// (down or restarting when the page loaded) is asked again as a view is (retryWait), and after a search it answered:
// before, the chooser never appeared until a reload.
let spacesListed = false;
async function loadSpaces(attempt = 0) {
  try {
    const { spaces } = await api("/v1/spaces");
    spacesListed = true;
    if (!spaces || spaces.length < 2) return;
    const sel = $("space");
    const have = new Map([...sel.options].map((o) => [o.value, o]));
    const listed = new Set([""]);
    for (const s of spaces) {
      const encoder = (s.encoder || "").split("@")[0].split("/").pop();
      const text = `${s.name}: ${encoder}, method ${s.method}, ${counted(s.models, "model")}` + (s.default ? " (the default)" : "");
      // a space the URL named, by its name or its id, is labelled as the list labels it
      const named = [s.name, String(s.id)].filter((v) => have.has(v));
      named.forEach((v) => { have.get(v).textContent = text; listed.add(v); });
      if (s.default) { have.get("").textContent = text; continue; }  // the first option, "": no space sent
      if (!named.length) { sel.append(el("option", { value: s.name, text })); listed.add(s.name); } else sel.append(...named.map((v) => have.get(v)));
    }
    // one the URL named that is no space of this index: last, said so (a search with it says what the spaces are)
    for (const o of [...sel.options]) if (!listed.has(o.value)) { o.textContent = `${o.value} (not a space of this index)`; sel.append(o); }
    $("space-field").hidden = false;
  } catch (err) {  // the chooser stays hidden meanwhile: a search takes the default space
    if (err.unavailable && attempt < RETRIES) setTimeout(() => { if (!spacesListed) loadSpaces(attempt + 1); }, retryWait(err, attempt) * 1000);
  }
}

$("search").addEventListener("submit", (ev) => {
  ev.preventDefault();
  if (ev.submitter === $("go") && unchanged()) return;
  const p = formToParams();
  // the same search again (a refresh) replaces its history entry: before, each one pushed another, so Back stayed put
  const url = "/?" + p.toString();
  if (location.pathname + location.search === url) history.replaceState(null, "", url); else history.pushState(null, "", url);
  runSearch(p, true).then(() => { if ($("ranked").children.length) $("results").focus(); });
});
// a page of the ranking, opened in place (a history entry: Back returns to the page before); the focus goes to the
// results, whose first row is the new page's first rank
for (const id of ["prev", "next"]) {
  $(id).addEventListener("click", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    history.pushState(null, "", $(id).getAttribute("href"));
    const p = new URLSearchParams(location.search);
    paramsToForm(p);
    runSearch(p).then(() => { $("results").focus(); $("results").scrollIntoView(); });
  });
}
for (const ev of ["input", "change"]) $("search").addEventListener(ev, markBusy);
$("task").addEventListener("keydown", (ev) => {  // Ctrl/Cmd+Enter searches from the text box
  if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); $("search").requestSubmit(); }
});
document.addEventListener("click", (ev) => {  // model pages open in place (the URL changes, Back returns)
  const a = ev.target.closest("a[data-model]");
  if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
  ev.preventDefault();
  // "back to search" returns to the search this model page was opened from (before: to an empty page, "/"), kept in
  // the page's history entry, which route reads: Back to it, or a reload, links there too (before: to the search of
  // the model page opened last, or "/")
  const back = "/" + location.search;
  history.pushState({ back }, "", a.getAttribute("href"));
  $("back").href = back;
  showModel(a.dataset.model, a.dataset.space);
});
$("back").addEventListener("click", (ev) => {  // the search, run again in place (a new history entry)
  if (ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
  ev.preventDefault();
  history.pushState(null, "", $("back").getAttribute("href"));
  routeKeepingFocus();
});
window.addEventListener("popstate", routeKeepingFocus);
// the skip link moves the focus to the view shown, the results or a model page, and navigates nowhere: before, its
// "#results" was a history entry whose popstate ran the search again (a second request, "searching…"; on a model
// page, the model loaded again while the focus stayed put)
document.querySelector("a.skip").addEventListener("click", (ev) => {
  ev.preventDefault();
  ($("model").hidden ? $("results") : $("model")).focus();
});
// the form follows the URL at once; the benchmark picker fills in when its list arrives (filling the form after
// that request wiped what a user had typed meanwhile)
route();
loadBenchmarks();
loadSpaces();
