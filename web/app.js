// The protocol chooser: every number comes from the toolkit compiled to WebAssembly
// (ldp-wasm), the same library calls as `ldp analyze` and `ldp tune --protocol all`.

import init, { Client, analyze, choose, frontier, maxLocalEps, shuffle, version } from "./pkg/ldp_wasm.js";
import { draw, label } from "./plot.js";
import { OTHER, TableError } from "./table.js";
import { band, budgets, front, instances, recommend, runAll, specFile } from "./measure.js";

const $ = (id) => document.getElementById(id);
const ADAPTIVE = ["ass", "aue", "alh", "athe"];
// The "try it" option of the recommended instance where the table shows another one.
const RECOMMENDED = "recommended";
// The page answers as you type up to this k; the frontiers of ASS and ALH scan every
// parameter up to k (about a second at 100,000). The CLI takes any k.
const MAX_K = 100000;
// The most points of a frontier drawn (evenly chosen, both ends kept).
const MAX_DRAWN = 400;

function number(id) {
  const text = $(id).value.trim();
  return text === "" ? undefined : Number(text);
}

// The inputs, as the CLI's flags.
function settings() {
  const s = { k: number("k"), eps: number("eps") };
  s.bounds = {};
  if (number("asr-max") !== undefined) s.bounds.asr_max = number("asr-max");
  if (number("bits-max") !== undefined) s.bounds.bits_max = number("bits-max");
  s.weights = { w_asr: number("w-asr") ?? 0.5 };
  if ((number("w-epg") ?? 0) > 0) s.weights.w_epg = number("w-epg");
  if ((number("w-bits") ?? 0) > 0) s.weights.w_bits = number("w-bits");
  // The users behind FLH's and the sketches' bias; the tool's default needs no flag.
  s.bias = {};
  if (number("bias-users") !== undefined && number("bias-users") !== 10000) s.bias.bias_users = number("bias-users");
  return s;
}

function cliFlags(options) {
  return Object.entries(options).map(([k, v]) => ` --${k.replace("_", "-")} ${v}`).join("");
}

// Runs `f` once the inputs have been still for a moment, not on every keystroke.
function debounced(f, ms) {
  let timer;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(f, ms);
  };
}

// A whole number exactly (a parameter copied from the page is the instance shown), any
// other number to four digits.
function cell(v) {
  if (v === null || v === undefined) return "–";
  if (Number.isInteger(v)) return String(v);
  return typeof v === "number" ? label(v) : String(v);
}

let current = { rows: [], pick: null };

// The settings' own checks, before any answer: what a field holds that no command takes.
function checked(s) {
  const refuse = (message) => { throw Object.assign(new Error(message), { name: "ParamError" }); };
  if (s.k === undefined) refuse("k: give the domain size, a whole number of at least 2");
  if (!Number.isInteger(s.k) || s.k < 2) refuse(`k: expected a whole number of at least 2, got ${s.k}`);
  if (s.k > MAX_K) refuse(`k: the page answers up to k = ${MAX_K.toLocaleString("en")}; \`ldp analyze\` and \`ldp tune\` take any k`);
  if (s.eps === undefined) refuse("ε: give the privacy budget, a number above 0");
}

// Nothing of the last answer stays on screen beside a setting that has none.
function clearAnswer(e) {
  $("status").textContent = `${e.name}: ${e.message}`;
  $("status").className = "error";
  const rec = $("recommendation");
  rec.dataset.state = "error";
  rec.dataset.protocol = "";
  rec.textContent = `No answer: ${e.message}`;
  $("table").tBodies[0].replaceChildren();
  $("plot").replaceChildren();
  $("cli-analyze").textContent = "";
  $("cli-tune").textContent = "";
  // Nothing to try either: "try it" says so rather than perturb with a stale instance.
  $("try-protocol").replaceChildren();
  current = { rows: [], pick: null };
}

function render() {
  const started = performance.now();
  const s = settings();
  let rows;
  try {
    checked(s);
    rows = analyze("all", s.k, s.eps, { ...s.weights, ...s.bias });
  } catch (e) {
    clearAnswer(e);
    return;
  }
  // The command lines only beside the answer they give.
  $("cli-analyze").textContent = `ldp analyze --protocol all --k ${s.k} --eps ${s.eps}${cliFlags({ ...s.weights, ...s.bias })}`;
  $("cli-tune").textContent = `ldp tune --protocol all --k ${s.k} --eps ${s.eps}${cliFlags({ ...s.bounds, ...s.bias })}`;
  $("status").className = "";
  let pick = null;
  const rec = $("recommendation");
  try {
    if (Object.keys(s.bounds).length === 0) throw new Error("give an ASR or a size bound for a recommendation");
    pick = choose(s.k, s.eps, { ...s.bounds, ...s.bias });
    rec.dataset.state = "ready";
    rec.dataset.protocol = pick.protocol;
    rec.dataset.param = pick.param === null ? "" : String(pick.param);
    rec.dataset.spec = JSON.stringify(pick.spec);
    rec.dataset.asr = String(pick.asr);
    rec.dataset.mse = String(pick.mse);
    rec.replaceChildren();
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = pick.protocol.toUpperCase();
    rec.append(name, ` ${pick.param === null ? "" : `(param ${cell(pick.param)})`}: ASR ${cell(pick.asr)}, MSE per user ${cell(pick.mse)}, ${cell(pick.bits)} bits per report`);
  } catch (e) {
    rec.dataset.state = "none";
    rec.dataset.protocol = "";
    rec.textContent = e.message;
  }

  // The recommendation is an instance: where the table's row of its protocol is another
  // one (HR's blocks, the sketches' sizes, an adaptive parameter tuned under bounds rather
  // than weights), it gets a row of its own, and "try it" and the plot use it.
  const same = (r) => pick && r.protocol === pick.protocol && JSON.stringify(r.spec) === JSON.stringify(pick.spec);
  const extra = pick && !rows.some(same) ? { ...pick, recommended: true } : null;
  const shown = extra ? rows.concat([extra]) : rows;
  const body = $("table").tBodies[0];
  body.replaceChildren();
  for (const r of shown) {
    const tr = document.createElement("tr");
    tr.dataset.protocol = r.protocol;
    for (const key of ["asr", "mse", "bias", "epg", "bits", "param"]) {
      if (r[key] !== undefined) tr.dataset[key] = r[key] === null ? "" : String(r[key]);
    }
    if (r.recommended) tr.dataset.extra = "true";
    if (r === extra || (!extra && same(r))) tr.className = "recommended";
    const cells = r.error ? [r.protocol, r.error] : [r.protocol, r.param, r.asr, r.mse, r.bias, r.epg, r.bits];
    cells.forEach((v, i) => {
      const td = document.createElement("td");
      td.textContent = i === 0 ? v.toUpperCase() + (r.recommended ? " (recommended)" : "") : cell(v);
      if (r.error && i === 1) { td.colSpan = 6; td.className = "error"; }
      tr.append(td);
    });
    body.append(tr);
  }

  const points = rows.filter((r) => !r.error && !ADAPTIVE.includes(r.protocol));
  // The ring sits on a drawn point: the recommended instance is one (an adaptive one, tuned
  // under bounds, need not lie on the frontier drawn for the weights' objectives).
  if (extra) points.push(extra);
  const tuned = ADAPTIVE.filter((p) => rows.some((r) => r.protocol === p && !r.error));
  const frontiers = [];
  for (const p of tuned) {
    try {
      // At most MAX_DRAWN points, evenly chosen, both ends kept (thinned in the module).
      frontiers.push({ protocol: p, points: frontier(p, s.k, s.eps, "asr,mse", {}, MAX_DRAWN) });
    } catch (e) {
      $("status").textContent = `${p.toUpperCase()}'s frontier: ${e.message}`;
    }
  }
  draw($("plot"), { points, frontiers, pick }, $("tooltip"));

  const select = $("try-protocol");
  const chosen = select.value;
  const options = rows.filter((r) => !r.error).map((r) => new Option(r.protocol.toUpperCase(), r.protocol));
  if (extra) options.push(new Option(`${extra.protocol.toUpperCase()} (recommended)`, RECOMMENDED));
  select.replaceChildren(...options);
  const pickOption = extra ? RECOMMENDED : pick?.protocol;
  const followsPick = !chosen || chosen === RECOMMENDED || chosen === current.pickOption;
  select.value = pick && followsPick ? pickOption : chosen || rows[0].protocol;
  if (!select.value) select.value = rows[0].protocol;
  current = { rows, pick, pickOption };
  // A value the domain holds: the last one when the old value no longer fits.
  $("try-value").max = String(s.k - 1);
  if (Number($("try-value").value) > s.k - 1) $("try-value").value = String(s.k - 1);
  const ms = performance.now() - started;
  document.body.dataset.renderMs = ms.toFixed(1);
  $("status").textContent = `Answered in ${ms.toFixed(0)} ms.`;
}

// The shuffle box: the central eps of n shuffled reports at the page's budget, and the
// largest local budget that gives the batch's analyst that budget.
function renderShuffle() {
  const eps = number("eps");
  const users = number("shuffle-users");
  const delta = number("shuffle-delta");
  const out = $("shuffle-answer");
  try {
    if (users === undefined || delta === undefined || eps === undefined) {
      $("cli-shuffle").textContent = "";
      throw Object.assign(new Error("give n, δ and ε"), { name: "ParamError" });
    }
    $("cli-shuffle").textContent = "";
    const c = shuffle(users, delta, eps);
    const m = maxLocalEps(users, delta, eps);
    // The command line only beside an answer it gives.
    $("cli-shuffle").textContent = `ldp shuffle --users ${users} --delta ${delta} --eps0 ${eps}`;
    out.dataset.state = "ready";
    out.dataset.central = String(c.central_eps);
    out.dataset.eps0Max = String(m.eps0_max);
    out.className = "";
    out.textContent = `${users.toLocaleString("en")} shuffled reports at ε = ${label(eps)} are ` +
      `(${label(c.central_eps)}, ${label(delta)})-DP for the analyst who sees only the shuffled batch. ` +
      `To give that analyst ε = ${label(eps)}, each report may spend up to ε₀ = ${label(m.eps0_max)} ` +
      `(${label(m.amplification)} times more).`;
  } catch (e) {
    out.dataset.state = "error";
    out.className = "error";
    out.textContent = `${e.name}: ${e.message}`;
  }
}

// The client of the protocol selected under "try it", at the instance of the table.
function tryClient() {
  const p = $("try-protocol").value;
  if (!p) throw Object.assign(new Error("no answer to try: fix the settings above"), { name: "ParamError" });
  const spec = p === RECOMMENDED ? current.pick.spec : current.rows.find((r) => r.protocol === p).spec;
  return Client.fromSpec(JSON.stringify(spec));
}

// The table loaded under "Your own table" (held by a worker, ./table-worker.js), and its
// column as a domain.
let own = null;
// The most bars drawn: the most frequent values.
const MAX_BARS = 20;

function ownStatus(state, text) {
  $("own-status").dataset.state = state;
  $("own-status").textContent = text;
}

// The worker that holds the table; a new file replaces it (and stops any reading).
let worker = null;
let asked = 0;
const waiting = new Map();

function ask(message, transfer = []) {
  const id = ++asked;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    worker.postMessage({ id, ...message }, transfer);
  });
}

function freshWorker() {
  worker?.terminate();
  for (const { reject } of waiting.values()) reject(new TableError("replaced by another table"));
  waiting.clear();
  worker = new Worker(new URL("./table-worker.js", import.meta.url), { type: "module" });
  worker.onmessage = ({ data }) => {
    const w = waiting.get(data.id);
    if (!w) return;
    waiting.delete(data.id);
    if (data.ok) w.resolve(data); else w.reject(new TableError(data.message));
  };
  worker.onerror = (e) => {
    for (const { reject } of waiting.values()) reject(new TableError(`the table's reader failed: ${e.message}`));
    waiting.clear();
  };
}

function resetOwn() {
  own = null;
  for (const id of ["own-use", "own-perturb", "own-column", "measure-start", "several-start"]) $(id).disabled = true;
  $("own-hist").replaceChildren();
  $("own-reports").hidden = true;
  $("own-labels").hidden = true;
  delete $("own-status").dataset.k;
  clearMeasured();
  $("several-table").tBodies[0].replaceChildren();
  $("several-csv").hidden = true;
  $("cli-several").textContent = "";
  severalStatus("empty", "");
  released("several");
}

// The object URLs a section offers for download, released when it shows others.
const offered = { measure: [], several: [] };

function released(section) {
  for (const url of offered[section]) URL.revokeObjectURL(url);
  offered[section] = [];
}

function offer(section, blob) {
  const url = URL.createObjectURL(blob);
  offered[section].push(url);
  return url;
}

// Nothing measured on another column stays on screen.
function clearMeasured() {
  $("measure-table").tBodies[0].replaceChildren();
  clearMeasuredPlot();
  $("own-items").hidden = true;
  $("cli-measure").textContent = "";
  $("cli-linked-line").hidden = true;
  released("measure");
}

// Counts a table's outcome (read or refused), which tests wait for.
function counted(key) {
  document.body.dataset[key] = String(Number(document.body.dataset[key] ?? 0) + 1);
}

async function loadTable(file) {
  cancelMeasure();
  comparing?.cancel();
  resetOwn();
  freshWorker();
  ownStatus("loading", `Reading ${file.name}…`);
  try {
    const t = await ask({ kind: "load", file, kMax: ownKmax() });
    own = { name: file.name, rows: t.rows, format: t.format, columns: t.columns, domain: null };
    const select = $("own-column");
    select.replaceChildren(...t.columns.map((c, i) => new Option(c || `column ${i + 1}`, String(i))));
    select.value = String(t.first);
    select.disabled = false;
    showColumns(t.columns);
    await showDomain();
  } catch (e) {
    if (e.message !== "replaced by another table") ownStatus("error", e.message);
  }
  counted("tables");
}

function ownKmax() {
  const v = number("own-kmax");
  if (v === undefined || !Number.isInteger(v) || v < 2) throw new TableError(`k at most: a whole number of at least 2, got ${$("own-kmax").value}`);
  return Math.min(v, MAX_K);
}

// The selected column as a domain: the status, the bars, the buttons.
async function showDomain() {
  if (!own) return;
  // The measurement of another column (or k) stops, and nothing of it stays.
  cancelMeasure();
  clearMeasured();
  own.domain = null;
  $("measure-start").disabled = true;
  const { name, rows, format, columns } = own;
  const index = Number($("own-column").value);
  $("own-reports").hidden = true;
  $("own-labels").hidden = true;
  try {
    const { domain: d } = await ask({ kind: "domain", index, kMax: ownKmax() });
    own.domain = { ...d, column: columns[index] };
    const n = d.items.length;
    ownStatus("ready", `${name}: ${rows.toLocaleString("en")} rows (${format}); column ${columns[index]}: ` +
      `${d.distinct.toLocaleString("en")} distinct values, k = ${d.k.toLocaleString("en")} over ${n.toLocaleString("en")} values.` +
      (d.notes.length ? ` ${d.notes.map((t) => t[0].toUpperCase() + t.slice(1)).join(". ")}.` : ""));
    $("own-status").dataset.k = String(d.k);
    const top = Math.max(...d.counts);
    const shown = d.labels.map((l, i) => [l, d.counts[i]]).slice(0, MAX_BARS);
    $("own-hist").replaceChildren(...shown.map(([l, c]) => {
      const row = document.createElement("div");
      row.className = "bar";
      row.dataset.label = l;
      row.dataset.count = String(c);
      const text = document.createElement("span");
      text.textContent = l;
      text.title = l;
      const bar = document.createElement("div");
      bar.style.width = `${(100 * c / top).toFixed(2)}%`;
      const share = document.createElement("span");
      share.textContent = `${(100 * c / n).toFixed(1)}%`;
      row.append(text, bar, share);
      return row;
    }));
    if (d.labels.length > MAX_BARS) {
      const more = document.createElement("p");
      more.className = "note";
      more.textContent = `and ${(d.labels.length - MAX_BARS).toLocaleString("en")} more values`;
      $("own-hist").append(more);
    }
    $("own-use").disabled = false;
    $("own-perturb").disabled = false;
    $("measure-start").disabled = measuring !== null;
  } catch (e) {
    if (own) own.domain = null;
    $("own-hist").replaceChildren();
    $("own-use").disabled = true;
    $("own-perturb").disabled = true;
    $("measure-start").disabled = true;
    delete $("own-status").dataset.k;
    if (e.message !== "replaced by another table") ownStatus("error", e.message);
  }
  counted("domains");
}

// Perturbs every value of the column with the protocol under "try it", which must be at
// the table's k; offers the reports and the labels of the items.
function perturbColumn() {
  const d = own?.domain;
  if (!d) throw new TableError("load a table first");
  const client = tryClient();
  if (client.k !== d.k) {
    throw new TableError(`the protocol under "Try it" has k = ${client.k}, the column ${d.k}: press "Answer for its k" first`);
  }
  const lines = client.perturbBatch(Float64Array.from(d.items));
  const reports = $("own-reports");
  reports.href = URL.createObjectURL(new Blob([lines], { type: "application/x-ndjson" }));
  reports.hidden = false;
  reports.dataset.lines = String(d.items.length);
  reports.dataset.spec = client.spec;
  const labels = $("own-labels");
  const other = d.distinct > d.k ? OTHER : null;
  labels.href = URL.createObjectURL(new Blob([JSON.stringify({ column: d.column, labels: d.labels, other })], { type: "application/json" }));
  labels.hidden = false;
  ownStatus("ready", `${d.items.length.toLocaleString("en")} reports of ${client.protocol.toUpperCase()} at ε = ${label(client.eps)}: ` +
    `item i is labels[i] of labels.json; \`ldp aggregate\` with the spec ${client.spec} estimates them.`);
}

// The measurement under way ("Measure every protocol on it"), which a new table, a new
// column or the cancel button stops.
let measuring = null;

function measureStatus(state, text) {
  $("measure-status").dataset.state = state;
  $("measure-status").textContent = text;
}

function wholeField(id, least) {
  const v = number(id);
  if (v === undefined || !Number.isInteger(v) || v < least) throw new Error(`${id.replace("measure-", "")}: a whole number of at least ${least}, got ${$(id).value}`);
  return v;
}

async function measureColumn() {
  const d = own?.domain;
  if (!d || measuring) return;
  const table = own;
  let plan;
  try {
    const s = settings();
    const eps = budgets($("measure-eps").value);
    const runs = wholeField("measure-runs", 2);
    const seed = wholeField("measure-seed", 0);
    if (seed > Number.MAX_SAFE_INTEGER) throw new Error("seed: at most 2^53 - 1 here");
    // Empty: no attack on linked reports.
    const linked = number("measure-linked") === undefined ? null : wholeField("measure-linked", 1);
    if (linked > 10_000) throw new Error(`linked: at most 10,000 reports, got ${linked}`);
    const options = { ...s.weights, ...s.bias };
    const all = instances(d.k, eps, options);
    plan = { d, eps, runs, seed, linked, bounds: s.bounds, all, tasks: all.filter((t) => !t.row.error) };
  } catch (e) {
    measureStatus("error", e.message);
    counted("measures");
    return;
  }
  const { tasks, runs, seed, linked } = plan;
  const bar = $("measure-progress");
  bar.hidden = false;
  bar.max = tasks.length;
  bar.value = 0;
  $("measure-start").disabled = true;
  $("measure-cancel").hidden = false;
  $("measure-table").tBodies[0].replaceChildren();
  clearMeasuredPlot();
  const started = performance.now();
  let finished = 0;
  measuring = runAll({
    setup: { kind: "population", k: d.k, items: d.items },
    tasks,
    message: (t) => ({
      kind: "measure", spec: JSON.stringify(t.row.spec), options: { runs, seed, attack: "map" },
      linked: linked && { runs, seed, collections: [linked] },
    }),
    progress: (done, total, share) => {
      finished = done;
      bar.value = share;
      measureStatus("running", `Measured ${done} of ${total} instances (${runs} runs each over ${d.items.length.toLocaleString("en")} users)…`);
    },
  });
  measureStatus("running", `Measuring ${tasks.length} instances on ${measuring.workers} workers…`);
  try {
    const results = await measuring.finished;
    const seconds = (performance.now() - started) / 1000;
    const note = showMeasured(plan, results);
    document.body.dataset.measureMs = String(Math.round(seconds * 1000));
    const failed = results.filter((m) => m.error).length;
    measureStatus("ready", `Measured ${tasks.length - failed} instances at ${plan.eps.length} budgets, ${runs} runs each, ` +
      `in ${seconds.toFixed(1)} s on ${measuring.workers} workers${failed ? ` (${failed} failed, named in their rows)` : ""}.${note}`);
  } catch (e) {
    if (own !== table) measureStatus("empty", "");
    else {
      measureStatus(e.message === "cancelled" ? "cancelled" : "error",
        e.message === "cancelled" ? `Cancelled after ${finished} of ${tasks.length} instances.` : e.message);
    }
  } finally {
    measuring = null;
    bar.hidden = true;
    $("measure-cancel").hidden = true;
    $("measure-start").disabled = !own?.domain;
    counted("measures");
  }
}

function cancelMeasure() {
  measuring?.cancel();
}

// The measured plot's budgets: each one's measured rows, front and recommendation.
let measuredPlots = new Map();

function clearMeasuredPlot() {
  measuredPlots = new Map();
  $("measure-figure").hidden = true;
  $("measure-plot").replaceChildren();
  $("measure-plot-eps").replaceChildren();
}

// The measured rows at each budget as the chooser's plot draws instances: points with
// their 95% bands, the measured front as a line through them, the recommendation ringed.
// The budget shown first is the recommendation's (the last budget with one).
function showMeasuredPlot(plots, eps) {
  measuredPlots = plots;
  const select = $("measure-plot-eps");
  select.replaceChildren(...[...plots.keys()].map((e) => new Option(label(e), String(e))));
  $("measure-figure").hidden = plots.size === 0;
  if (plots.size === 0) return;
  select.value = String(plots.has(eps) ? eps : plots.keys().next().value);
  drawMeasured();
}

function drawMeasured() {
  const at = measuredPlots.get(Number($("measure-plot-eps").value));
  if (!at) return;
  const point = (r) => ({
    protocol: r.row.protocol, param: r.row.param, asr: r.m.asr, mse: r.m.mse,
    asrBand: 1.96 * r.m.asr_se, mseBand: 1.96 * r.m.mse_se,
  });
  const frontiers = [{ protocol: "front", name: "measured front", markers: false, points: at.front.map(point) }];
  draw($("measure-plot"), { points: at.good.map(point), frontiers, pick: at.pick && point(at.pick) }, $("measure-tooltip"));
}

// The measured rows, by budget then measured MSE; the front marked; each budget's
// recommendation named, with its spec to download.
function showMeasured(plan, results) {
  const { d, runs, seed, linked, bounds } = plan;
  const measured = plan.tasks.map((t, i) => ({ ...t, m: results[i] }));
  released("measure");
  const body = $("measure-table").tBodies[0];
  body.replaceChildren();
  const picks = [];
  const plots = new Map();
  for (const eps of plan.eps) {
    const good = measured.filter((r) => r.eps === eps && !r.m.error);
    const onFront = new Set(front(good));
    const pick = recommend(good, bounds);
    if (pick) picks.push(pick);
    if (good.length) plots.set(eps, { good, front: [...onFront], pick });
    const rows = plan.all.filter((r) => r.eps === eps).map((r) => measured.find((x) => x.row === r.row) ?? r);
    rows.sort((a, b) => (a.m && !a.m.error ? a.m.mse : Infinity) - (b.m && !b.m.error ? b.m.mse : Infinity));
    for (const r of rows) {
      const tr = document.createElement("tr");
      const p = r.row.protocol;
      Object.assign(tr.dataset, { protocol: p, eps: String(eps), param: r.row.param === null ? "" : String(r.row.param) });
      const failure = r.row.error ?? r.m?.error;
      let cells;
      if (failure) {
        cells = [p.toUpperCase(), label(eps), failure];
      } else {
        const m = r.m;
        Object.assign(tr.dataset, {
          spec: JSON.stringify(r.row.spec), bits: String(r.row.bits), mse: String(m.mse), mseSe: String(m.mse_se), asr: String(m.asr),
          asrSe: String(m.asr_se), kl: String(m.kl), rankCorr: String(m.rank_corr), front: String(onFront.has(r)),
          ms: String(Math.round(m.ms)),
        });
        if (m.linked && !m.linked.error) {
          Object.assign(tr.dataset, {
            linkedAsr: String(m.linked.asr[0]), linkedAsrSe: String(m.linked.asr_se[0]),
            linkedAsrExpected: String(m.linked.asr_expected[0]),
          });
        }
        if (onFront.has(r)) tr.classList.add("front");
        if (r === pick) { tr.classList.add("recommended"); tr.dataset.recommended = "true"; }
        cells = [p.toUpperCase() + (r === pick ? " (recommended)" : ""), label(eps), cell(r.row.param),
          band(m.mse, m.mse_se), cell(m.mse_expected), band(m.kl, m.kl_se), band(m.rank_corr, m.rank_corr_se),
          band(m.asr, m.asr_se), cell(m.asr_expected), cell(r.row.asr),
          m.linked?.error ?? (m.linked ? band(m.linked.asr[0], m.linked.asr_se[0]) : "–"),
          m.linked && !m.linked.error ? cell(m.linked.asr_expected[0]) : "–",
          cell(r.row.epg), cell(r.row.bits), null];
      }
      cells.forEach((v, i) => {
        const td = document.createElement("td");
        if (failure && i === 2) { td.colSpan = 13; td.className = "error"; }
        if (v !== null) td.textContent = v;
        else {
          const a = document.createElement("a");
          a.textContent = "spec.json";
          a.download = specFile(p, eps);
          a.href = offer("measure", new Blob([JSON.stringify(r.row.spec)], { type: "application/json" }));
          td.append(a);
        }
        tr.append(td);
      });
      body.append(tr);
    }
  }
  const items = $("own-items");
  items.href = offer("measure", new Blob([Array.from(d.items).join("\n") + "\n"], { type: "text/plain" }));
  items.hidden = false;
  const shown = picks[picks.length - 1] ?? measured.find((r) => !r.m.error);
  showMeasuredPlot(plots, shown?.eps);
  $("cli-measure").textContent = shown
    ? `ldp simulate --spec ${specFile(shown.row.protocol, shown.eps)} --items items.txt --runs ${runs} --seed ${seed} --attack map --prior-from-data`
    : "";
  $("cli-linked").textContent = shown && linked
    ? `ldp simulate --spec ${specFile(shown.row.protocol, shown.eps)} --items items.txt --runs ${runs} --seed ${seed} --collections ${linked}`
    : "";
  $("cli-linked-line").hidden = !(shown && linked);
  return picks.length === 0 && Object.keys(bounds).length > 0 ? " No measured instance meets the bounds above at any budget." : "";
}

// "Several columns": the solutions of several attributes per user compared on the chosen
// columns (./measure-worker.js), and the table's re-identification risk.
const SOLUTIONS = ["spl", "smp", "rsfd", "rsfd-z", "rsrfd"];
let comparing = null;

function severalStatus(state, text) {
  $("several-status").dataset.state = state;
  $("several-status").textContent = text;
}

function showColumns(columns) {
  const box = $("several-columns");
  box.replaceChildren(Object.assign(document.createElement("legend"), { textContent: "Columns" }));
  columns.forEach((c, i) => {
    const label = document.createElement("label");
    const check = Object.assign(document.createElement("input"), { type: "checkbox", value: String(i) });
    label.append(check, ` ${c || `column ${i + 1}`}`);
    box.append(label);
  });
  $("several-start").disabled = comparing !== null;
}

async function compareSolutions() {
  if (!own || comparing) return;
  // Taken at once (the columns are read from the table's worker first): a second click,
  // or a new table meanwhile, finds it taken.
  const table = own;
  comparing = { cancel() {}, workers: 0 };
  $("several-start").disabled = true;
  let plan;
  try {
    const indices = [...$("several-columns").querySelectorAll("input:checked")].map((c) => Number(c.value));
    const eps = number("several-eps");
    if (eps === undefined || !(eps > 0)) throw new Error(`ε: a number above 0, got ${$("several-eps").value}`);
    const runs = wholeField("several-runs", 2);
    const seed = wholeField("several-seed", 0);
    if (seed > Number.MAX_SAFE_INTEGER) throw new Error("seed: at most 2^53 - 1 here");
    const { several } = await ask({ kind: "several", indices });
    plan = { ...several, eps, runs, seed, protocol: $("several-protocol").value };
  } catch (e) {
    comparing = null;
    if (own === table) {
      $("several-start").disabled = false;
      if (e.message !== "replaced by another table") severalStatus("error", e.message);
    }
    counted("severals");
    return;
  }
  if (own !== table) {
    comparing = null;
    counted("severals");
    return;
  }
  const { csv, names, users, dropped, unique, smallest, eps, runs, seed, protocol } = plan;
  released("several");
  const link = $("several-csv");
  link.href = offer("several", new Blob([csv], { type: "text/csv" }));
  link.hidden = false;
  $("several-cancel").hidden = false;
  $("several-table").tBodies[0].replaceChildren();
  const risk = `${names.join(", ")} over ${users.toLocaleString("en")} rows` +
    (dropped ? ` (${dropped.toLocaleString("en")} with an empty cell left out)` : "") +
    `: ${label(100 * unique)}% of the rows are unique on these columns, re-identified by anyone who knows them (the smallest group sharing a combination: ${smallest}).`;
  $("several-status").dataset.unique = String(unique);
  severalStatus("running", `${risk} Measuring ${SOLUTIONS.length} solutions…`);
  comparing = runAll({
    setup: { kind: "table", csv },
    tasks: SOLUTIONS,
    message: (solution) => ({ kind: "several", solution, protocol, eps, options: { runs, seed } }),
    progress: (done, total) => severalStatus("running", `${risk} Measured ${done} of ${total} solutions…`),
  });
  const run = comparing;
  try {
    const results = await run.finished;
    const body = $("several-table").tBodies[0];
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    results.forEach((m, i) => {
      const tr = document.createElement("tr");
      tr.dataset.solution = SOLUTIONS[i];
      if (m.error) {
        const td = document.createElement("td");
        td.colSpan = 6;
        td.className = "error";
        td.textContent = `${SOLUTIONS[i]}: ${m.error}`;
        tr.append(td);
      } else {
        tr.dataset.result = JSON.stringify(m);
        const cells = [m.solution, label(mean(m.attributes.map((a) => a.mse))), label(mean(m.attributes.map((a) => a.asr))),
          band(m.joint_asr, m.joint_asr_se),
          m.inference === null ? "–" : `${band(m.inference, m.inference_se)} (baseline ${label(m.inference_baseline)})`,
          m.attributes.map((a) => `${a.attribute}: ${label(a.mse)}; ${label(a.asr)}`).join(" · ")];
        for (const v of cells) tr.append(Object.assign(document.createElement("td"), { textContent: v }));
      }
      body.append(tr);
    });
    $("cli-several").textContent = `ldp simulate --dataset columns.csv --solution rsfd --protocol ${protocol} --eps ${eps} --runs ${runs} --seed ${seed}` +
      " (rsrfd: add --prior-from-data)";
    severalStatus("ready", `${risk} Measured ${SOLUTIONS.length} solutions, ${runs} runs each, on ${run.workers} workers.`);
  } catch (e) {
    // A new table cancels this one: its section is already cleared.
    if (own === table) {
      severalStatus(e.message === "cancelled" ? "cancelled" : "error", e.message === "cancelled" ? `${risk} Cancelled.` : e.message);
    }
  } finally {
    comparing = null;
    $("several-cancel").hidden = true;
    $("several-start").disabled = !own;
    counted("severals");
  }
}

function guarded(f) {
  return () => {
    try {
      f();
    } catch (e) {
      $("status").textContent = `${e.name}: ${e.message}`;
      $("status").className = "error";
    }
  };
}

async function main() {
  const loaded = performance.now();
  await init();
  $("version").textContent = version();
  render();
  document.body.dataset.loadMs = (performance.now() - loaded).toFixed(1);
  document.body.dataset.ready = "true";
  // Tests wait for this count to move: every answer, or error shown, counts.
  renderShuffle();
  const counted = () => {
    try {
      render();
      renderShuffle();
    } finally {
      document.body.dataset.renders = String(Number(document.body.dataset.renders ?? 0) + 1);
    }
  };
  const later = debounced(counted, 150);
  for (const id of ["k", "eps", "asr-max", "bits-max", "bias-users", "w-asr", "w-epg", "w-bits", "shuffle-users", "shuffle-delta"]) {
    $(id).addEventListener("input", later);
  }
  $("try-perturb").addEventListener("click", guarded(() => {
    const client = tryClient();
    const report = client.perturb(Number($("try-value").value));
    $("try-report").textContent = report;
    $("try-guess").textContent = String(client.guess(report));
  }));
  $("try-measure").addEventListener("click", guarded(() => {
    const m = tryClient().attack(Number($("try-value").value), 10000);
    const out = $("try-asr");
    out.dataset.asr = String(m.asr);
    out.dataset.se = String(m.se);
    out.dataset.expected = String(m.expected);
    out.textContent = `Measured ASR over ${m.draws.toLocaleString("en")} reports: ${label(m.asr)} ± ${label(m.se)} (closed form ${label(m.expected)}).`;
  }));
  $("own-file").addEventListener("change", () => {
    const file = $("own-file").files[0];
    if (file) loadTable(file);
  });
  const drop = $("own-drop");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const file = e.dataTransfer?.files?.[0];
    if (file) loadTable(file);
  });
  $("measure-start").addEventListener("click", measureColumn);
  $("measure-cancel").addEventListener("click", cancelMeasure);
  $("measure-plot-eps").addEventListener("change", drawMeasured);
  $("several-start").addEventListener("click", compareSolutions);
  $("several-cancel").addEventListener("click", () => comparing?.cancel());
  // Every one-shot protocol the module knows, as `analyze` names them.
  $("several-protocol").replaceChildren(...analyze("all", 16, 1, {}).map((r) => new Option(r.protocol.toUpperCase(), r.protocol)));
  $("several-protocol").value = "oue";
  $("own-column").addEventListener("change", showDomain);
  $("own-kmax").addEventListener("input", debounced(showDomain, 150));
  $("own-use").addEventListener("click", () => {
    if (!own?.domain) return;
    $("k").value = String(own.domain.k);
    $("k").dispatchEvent(new Event("input"));
  });
  $("own-perturb").addEventListener("click", () => {
    try {
      perturbColumn();
    } catch (e) {
      ownStatus("error", e.message);
    }
  });
  $("batch-perturb").addEventListener("click", guarded(() => {
    const client = tryClient();
    const values = $("batch-values").value.split(/\s+/).filter((t) => t !== "").map(Number);
    const lines = client.perturbBatch(values);
    $("batch-spec").textContent = client.spec;
    $("batch-reports").value = lines;
    const link = $("batch-download");
    link.href = URL.createObjectURL(new Blob([lines], { type: "application/x-ndjson" }));
    link.hidden = false;
  }));
}

main().catch((e) => {
  $("status").textContent = `The WebAssembly module did not load: ${e.message}`;
  $("status").className = "error";
});
