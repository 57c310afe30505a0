// The page in Debian's Chromium (playwright-core, the system browser: nothing is
// downloaded), against the CLI: the recommendation is `ldp tune --protocol all`'s, the
// table is `ldp analyze`'s to 1e-12, the reports it makes aggregate in `ldp aggregate`.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CHROMIUM, SCREENSHOT, close, ldp, ldpJson, serve } from "./support.mjs";

let server, browser, page;

before(async () => {
  server = await serve();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // A closed network: no background connections, no updates, no first-run pages.
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.errors = errors;
});

after(async () => {
  await browser?.close();
  server?.close();
});

// Sets the inputs (a missing key is left as is, null clears the field) and waits for
// the page to answer.
async function set(values) {
  if (!page.url().startsWith(server.url)) {
    // A test run alone (--test-name-pattern): load the page first.
    await page.goto(server.url);
    await page.waitForSelector("body[data-ready=true]");
  }
  const renders = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
  // Every field at once, then one input event: a render in between (the page answers once
  // the inputs have been still for 150 ms) would answer part of the settings.
  await page.evaluate((entries) => {
    for (const [id, v] of entries) document.getElementById(id).value = v === null ? "" : String(v);
    document.getElementById(entries[entries.length - 1][0]).dispatchEvent(new Event("input"));
  }, Object.entries(values));
  await page.waitForFunction((n) => Number(document.body.dataset.renders ?? 0) > n, renders);
}

test("the page loads and answers in under a second", async () => {
  // The better of two loads: one hiccup of a shared machine (a build beside the tests)
  // is not the page's; a page that is slow every time fails.
  const walls = [];
  for (let attempt = 0; attempt < 2 && !walls.some((w) => w < 1000); attempt += 1) {
    const started = Date.now();
    await page.goto(server.url);
    await page.waitForSelector("body[data-ready=true]", { timeout: 10_000 });
    const wall = Date.now() - started;
    walls.push(wall);
    const { loadMs, renderMs } = await page.evaluate(() => document.body.dataset);
    console.log(`page: loaded and answered in ${wall} ms (module and first answer ${loadMs} ms, of which the answer ${renderMs} ms)`);
  }
  assert.ok(Math.min(...walls) < 1000, `${walls.join(" and ")} ms`);
  assert.deepEqual(page.errors, []);
});

const SETTINGS = [
  { k: 100, eps: 1, "asr-max": 0.1, "bits-max": null },
  { k: 100, eps: 4, "asr-max": 0.05, "bits-max": 64 },
  { k: 10, eps: 2, "asr-max": 0.3, "bits-max": null },
  { k: 1000, eps: 0.5, "asr-max": 0.01, "bits-max": null },
  { k: 5000, eps: 6, "asr-max": 0.2, "bits-max": 128 },
];

for (const s of SETTINGS) {
  test(`the recommendation is ldp tune --protocol all's at ${JSON.stringify(s)}`, async () => {
    await set(s);
    const shown = await page.evaluate(() => ({ ...document.getElementById("recommendation").dataset }));
    const args = ["tune", "--protocol", "all", "--k", String(s.k), "--eps", String(s.eps),
      "--asr-max", String(s["asr-max"])];
    if (s["bits-max"] !== null) args.push("--bits-max", String(s["bits-max"]));
    const [cli] = ldpJson(args);
    assert.equal(shown.state, "ready");
    assert.equal(shown.protocol, cli.protocol);
    assert.equal(shown.param, cli.param === null ? "" : String(cli.param));
    assert.ok(close(Number(shown.asr), cli.asr) && close(Number(shown.mse), cli.mse), JSON.stringify({ shown, cli }));
    // The command the page shows is the one that answers.
    const command = await page.textContent("#cli-tune");
    assert.equal(command, `ldp ${args.join(" ")}`);
  });
}

test("the table equals ldp analyze to 1e-12 over a grid of settings", async () => {
  let compared = 0;
  for (const k of [2, 100, 4096]) {
    for (const eps of [0.5, 2, 8]) {
      for (const wAsr of [0.5, 0.8]) {
        await set({ k, eps, "w-asr": wAsr, "asr-max": 0.5 });
        // The table's rows (a recommended instance of its own aside), and their cells.
        const rows = await page.$$eval("#table tbody tr:not([data-extra])", (trs) =>
          trs.map((tr) => ({ ...tr.dataset, paramCell: tr.cells[1]?.textContent })));
        const cli = ldpJson(["analyze", "--protocol", "all", "--k", String(k), "--eps", String(eps),
          "--w-asr", String(wAsr)]);
        assert.equal(rows.length, cli.length, `k ${k} eps ${eps}`);
        for (const want of cli) {
          const got = rows.find((r) => r.protocol === want.protocol);
          assert.ok(got, `${want.protocol} missing at k ${k} eps ${eps}`);
          for (const key of ["asr", "mse", "bias", "bits", "epg"]) {
            if (want[key] === null || want[key] === undefined) {
              assert.equal(got[key], "", `${want.protocol}.${key}`);
              continue;
            }
            assert.ok(close(Number(got[key]), want[key]),
              `${want.protocol}.${key} at k ${k} eps ${eps}: page ${got[key]}, cli ${want[key]}`);
            compared++;
          }
          assert.equal(got.param ?? "", want.param === null ? "" : String(want.param), `${want.protocol}.param`);
          // A whole parameter is shown exactly: copied from the page, it is the same instance.
          if (Number.isInteger(want.param)) assert.equal(got.paramCell, String(want.param), `${want.protocol} param cell`);
        }
      }
    }
  }
  console.log(`table: ${compared} numbers equal the CLI's to 1e-12`);
});

test("the users behind the bias of fixed hashes move FLH's MSE as the tool's", async () => {
  await set({ k: 1000, eps: 1, "w-asr": 0.5, "asr-max": 0.5, "bias-users": 200000 });
  const rows = await page.$$eval("#table tbody tr", (trs) => trs.map((tr) => ({ ...tr.dataset })));
  const cli = ldpJson(["analyze", "--protocol", "flh,olh", "--k", "1000", "--eps", "1", "--bias-users", "200000"]);
  for (const want of cli) {
    const got = rows.find((r) => r.protocol === want.protocol);
    assert.ok(close(Number(got.mse), want.mse) && close(Number(got.bias), want.bias), `${want.protocol}`);
  }
  const [flh, olh] = ["flh", "olh"].map((p) => rows.find((r) => r.protocol === p));
  assert.ok(Number(flh.mse) > 1.8 * Number(olh.mse), `flh ${flh.mse} olh ${olh.mse}`);
  assert.match(await page.$eval("#cli-analyze", (e) => e.textContent), /--bias-users 200000/);
  await set({ "bias-users": 10000 });
});

test("the plot shows every protocol and marks the recommendation", async () => {
  await set({ k: 100, eps: 1, "w-asr": 0.5, "asr-max": 0.1 });
  const drawn = await page.$$eval("#plot [data-protocol]", (els) => [...new Set(els.map((e) => e.dataset.protocol))]);
  const rows = await page.$$eval("#table tbody tr", (trs) => trs.map((tr) => tr.dataset.protocol));
  assert.deepEqual([...drawn].sort(), [...rows].sort());
  const pick = await page.getAttribute("#recommendation", "data-protocol");
  assert.equal(await page.getAttribute("#plot circle.recommended", "data-protocol"), pick);
  // Hovering a point shows its numbers.
  await page.hover(`#plot g.classic circle[data-protocol=grr]`);
  const tip = await page.textContent("#tooltip");
  assert.match(tip, /^grr\nASR 0\.\d+\nMSE \d/);
});

test("the ASR axis has ticks at any scale", async () => {
  await set({ k: 100, eps: 1, "asr-max": 0.1 });
  const ticks = await page.evaluate(async () => {
    const { linearTicks } = await import("./plot.js");
    return [0.005, 0.03, 0.3, 1].map((hi) => linearTicks(hi));
  });
  assert.deepEqual(ticks[0], [0, 0.001, 0.002, 0.003, 0.004, 0.005]);
  assert.deepEqual(ticks[3], [0, 0.2, 0.4, 0.6, 0.8, 1]);
  for (const t of ticks) assert.ok(t.length >= 3 && t.length <= 7, JSON.stringify(t));
  // Drawn: every ASR below 0.01 still gets an axis worth reading.
  await set({ k: 100000, eps: 0.5, "asr-max": 0.1 });
  const shown = await page.$$eval("#plot text.asr-tick", (ts) => ts.map((t) => t.textContent));
  assert.ok(shown.length >= 3 && new Set(shown).size === shown.length, JSON.stringify(shown));
  await set({ k: 100, eps: 1 });
});

test("labels stay in the frame and off the markers and the ring", async () => {
  for (const s of [{ k: 100, eps: 1, "asr-max": 0.1 }, { k: 33, eps: 3.3, "asr-max": 0.15, "bits-max": 8 }, { k: 250, eps: 6, "bits-max": 32 }]) {
    await set({ "bits-max": null, ...s });
    const { frame, labels, marks } = await page.evaluate(() => {
      const box = (e) => { const b = e.getBBox(); return { x: b.x, y: b.y, w: b.width, h: b.height, text: e.textContent }; };
      return {
        frame: box(document.querySelector("#plot g.axes rect")),
        labels: [...document.querySelectorAll("#plot text.point-label, #plot text.frontier-label")].map(box),
        marks: [...document.querySelectorAll("#plot g.classic circle, #plot circle.recommended")].map(box),
      };
    });
    assert.ok(labels.length > 0);
    // Glyphs reach a pixel or two past the box the layout reserves: 2 px of slack.
    const inner = (b) => ({ ...b, x: b.x + 2, y: b.y + 2, w: b.w - 4, h: b.h - 4 });
    const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
    for (const l of labels.map(inner)) {
      assert.ok(l.x >= frame.x && l.y >= frame.y && l.x + l.w <= frame.x + frame.w && l.y + l.h <= frame.y + frame.h,
        `${JSON.stringify(s)}: ${l.text} leaves the frame`);
      for (const mk of marks) assert.ok(!overlap(l, mk), `${JSON.stringify(s)}: ${l.text} covers a marker`);
    }
  }
  await set({ k: 100, eps: 1, "asr-max": 0.1, "bits-max": null });
});

test("frontiers drawn over each other are named together", async () => {
  await set({ k: 100, eps: 1 });
  const text = await page.evaluate(async () => {
    const { draw } = await import("./plot.js");
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    document.body.append(svg);
    const line = [{ asr: 0.1, mse: 1 }, { asr: 0.05, mse: 3 }, { asr: 0.02, mse: 10 }];
    draw(svg, {
      points: [{ protocol: "grr", asr: 0.3, mse: 2 }],
      frontiers: [{ protocol: "aue", points: line }, { protocol: "alh", points: line.map((p) => ({ ...p, mse: p.mse * 1.001 })) },
        { protocol: "ass", points: [{ asr: 0.2, mse: 1 }, { asr: 0.15, mse: 5 }] }],
      pick: null,
    }, document.createElement("div"));
    const labels = [...svg.querySelectorAll("text.frontier-label")].map((t) => t.textContent);
    svg.remove();
    return labels;
  });
  assert.deepEqual(text.sort(), ["ASS", "AUE = ALH"]);
});

async function perturbInPage(protocol, values) {
  await page.selectOption("#try-protocol", protocol);
  await page.evaluate(() => { document.querySelector("#try details").open = true; });
  // Set at once: filling 2,000 lines through input events is slow and tests nothing more.
  await page.$eval("#batch-values", (el, text) => { el.value = text; }, values.join("\n"));
  await page.click("#batch-perturb");
  const reports = await page.inputValue("#batch-reports");
  const spec = JSON.parse(await page.textContent("#batch-spec"));
  return { reports, spec };
}

for (const protocol of ["oue", "olh", "grr"]) {
  test(`2,000 ${protocol} reports made in the page aggregate within 5 SE in ldp aggregate`, async () => {
    const k = 16, eps = 2, n = 2000;
    await set({ k, eps, "w-asr": 0.5, "asr-max": 0.5 });
    // A skewed population: item v held by about (v + 1) / 136 of the users.
    const values = Array.from({ length: n }, (_, i) => {
      let u = (i * 136) / n;
      let v = 0;
      while (u >= v + 1) { u -= v + 1; v++; }
      return v;
    });
    const { reports, spec } = await perturbInPage(protocol, values);
    assert.equal(spec.k, k);
    assert.equal(spec.eps, eps);
    assert.equal(reports.split("\n").filter(Boolean).length, n);
    // `--on-invalid refuse` (the default): one malformed report fails the command.
    const csv = ldp(["aggregate", "--protocol", protocol, "--k", String(k), "--eps", String(eps)], reports);
    const estimates = csv.trim().split("\n").slice(1).map((l) => Number(l.split(",")[1]));
    assert.equal(estimates.length, k);
    // The exact variance of item v's estimate, for a pure protocol's (p, q) and the
    // population's share f_v: (q (1 - q) + f_v (p - q) (1 - p - q)) / (n (p - q)^2).
    // The reports come from the CSPRNG, unseeded, as a visitor's do: the bound is 5 SE, which
    // one of the 48 items over the three tests passes by chance in about 1 run of 36,000
    // (at 4 SE it was 1 in 330).
    const e = Math.exp(eps);
    const g = Math.round(e + 1); // OLH's hash range
    const [p, q] = { grr: [e / (e + k - 1), 1 / (e + k - 1)], oue: [0.5, 1 / (e + 1)], olh: [e / (e + g - 1), 1 / g] }[protocol];
    const [row] = ldpJson(["analyze", "--protocol", protocol, "--k", String(k), "--eps", String(eps)]);
    assert.ok(Math.abs(row.mse - q * (1 - q) / (p - q) ** 2) < 1e-9 * row.mse, "the (p, q) used here are the CLI's");
    let worst = 0;
    for (let v = 0; v < k; v++) {
      const f = values.filter((x) => x === v).length / n;
      const se = Math.sqrt((q * (1 - q) + f * (p - q) * (1 - p - q)) / (n * (p - q) ** 2));
      worst = Math.max(worst, Math.abs(estimates[v] - f) / se);
    }
    console.log(`${protocol}: the largest error is ${worst.toFixed(2)} SE over ${k} items`);
    assert.ok(worst < 5, `${worst} SE`);
  });
}

test("try it: a report, the attacker's guess, and the measured ASR beside its closed form", async () => {
  await set({ k: 100, eps: 1, "w-asr": 0.5, "asr-max": 0.1 });
  await page.selectOption("#try-protocol", "grr");
  await page.fill("#try-value", "42");
  await page.click("#try-perturb");
  const report = JSON.parse(await page.textContent("#try-report"));
  assert.ok(Number.isInteger(report.y) && report.y >= 0 && report.y < 100);
  const guess = Number(await page.textContent("#try-guess"));
  assert.equal(guess, report.y, "GRR's attacker guesses the reported item");
  await page.click("#try-measure");
  await page.waitForSelector("#try-asr[data-asr]");
  const m = await page.evaluate(() => ({ ...document.getElementById("try-asr").dataset }));
  const [cli] = ldpJson(["analyze", "--protocol", "grr", "--k", "100", "--eps", "1"]);
  assert.ok(close(Number(m.expected), cli.asr));
  assert.ok(Math.abs(Number(m.asr) - cli.asr) < 5 * Number(m.se), JSON.stringify(m));
});

test("the shuffle box equals ldp shuffle, and names a bad setting", async () => {
  for (const [users, delta, eps] of [[1000000, 1e-8, 1], [50000, 1e-6, 4]]) {
    await set({ eps, "shuffle-users": users, "shuffle-delta": delta });
    const box = await page.evaluate(() => ({ ...document.getElementById("shuffle-answer").dataset }));
    const args = ["shuffle", "--users", String(users), "--delta", String(delta)];
    const [forward] = ldpJson([...args, "--eps0", String(eps)]);
    const [inverse] = ldpJson([...args, "--central-eps", String(eps)]);
    assert.equal(box.state, "ready");
    assert.ok(close(Number(box.central), forward.central_eps), JSON.stringify([box, forward]));
    assert.ok(close(Number(box.eps0Max), inverse.eps0_max), JSON.stringify([box, inverse]));
    assert.equal(await page.textContent("#cli-shuffle"), `ldp ${args.join(" ")} --eps0 ${eps}`);
  }
  await set({ "shuffle-users": 1 });
  assert.equal(await page.getAttribute("#shuffle-answer", "data-state"), "error");
  assert.equal(await page.textContent("#cli-shuffle"), "");
  assert.match(await page.textContent("#shuffle-answer"), /ParamError: a shuffle needs at least 2 reports, got 1/);
  await set({ "shuffle-users": 1000000, "shuffle-delta": null });
  assert.match(await page.textContent("#shuffle-answer"), /give n, δ and ε/);
  await set({ "shuffle-delta": 1e-8 });
  assert.deepEqual(page.errors, []);
});

test("bad input is said, not thrown away", async () => {
  await set({ k: 1e6 });
  assert.match(await page.textContent("#status"), /the page answers up to k = 100,000/);
  await set({ k: 1.5 });
  assert.match(await page.textContent("#status"), /ParamError: k: expected a whole number/);
  await set({ k: 100, eps: 1, "asr-max": null, "bits-max": null });
  assert.equal(await page.getAttribute("#recommendation", "data-state"), "none");
  assert.match(await page.textContent("#recommendation"), /give an ASR or a size bound/);
  await set({ "asr-max": 1e-9 });
  assert.match(await page.textContent("#recommendation"), /lowest asr any instance reaches/);
  assert.deepEqual(page.errors, []);
});

test("the recommendation is one instance: its row, its point, and what try it perturbs", async () => {
  // Where the table's instance of the recommended protocol is another (HR's blocks under a
  // size bound; ASS tuned under bounds rather than weights).
  for (const [settings, protocol] of [
    [{ k: 33, eps: 3.3, "asr-max": 0.15, "bits-max": 8 }, "hr"],
    [{ k: 250, eps: 6, "asr-max": 0.1, "bits-max": 32 }, null],
  ]) {
    // A fresh load: "try it" follows the recommendation until the visitor picks another.
    await page.goto(server.url);
    await page.waitForSelector("body[data-ready=true]");
    await set({ "w-asr": 0.5, ...settings });
    const rec = await page.evaluate(() => ({ ...document.getElementById("recommendation").dataset }));
    assert.equal(rec.state, "ready");
    if (protocol) assert.equal(rec.protocol, protocol);
    const marked = await page.$$eval("#table tbody tr.recommended", (trs) => trs.map((tr) => ({ ...tr.dataset })));
    assert.equal(marked.length, 1);
    assert.equal(marked[0].protocol, rec.protocol);
    assert.ok(close(Number(marked[0].asr), Number(rec.asr)), `row ${marked[0].asr} vs ${rec.asr}`);
    assert.ok(close(Number(marked[0].mse), Number(rec.mse)));
    // The default of "try it" and "perturb many values" is the recommended instance.
    await page.evaluate(() => { document.querySelector("#try details").open = true; });
    await page.$eval("#batch-values", (el) => { el.value = "0\n1"; });
    await page.click("#batch-perturb");
    assert.deepEqual(JSON.parse(await page.textContent("#batch-spec")), JSON.parse(rec.spec));
    // The ring sits on a drawn point of that protocol.
    const ring = await page.$eval("#plot circle.recommended", (c) => [Number(c.getAttribute("cx")), Number(c.getAttribute("cy"))]);
    const under = await page.$$eval(`#plot [data-protocol=${rec.protocol}]:not(.recommended)`, (cs) =>
      cs.filter((c) => c.tagName === "circle").map((c) => [Number(c.getAttribute("cx")), Number(c.getAttribute("cy"))]));
    assert.ok(under.some(([x, y]) => Math.hypot(x - ring[0], y - ring[1]) < 3), `ring ${ring} on none of ${under.length} points`);
  }
  await set({ "bits-max": null, "asr-max": 0.1 });
});

test("bad input clears the answer and the command lines", async () => {
  await set({ k: 100, eps: 1, "asr-max": 0.1 });
  assert.notEqual(await page.textContent("#cli-tune"), "");
  for (const [k, said] of [[null, /k: give the domain size/], [1.5, /k: expected a whole number of at least 2, got 1.5/], [1, /got 1$/]]) {
    await set({ k });
    assert.match(await page.textContent("#status"), said);
    assert.equal(await page.textContent("#cli-tune"), "");
    assert.equal(await page.textContent("#cli-analyze"), "");
    assert.equal(await page.$$eval("#table tbody tr", (trs) => trs.length), 0);
    assert.equal(await page.getAttribute("#recommendation", "data-state"), "error");
  }
  await page.click("#try-perturb");
  assert.match(await page.textContent("#status"), /ParamError: no answer to try/);
  await set({ k: 100, eps: null });
  assert.match(await page.textContent("#status"), /ε: give the privacy budget/);
  assert.equal(await page.textContent("#cli-tune"), "");
  await set({ eps: 1 });
  assert.match(await page.textContent("#cli-tune"), /--k 100 --eps 1/);
});

test("try it keeps a value the domain holds", async () => {
  await set({ k: 100, eps: 1, "asr-max": 0.1 });
  await page.fill("#try-value", "42");
  await set({ k: 10 });
  assert.equal(await page.inputValue("#try-value"), "9");
  await page.click("#try-perturb");
  assert.notEqual(await page.textContent("#try-report"), "–");
  assert.doesNotMatch(await page.textContent("#status"), /Error/);
  await set({ k: 100 });
});

// Loads `files` ({ name, buffer } or a path) through the file input and waits for the page
// to say what it read.
async function loadTable(file) {
  await loaded();
  const before = await page.evaluate(() => Number(document.body.dataset.tables ?? 0));
  await page.setInputFiles("#own-file", file);
  await page.waitForFunction((n) => Number(document.body.dataset.tables ?? 0) > n, before);
  return { state: await page.getAttribute("#own-status", "data-state"), text: await page.textContent("#own-status") };
}

// The page, loaded once (a test run alone starts from a blank tab).
async function loaded() {
  if (!page.url().startsWith(server.url)) {
    await page.goto(server.url);
    await page.waitForSelector("body[data-ready=true]");
  }
}

const csv = (name, text) => ({ name, mimeType: "text/csv", buffer: Buffer.from(text) });

// Selects column `index` of the loaded table and waits for its domain.
async function column(index) {
  const before = await page.evaluate(() => Number(document.body.dataset.domains ?? 0));
  await page.selectOption("#own-column", index);
  await page.waitForFunction((n) => Number(document.body.dataset.domains ?? 0) > n, before);
}

test("a table loaded through the file input: its column is the domain, and nothing leaves the page", async () => {
  await set({ k: 100, eps: 1, "asr-max": 0.1 });
  // What the page asks for once loaded: its own table reader at most, never with data.
  const requests = [];
  const listen = (r) => {
    if (r.url().startsWith("blob:")) return;
    const own = r.method() === "GET" && !r.postData() && /^\/table(-worker)?\.js$/.test(r.url().slice(server.url.length - 1));
    if (!(r.url().startsWith(server.url) && own)) requests.push(`${r.method()} ${r.url()}`);
  };
  page.on("request", listen);
  // An id column (skipped: every value distinct), a skewed colour with a quoted label and
  // an empty cell, and a number column.
  const colours = ["red", "blue", "\"green, light\"", "red", "red", "blue", "", "grey"];
  let text = "id,colour,age\n";
  for (let i = 0; i < 400; i += 1) text += `u${i},${colours[i % colours.length]},${20 + (i % 7)}\n`;
  const { state, text: said } = await loadTable(csv("survey.csv", text));
  assert.equal(state, "ready", said);
  assert.equal(await page.inputValue("#own-column"), "1");
  assert.match(said, /400 rows \(csv\); column colour: 4 distinct values, k = 4 over 350 values\. 50 empty cells left out\./);
  const bars = await page.$$eval("#own-hist .bar", (rows) => rows.map((r) => [r.dataset.label, Number(r.dataset.count)]));
  assert.deepEqual(bars, [["red", 150], ["blue", 100], ["green, light", 50], ["grey", 50]]);
  // The id column says what it is.
  await column("0");
  assert.match(await page.textContent("#own-status"), /every value is distinct: column id looks like an id/i);
  await column("1");
  // The answer for the column's k, then its values perturbed by the protocol under "try it".
  const renders = await page.evaluate(() => Number(document.body.dataset.renders ?? 0));
  await page.click("#own-use");
  await page.waitForFunction((n) => Number(document.body.dataset.renders ?? 0) > n, renders);
  assert.equal(await page.inputValue("#k"), "4");
  await page.selectOption("#try-protocol", "grr");
  await page.click("#own-perturb");
  await page.waitForSelector("#own-reports:not([hidden])");
  const [reports, labels, spec] = await page.evaluate(async () => {
    const get = async (id) => (await fetch(document.getElementById(id).href)).text();
    return [await get("own-reports"), await get("own-labels"), document.getElementById("own-reports").dataset.spec];
  });
  assert.equal(reports.trim().split("\n").length, 350);
  assert.deepEqual(JSON.parse(labels), { column: "colour", labels: ["red", "blue", "green, light", "grey"], other: null });
  // The reports aggregate in the tool with the spec the page names.
  const s = JSON.parse(spec);
  const out = ldp(["aggregate", "--protocol", "grr", "--k", String(s.k), "--eps", String(s.eps)], reports);
  assert.equal(out.trim().split("\n").length, 5);
  page.off("request", listen);
  assert.deepEqual(requests, [], "the page asked the network for something");
  assert.deepEqual(page.errors, []);
  await set({ k: 100 });
});

test("a table dropped on the box is read as one chosen", async () => {
  await loaded();
  const before = await page.evaluate(() => Number(document.body.dataset.tables ?? 0));
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.items.add(new File(["fruit\tn\napple\t1\npear\t2\napple\t3\n"], "fruit.tsv", { type: "text/tab-separated-values" }));
    const box = document.getElementById("own-drop");
    box.dispatchEvent(new DragEvent("dragover", { dataTransfer: data, bubbles: true, cancelable: true }));
    box.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
  });
  await page.waitForFunction((n) => Number(document.body.dataset.tables ?? 0) > n, before);
  const said = await page.textContent("#own-status");
  assert.match(said, /fruit\.tsv: 3 rows \(tsv\); column fruit: 2 distinct values, k = 2 over 3 values\./);
  const bars = await page.$$eval("#own-hist .bar", (rows) => rows.map((r) => [r.dataset.label, Number(r.dataset.count)]));
  assert.deepEqual(bars, [["apple", 2], ["pear", 1]]);
});

test("a column of many values keeps the k most frequent and shares the rest", async () => {
  // 10^6 distinct values: the page answers with k at most 1000 and says what it merged.
  let text = "v\n";
  for (let i = 0; i < 1_000_000; i += 1) text += `${i}\n`;
  for (let i = 0; i < 2000; i += 1) text += `${i % 3}\n`;
  await loaded();
  const started = Date.now();
  const before = await page.evaluate(() => Number(document.body.dataset.tables ?? 0));
  await page.setInputFiles("#own-file", csv("many.csv", text));
  // The tab answers while the worker reads the file.
  const asked = Date.now();
  assert.equal(await page.getAttribute("#own-status", "data-state"), "loading");
  const lag = Date.now() - asked;
  assert.ok(lag < 250, `the page took ${lag} ms to answer while reading`);
  await page.waitForFunction((n) => Number(document.body.dataset.tables ?? 0) > n, before);
  const [state, said] = [await page.getAttribute("#own-status", "data-state"), await page.textContent("#own-status")];
  assert.equal(state, "ready", said);
  assert.match(said, /1,000,000 distinct values, k = 1,000 over 1,002,000 values\. 999,001 rarer values \(999,001 rows\) share the item "\(other\)"/);
  console.log(`page: 10^6 distinct values read in ${Date.now() - started} ms`);
  await page.fill("#own-kmax", "3");
  await page.waitForFunction(() => document.getElementById("own-status").dataset.k === "3");
  const bars = await page.$$eval("#own-hist .bar", (rows) => rows.map((r) => r.dataset.label));
  assert.deepEqual(bars, ["0", "1", "(other)"]);
});

test("bad tables get a message on the page", async () => {
  const cases = [
    [csv("empty.csv", ""), /empty\.csv is empty/],
    [{ name: "latin1.csv", mimeType: "text/csv", buffer: Buffer.from([0x61, 0x0a, 0x62, 0xe9, 0x0a]) }, /latin1\.csv is not UTF-8 text \(near byte [34]\)/],
    [csv("header.csv", "a,b\n"), /has a header but no rows/],
    [csv("ragged.csv", "a,b\n1,2\n3\n"), /line 3: 1 fields, but the header names 2/],
    [csv("open.csv", "a,b\n1,\"2\n"), /a quoted field is never closed/],
    [csv("one.csv", "a\nx\nx\n"), /column a holds one value \(x\): nothing to estimate/],
    [{ name: "rows.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from("{\"a\":1}\n[2]\n") }, /line 2: a row is a JSON object/],
  ];
  for (const [file, message] of cases) {
    const { state, text } = await loadTable(file);
    assert.equal(state, "error", `${file.name}: ${text}`);
    assert.match(text, message);
    assert.equal(await page.isDisabled("#own-perturb"), true, file.name);
  }
  // Numbers and text mixed: read as labels, and said.
  const { state, text } = await loadTable(csv("mixed.csv", "a\n1\nx\n2\n1\n"));
  assert.equal(state, "ready", text);
  assert.match(text, /numbers and text mixed: every value is read as a label/i);
  // A file over the page's limit is refused before it is read (a sparse file on disk).
  const big = path.join(os.tmpdir(), `ldp-page-${process.pid}.csv`);
  fs.writeFileSync(big, "a\n");
  fs.truncateSync(big, 200 * 1024 * 1024);
  try {
    const { state: s2, text: t2 } = await loadTable(big);
    assert.equal(s2, "error");
    assert.match(t2, /is 200 MB; the page reads up to 64 MB/);
  } finally {
    fs.rmSync(big);
  }
  assert.deepEqual(page.errors, []);
});

test("a phone's width: nothing runs off the right edge", async () => {
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await phone.goto(server.url);
  await phone.waitForSelector("body[data-ready=true]");
  const wide = await phone.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(wide <= 390, `the page is ${wide} px wide at 390`);
  if (SCREENSHOT) await phone.screenshot({ path: SCREENSHOT.replace(/\.png$/, "-phone.png"), fullPage: true });
  await phone.close();
});

test("a screenshot of the page", { skip: !SCREENSHOT && "LDP_SCREENSHOT is not set" }, async () => {
  // A fresh load: the page as a visitor first sees it (try it on the recommendation), after
  // one "Perturb".
  await page.goto(server.url);
  await page.waitForSelector("body[data-ready=true]");
  await page.click("#try-perturb");
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
});

// Starts "Measure every protocol" with these fields and waits for its outcome.
async function measureAll({ eps, runs, seed, linked = "" }) {
  await page.fill("#measure-eps", eps);
  await page.fill("#measure-runs", String(runs));
  await page.fill("#measure-seed", String(seed));
  await page.fill("#measure-linked", String(linked));
  const before = await page.evaluate(() => Number(document.body.dataset.measures ?? 0));
  await page.click("#measure-start");
  return before;
}

async function measured(before) {
  await page.waitForFunction((n) => Number(document.body.dataset.measures ?? 0) > n, before, { timeout: 600_000 });
  return { state: await page.getAttribute("#measure-status", "data-state"), text: await page.textContent("#measure-status") };
}

test("every protocol measured on the table gives the numbers of `ldp simulate`", async () => {
  // A size bound the front may not honour: the recommendation is the lowest measured MSE
  // within both bounds, on the front or not.
  await set({ k: 100, eps: 1, "asr-max": 0.5, "bits-max": 4 });
  const requests = [];
  const listen = (r) => {
    if (r.url().startsWith("blob:")) return;
    const path = r.url().slice(server.url.length - 1);
    const own = r.method() === "GET" && !r.postData() &&
      /^\/(table(-worker)?|measure(-worker)?)\.js$|^\/pkg\/ldp_(wasm|measure)(_bg\.wasm|\.js)$/.test(path);
    if (!(r.url().startsWith(server.url) && own)) requests.push(`${r.method()} ${r.url()}`);
  };
  page.on("request", listen);
  // A skewed column of six values (ties included), 3,000 rows.
  const weights = [9, 6, 4, 4, 2, 1];
  let text = "city\n";
  for (let i = 0; i < 3000; i += 1) text += `c${weights.findIndex((_, j) => i % 26 < weights.slice(0, j + 1).reduce((s, w) => s + w, 0))}\n`;
  await loaded();
  await page.fill("#own-kmax", "1000");
  const { state, text: said } = await loadTable(csv("cities.csv", text));
  assert.equal(state, "ready", said);
  assert.equal(await page.getAttribute("#own-status", "data-k"), "6");
  const before = await measureAll({ eps: "4, 1", runs: 3, seed: 7, linked: 5 });
  const outcome = await measured(before);
  assert.equal(outcome.state, "ready", outcome.text);
  assert.match(outcome.text, /Measured \d+ instances at 2 budgets, 3 runs each/);
  const rows = await page.$$eval("#measure-table tbody tr", (trs) => trs.map((tr) => ({ ...tr.dataset })));
  const good = rows.filter((r) => r.mse !== undefined);
  // Every protocol of the registry at both budgets; each row is one instance.
  const registry = new Set(rows.map((r) => r.protocol));
  assert.ok(registry.size >= 17, JSON.stringify([...registry]));
  assert.equal(rows.length, 2 * registry.size);
  assert.ok(good.length >= 2 * 15, `${good.length} rows measured`);
  const items = await page.evaluate(async () => (await fetch(document.getElementById("own-items").href)).text());
  assert.equal(items.trim().split("\n").length, 3000);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ldp-measure-")), "items.txt");
  fs.writeFileSync(file, items);
  // The seeds map one to one: each row is `ldp simulate` of its exported spec with --seed 7.
  const dir = path.dirname(file);
  for (const [i, r] of good.entries()) {
    const spec = path.join(dir, `spec${i}.json`);
    fs.writeFileSync(spec, r.spec);
    const [cli] = ldpJson(["simulate", "--spec", spec, "--items", file, "--runs", "3", "--seed", "7",
      "--attack", "map", "--prior-from-data"]);
    for (const [mine, theirs] of [["mse", "mse"], ["asr", "asr"], ["kl", "kl"], ["rankCorr", "rank_corr"]]) {
      assert.ok(close(Number(r[mine]), cli[theirs]), `${r.protocol} at eps ${r.eps}: ${mine} ${r[mine]} vs ${cli[theirs]}`);
    }
    // The attack on 5 linked reports: `ldp simulate --collections 5`.
    const [after] = ldpJson(["simulate", "--spec", spec, "--items", file, "--runs", "3", "--seed", "7", "--collections", "5"]);
    assert.equal(after.collections, 5);
    assert.ok(close(Number(r.linkedAsr), after.asr), `${r.protocol} at eps ${r.eps}: after 5 linked ${r.linkedAsr} vs ${after.asr}`);
    assert.ok(close(Number(r.linkedAsrSe), after.asr_se), `${r.protocol}: its SE ${r.linkedAsrSe} vs ${after.asr_se}`);
    // Its closed form, where there is one ("null" where the CLI leaves it empty).
    assert.ok(after.asr_expected === null ? r.linkedAsrExpected === "null" : close(Number(r.linkedAsrExpected), after.asr_expected),
      `${r.protocol}: closed form ${r.linkedAsrExpected} vs ${after.asr_expected}`);
  }
  // The command line the page shows reads the recommended row's spec.json as downloaded.
  const line = await page.textContent("#cli-measure");
  const [, name] = line.match(/^ldp simulate --spec (\S+) --items items\.txt --runs 3 --seed 7 --attack map --prior-from-data$/);
  const exported = await page.evaluate(async (n) => {
    const link = [...document.querySelectorAll("#measure-table a")].find((a) => a.download === n);
    return (await fetch(link.href)).text();
  }, name);
  fs.writeFileSync(path.join(dir, name), exported);
  assert.equal(await page.textContent("#cli-linked"),
    `ldp simulate --spec ${name} --items items.txt --runs 3 --seed 7 --collections 5`);
  // It drives the tool's client and server unchanged: reports of the column, estimated.
  const reports = ldp(["perturb", "--spec", path.join(dir, name), "--seed", "5"], items);
  const estimate = ldp(["aggregate", "--spec", path.join(dir, name)], reports);
  assert.equal(estimate.trim().split("\n").length, 1 + 6, estimate);
  // At each budget the front is marked, and the recommendation lies on it within the bound.
  for (const eps of ["1", "4"]) {
    const at = good.filter((r) => r.eps === eps);
    const onFront = at.filter((r) => r.front === "true");
    assert.ok(onFront.length >= 1);
    for (const a of onFront) {
      assert.ok(!at.some((b) => Number(b.mse) < Number(a.mse) && Number(b.asr) < Number(a.asr)), `${a.protocol} is dominated`);
    }
    const picks = at.filter((r) => r.recommended === "true");
    assert.equal(picks.length, 1, `eps ${eps}: one recommendation`);
    const [pick] = picks;
    const meets = (r) => Number(r.asr) <= 0.5 && Number(r.bits) <= 4;
    assert.ok(meets(pick), JSON.stringify(pick));
    assert.ok(!at.some((r) => meets(r) && Number(r.mse) < Number(pick.mse)));
  }
  // The plot of the measured rows: first at the recommendation's budget (the last with
  // one), then at each budget chosen: a point per measured row, the front a line through
  // exactly its rows' points, the ring on the recommended row's point.
  assert.equal(await page.isHidden("#measure-figure"), false);
  assert.deepEqual(await page.$$eval("#measure-plot-eps option", (os) => os.map((o) => o.value)), ["1", "4"]);
  assert.equal(await page.inputValue("#measure-plot-eps"), "4");
  for (const eps of ["1", "4"]) {
    await page.selectOption("#measure-plot-eps", eps);
    const drawn = await page.evaluate(() => {
      const svg = document.getElementById("measure-plot");
      const xy = (c) => [Number(c.getAttribute("cx")), Number(c.getAttribute("cy"))];
      return {
        points: [...svg.querySelectorAll(".classic circle")].map((c) => ({ protocol: c.dataset.protocol, xy: xy(c) })),
        line: svg.querySelector(".frontier polyline").getAttribute("points").split(" ").map((p) => p.split(",").map(Number)),
        frontMarkers: svg.querySelectorAll(".frontier circle").length,
        ring: xy(svg.querySelector("circle.recommended")),
        bands: [...svg.querySelectorAll(".bands line")].map((l) => l.dataset.protocol),
        label: svg.querySelector(".frontier-label").textContent,
      };
    });
    const at = good.filter((r) => r.eps === eps);
    assert.deepEqual(drawn.points.map((p) => p.protocol).sort(), at.map((r) => r.protocol).sort(), `eps ${eps}`);
    const where = (protocol) => drawn.points.find((p) => p.protocol === protocol).xy;
    const onFront = at.filter((r) => r.front === "true").map((r) => where(r.protocol)).sort((a, b) => a[0] - b[0]);
    assert.deepEqual(drawn.line, onFront, `eps ${eps}: the front's line`);
    assert.equal(drawn.frontMarkers, 0);
    assert.equal(drawn.label, "measured front");
    assert.deepEqual(drawn.ring, where(at.find((r) => r.recommended === "true").protocol), `eps ${eps}: the ring`);
    // Each row's MSE band at least (3 runs never agree to the last bit on an MSE).
    for (const r of at) assert.ok(drawn.bands.includes(r.protocol), `eps ${eps}: ${r.protocol} has no band`);
  }
  page.off("request", listen);
  assert.deepEqual(requests, [], "the page asked the network for something");
  // Another column: nothing measured on this one stays on screen.
  await column("0");
  assert.equal(await page.$$eval("#measure-table tbody tr", (trs) => trs.length), 0);
  assert.equal(await page.isHidden("#measure-figure"), true);
  assert.equal(await page.isHidden("#own-items"), true);
  assert.equal(await page.textContent("#cli-measure"), "");
  assert.equal(await page.isHidden("#cli-linked-line"), true);
  assert.deepEqual(page.errors, []);
});

test("a measurement can be cancelled, and the page answers meanwhile", async () => {
  let text = "v\n";
  for (let i = 0; i < 40_000; i += 1) text += `${(i * i) % 37}\n`;
  const { state } = await loadTable(csv("squares.csv", text));
  assert.equal(state, "ready");
  const before = await measureAll({ eps: "0.5,1,2,4,8", runs: 50, seed: 1 });
  await page.waitForFunction(() => document.getElementById("measure-status").dataset.state === "running");
  // The bar moves within an instance, run by run, not only when one ends.
  await page.waitForFunction(() => document.getElementById("measure-progress").value % 1 !== 0, null, { timeout: 60_000 });
  const asked = Date.now();
  await page.fill("#eps", "2");
  const lag = Date.now() - asked;
  assert.ok(lag < 250, `the page took ${lag} ms to answer while measuring`);
  await page.click("#measure-cancel");
  const outcome = await measured(before);
  assert.equal(outcome.state, "cancelled", outcome.text);
  assert.match(outcome.text, /Cancelled after \d+ of \d+ instances\./);
  assert.equal(await page.isDisabled("#measure-start"), false);
  // Bad settings get a message, not a measurement.
  const again = await measureAll({ eps: "1, -2", runs: 20, seed: 1 });
  const refused = await measured(again);
  assert.equal(refused.state, "error");
  assert.match(refused.text, /budgets: expected numbers above 0, got -2/);
  const tooMany = await measureAll({ eps: "1", runs: 2, seed: 1, linked: 20_000 });
  const refusedT = await measured(tooMany);
  assert.equal(refusedT.state, "error");
  assert.match(refusedT.text, /linked: at most 10,000 reports, got 20000/);
});

// A benchmark, not a check: it takes minutes on two cores, so it runs when asked
// (LDP_WEB_BENCH=1; LDP_ADULT_EPS=1,2 for other budgets) and prints where the time goes.
const bench = process.env.LDP_WEB_BENCH ? false : "a benchmark: set LDP_WEB_BENCH=1 to run it";

test("the answer's time at k = 100,000", { skip: bench }, async () => {
  const times = [];
  for (const eps of [1, 2, 4]) {
    await set({ k: 100000, eps, "asr-max": 0.1, "bits-max": null });
    times.push(Number(await page.evaluate(() => document.body.dataset.renderMs)));
  }
  assert.equal(await page.getAttribute("#recommendation", "data-state"), "ready");
  console.log(`page: answered k = 100,000 at eps = 1, 2, 4 in ${times.join(", ")} ms`);
});

test("Adult's size: 45,222 rows x every protocol x 10 budgets x 20 runs", { skip: bench }, async () => {
  // Adult's education column (k = 16: its counts in the 45,222 complete rows that
  // ldp-attack ships); the page's cost depends on the rows, the domain and the skew,
  // not on the labels.
  const shares = [14783, 9899, 7570, 2514, 1959, 1619, 1507, 1223, 823, 785, 676, 577, 544, 449, 222, 72];
  assert.equal(shares.reduce((s, c) => s + c, 0), 45222);
  const rows = shares.flatMap((c, i) => Array(c).fill(`level${i}`));
  // Shuffled by a fixed permutation, as rows arrive.
  for (let i = rows.length - 1; i > 0; i -= 1) {
    const j = (i * 7919) % (i + 1);
    [rows[i], rows[j]] = [rows[j], rows[i]];
  }
  const { state } = await loadTable(csv("adult-education.csv", `education\n${rows.join("\n")}\n`));
  assert.equal(state, "ready");
  await set({ "asr-max": null, "bits-max": null });
  const before = await measureAll({ eps: process.env.LDP_ADULT_EPS ?? "0.5,1,1.5,2,2.5,3,4,5,6,8", runs: 20, seed: 1 });
  const outcome = await measured(before);
  assert.equal(outcome.state, "ready", outcome.text);
  const ms = Number(await page.evaluate(() => document.body.dataset.measureMs));
  const count = await page.$$eval("#measure-table tbody tr[data-mse]", (trs) => trs.length);
  console.log(`page: ${count} instances x 20 runs x 45,222 users measured in ${ms} ms (${outcome.text})`);
  const spent = await page.$$eval("#measure-table tbody tr[data-mse]", (trs) => trs.map((tr) => [tr.dataset.protocol, Number(tr.dataset.ms)]));
  const by = {};
  for (const [p, t] of spent) by[p] = (by[p] ?? 0) + t;
  console.log(`page: ms per protocol over the budgets: ${JSON.stringify(Object.entries(by).sort((a, b) => b[1] - a[1]))}`);
  const budgets = (process.env.LDP_ADULT_EPS ?? "0.5,1,1.5,2,2.5,3,4,5,6,8").split(",").length;
  assert.ok(count >= 17 * budgets, `${count} instances measured`);
});

test("several columns: each solution equals `ldp simulate --dataset`, beside the table's re-identification risk", async () => {
  await loaded();
  // Three columns of 1,500 rows, one with empty cells (those rows are left out), and an
  // id column that is not chosen.
  const rows = [];
  for (let i = 0; i < 1500; i += 1) {
    rows.push([`u${i}`, ["F", "M"][i % 2], ["18-30", "31-50", "51+", ""][(i * 7) % 4 === 3 && i % 5 ? 0 : (i * 7) % 4],
      ["Lyon", "Paris", "Nice", "Lille", "Brest"][(i * i) % 5]]);
  }
  const text = "id,sex,age,city\n" + rows.map((r) => r.join(",")).join("\n") + "\n";
  const { state } = await loadTable(csv("people.csv", text));
  assert.equal(state, "ready");
  for (const name of ["sex", "age", "city"]) {
    await page.check(`#several-columns label:has-text("${name}") input`);
  }
  await page.selectOption("#several-protocol", "oue");
  await page.fill("#several-eps", "4");
  await page.fill("#several-runs", "3");
  await page.fill("#several-seed", "2");
  const before = await page.evaluate(() => Number(document.body.dataset.severals ?? 0));
  await page.click("#several-start");
  await page.waitForFunction((n) => Number(document.body.dataset.severals ?? 0) > n, before, { timeout: 120_000 });
  const said = await page.textContent("#several-status");
  assert.equal(await page.getAttribute("#several-status", "data-state"), "ready", said);
  // The risk, counted here: rows with every chosen cell filled, unique on the three.
  const kept = rows.filter((r) => r[2] !== "");
  const groups = new Map();
  for (const r of kept) groups.set(r.slice(1).join("|"), (groups.get(r.slice(1).join("|")) ?? 0) + 1);
  const unique = [...groups.values()].filter((c) => c === 1).length / kept.length;
  assert.ok(close(Number(await page.getAttribute("#several-status", "data-unique")), unique));
  assert.match(said, new RegExp(`sex, age, city over ${kept.length.toLocaleString("en")} rows \\(${(1500 - kept.length).toLocaleString("en")} with an empty cell left out\\)`));
  const columns = await page.evaluate(async () => (await fetch(document.getElementById("several-csv").href)).text());
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ldp-several-")), "columns.csv");
  fs.writeFileSync(file, columns);
  const results = await page.$$eval("#several-table tbody tr", (trs) => trs.map((tr) => [tr.dataset.solution, tr.dataset.result]));
  assert.deepEqual(results.map(([s]) => s), ["spl", "smp", "rsfd", "rsfd-z", "rsrfd"]);
  for (const [solution, result] of results) {
    assert.ok(result, `${solution} failed: ${await page.textContent(`#several-table tr[data-solution="${solution}"]`)}`);
    const m = JSON.parse(result);
    const prior = solution === "rsrfd" ? ["--prior-from-data"] : [];
    const cli = ldpJson(["simulate", "--dataset", file, "--solution", solution, "--protocol", "oue", "--eps", "4",
      "--runs", "3", "--seed", "2", ...prior]);
    assert.equal(cli.length, 3);
    cli.forEach((row, j) => {
      const a = m.attributes[j];
      assert.equal(a.attribute, row.attribute);
      for (const key of ["mse", "asr"]) assert.ok(close(a[key], row[key]), `${solution} ${row.attribute} ${key}: ${a[key]} vs ${row[key]}`);
      assert.ok(close(m.joint_asr, row.joint_asr), `${solution} joint`);
      // The attribute-inference attacker compares posteriors made with exp and ln, which
      // the browser's math library and the system's round differently in the last place:
      // a near tie may fall the other way, for a few of the 1,710 users a run.
      if (row.inference === null) assert.equal(m.inference, null);
      else assert.ok(Math.abs(m.inference - row.inference) < 0.005, `${solution} inference: ${m.inference} vs ${row.inference}`);
    });
  }
  assert.deepEqual(page.errors, []);
});
