// The built module under Node: seeded reports equal `ldp perturb --seed` for every
// protocol, and no randomness comes from Math.random.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WEB_DIR, close, ldp } from "./support.mjs";

const glue = await import(join(WEB_DIR, "pkg", "ldp_wasm.js"));
glue.initSync({ module: readFileSync(join(WEB_DIR, "pkg", "ldp_wasm_bg.wasm")) });
// The measuring workers' module: the page's, and the measurement.
const measuring = await import(join(WEB_DIR, "pkg", "ldp_measure.js"));
measuring.initSync({ module: readFileSync(join(WEB_DIR, "pkg", "ldp_measure_bg.wasm")) });

// Every protocol the CLI knows, from its own help.
const PROTOCOLS = ["grr", "ss", "sue", "oue", "blh", "olh", "she", "the", "ass", "aue", "alh",
  "athe", "hr", "hm", "flh", "cms", "hcms", "dbitflip"];

// 5,000 users cross a batch boundary of the seeded streams (4,096 users per batch).
const items = Array.from({ length: 5000 }, (_, i) => (i * 37) % 64);

for (const protocol of PROTOCOLS) {
  test(`seeded ${protocol} reports equal ldp perturb --seed`, () => {
    const k = 64, eps = 2, seed = 20261127;
    const client = new glue.Client(protocol, k, eps);
    const ours = client.perturbSeeded(Float64Array.from(items), seed);
    const theirs = ldp(["perturb", "--protocol", protocol, "--k", String(k), "--eps", String(eps),
      "--seed", String(seed)], items.join("\n") + "\n");
    assert.equal(ours.split("\n").length, items.length + 1);
    assert.equal(ours, theirs);
  });
}

test("the CLI's protocol list is the one tested", () => {
  const help = ldp(["perturb", "--help"]);
  const listed = help.match(/Protocol: ([a-z, ]+)/)[1].split(",").map((s) => s.trim());
  assert.deepEqual(listed, PROTOCOLS);
});

test("no built file draws from Math.random", () => {
  const files = [
    ...readdirSync(join(WEB_DIR, "pkg")).map((f) => join(WEB_DIR, "pkg", f)),
    ...readdirSync(WEB_DIR).filter((f) => f.endsWith(".js")).map((f) => join(WEB_DIR, f)),
  ];
  assert.ok(files.some((f) => f.endsWith("ldp_wasm.js")) && files.some((f) => f.endsWith("ldp_measure.js")) && files.some((f) => f.endsWith(".wasm")));
  for (const file of files) {
    const text = readFileSync(file).toString("latin1");
    assert.ok(!/Math\.random/.test(text), `${file} mentions Math.random`);
  }
  // What the module does use: the Web Crypto API, through getrandom's backend.
  const js = readFileSync(join(WEB_DIR, "pkg", "ldp_wasm.js"), "utf8");
  assert.match(js, /getRandomValues/);
});

test("unseeded reports come from the CSPRNG and differ", () => {
  const a = new glue.Client("grr", 1000, 0.5).perturbBatch(new Float64Array(64).fill(3));
  const b = new glue.Client("grr", 1000, 0.5).perturbBatch(new Float64Array(64).fill(3));
  assert.notEqual(a, b);
});

test("the shuffle accountant equals ldp shuffle", () => {
  const [forward] = JSON.parse(ldp(["shuffle", "--users", "100000", "--delta", "1e-6", "--eps0", "4", "--format", "json"]));
  const ours = glue.shuffle(100000, 1e-6, 4);
  assert.equal(ours.central_eps, forward.central_eps);
  assert.equal(ours.closed_form, forward.closed_form);
  const [inverse] = JSON.parse(ldp(["shuffle", "--users", "1000000", "--delta", "1e-8", "--central-eps", "1", "--format", "json"]));
  assert.equal(glue.maxLocalEps(1e6, 1e-8, 1).eps0_max, inverse.eps0_max);
  assert.throws(() => glue.shuffle(1.5, 1e-6, 1), { name: "ParamError", message: /users: expected a whole number/ });
  assert.throws(() => glue.shuffle(100, 0, 1), { name: "ParamError", message: /delta must lie strictly between 0 and 1/ });
  assert.throws(() => glue.maxLocalEps(100, 1e-6, 0), { name: "ParamError", message: /target central epsilon/ });
});

// The users' items as `ldp simulate --items FILE` reads them, in a fresh folder.
function itemsFile() {
  const file = join(mkdtempSync(join(tmpdir(), "ldp-glue-")), "items.txt");
  writeFileSync(file, items.join("\n") + "\n");
  return file;
}

test("measure equals ldp simulate, seed for seed, with the uniform and the MAP attacker", async () => {
  const file = itemsFile();
  const users = new measuring.Population(64, Uint32Array.from(items));
  assert.equal(users.users, 5000);
  assert.equal(users.k, 64);
  for (const [protocol, attack] of [["oue", "paper"], ["olh", "map"], ["ss", "map"]]) {
    const [spec] = glue.analyze(protocol, 64, 2, {}).map((r) => r.spec);
    const ours = measuring.measure(JSON.stringify(spec), users, { runs: 3, seed: 11, attack });
    const map = attack === "map" ? ["--attack", "map", "--prior-from-data"] : [];
    const [theirs] = JSON.parse(ldp(["simulate", "--protocol", protocol, "--k", "64", "--eps", "2", "--items", file,
      "--runs", "3", "--seed", "11", ...map, "--format", "json"]));
    // The same reports and guesses; KL and the closed forms go through ln and exp, which
    // WebAssembly's math library may round otherwise in the last place.
    for (const key of ["asr", "asr_se", "mse", "mse_se", "rank_corr", "rank_corr_se"]) {
      assert.equal(ours[key], theirs[key], `${protocol} ${attack}: ${key}`);
    }
    for (const key of ["asr_expected", "mse_expected", "kl", "kl_se"]) {
      assert.ok(close(ours[key], theirs[key]), `${protocol} ${attack}: ${key} ${ours[key]} vs ${theirs[key]}`);
    }
  }
  const spec = JSON.stringify(glue.analyze("grr", 64, 2, {})[0].spec);
  // onRun: called before each run with the runs done; the numbers are the same.
  const calls = [];
  const plain = measuring.measure(spec, users, { runs: 3, seed: 2 });
  const watched = measuring.measure(spec, users, { runs: 3, seed: 2 }, (done) => calls.push(done));
  assert.deepEqual(calls, [0, 1, 2]);
  assert.deepEqual(watched, plain);
  assert.doesNotThrow(() => measuring.measure(spec, users, { runs: 2 }, () => { throw new Error("a page's bug"); }));
  assert.throws(() => new measuring.Population(3, Uint32Array.from([0, 3])), { name: "InputError", message: /items:/ });
  assert.throws(() => measuring.measure(spec, users, { runs: 0 }), { name: "ParamError", message: /runs: at least one run/ });
  assert.throws(() => measuring.measure(spec, users, { attack: "bayes" }), { name: "ParamError", message: /attack: expected "paper" or "map"/ });
  assert.throws(() => measuring.measure(spec, users, { rounds: 3 }), { name: "ParamError", message: /unknown field `rounds`/ });
  assert.throws(() => measuring.measure("{}", users, {}), { name: "ParamError", message: /spec:/ });
  const small = new measuring.Population(10, Uint32Array.from([1, 2]));
  assert.throws(() => measuring.measure(spec, small, {}), { name: "ParamError", message: /k = 64 but the data has k = 10/ });
});

test("measureLinked equals ldp simulate --collections, seed for seed", async () => {
  const file = itemsFile();
  const users = new measuring.Population(64, Uint32Array.from(items));
  for (const protocol of ["grr", "oue", "she"]) {
    const [spec] = glue.analyze(protocol, 64, 1, {}).map((r) => r.spec);
    // Unsorted, with a repeat: sorted and deduplicated, as the CLI does.
    const ours = measuring.measureLinked(JSON.stringify(spec), users, { runs: 2, seed: 4, collections: [10, 1, 3, 10] });
    const theirs = JSON.parse(ldp(["simulate", "--protocol", protocol, "--k", "64", "--eps", "1", "--items", file,
      "--runs", "2", "--seed", "4", "--collections", "10,1,3,10", "--format", "json"]));
    assert.deepEqual(ours.collections, [1, 3, 10]);
    assert.deepEqual(ours.collections, theirs.map((r) => r.collections));
    assert.equal(ours.users, 5000);
    assert.deepEqual(ours.asr, theirs.map((r) => r.asr), protocol);
    assert.deepEqual(ours.asr_se, theirs.map((r) => r.asr_se), protocol);
    theirs.forEach((r, i) => assert.ok(r.asr_expected === null ? ours.asr_expected[i] === null
      : close(ours.asr_expected[i], r.asr_expected), `${protocol}: ${ours.asr_expected[i]} vs ${r.asr_expected}`));
    // More linked reports, more found.
    assert.ok(ours.asr[2] > ours.asr[0], `${protocol}: ${ours.asr}`);
  }
  const spec = JSON.stringify(glue.analyze("grr", 64, 1, {})[0].spec);
  assert.throws(() => measuring.measureLinked(spec, users, { collections: [0] }), { name: "ParamError", message: /collections: at least one report/ });
  assert.throws(() => measuring.measureLinked(spec, users, { collections: [2.5] }), { name: "ParamError", message: /collections: expected a whole number/ });
  assert.throws(() => measuring.measureLinked(spec, users, { collections: [] }), { name: "ParamError", message: /collections/ });
  assert.throws(() => measuring.measureLinked(spec, users, { runs: 0 }), { name: "ParamError", message: /runs: at least one run/ });
  assert.throws(() => measuring.measureLinked(spec, users, { t: 3 }), { name: "ParamError", message: /unknown field `t`/ });
});

test("the worker pool: a trapped worker is replaced, its task fails alone, and progress counts parts", async () => {
  const { runAll } = await import(join(WEB_DIR, "measure.js"));
  // Workers that answer as measure-worker.js does: "b" traps its worker, and a trapped
  // worker answers nothing right afterwards (its memory is in no known state).
  const made = [];
  class FakeWorker {
    constructor() {
      this.trapped = false;
      this.terminated = false;
      made.push(this);
    }
    postMessage({ id, task }) {
      setTimeout(() => {
        if (this.terminated) return;
        if (id === -1) return this.onmessage({ data: { id, ok: true } });
        if (this.trapped) return this.onmessage({ data: { id, ok: false, message: "poisoned" } });
        this.onmessage({ data: { id, part: 0.5 } });
        if (task === "b") {
          this.trapped = true;
          return this.onmessage({ data: { id, ok: false, trap: true, message: "RuntimeError: unreachable" } });
        }
        this.onmessage({ data: { id, ok: true, m: task.toUpperCase() } });
      }, 1);
    }
    terminate() {
      this.terminated = true;
    }
  }
  const saved = { Worker: globalThis.Worker, navigator: Object.getOwnPropertyDescriptor(globalThis, "navigator") };
  globalThis.Worker = FakeWorker;
  Object.defineProperty(globalThis, "navigator", { value: { hardwareConcurrency: 2 }, configurable: true });
  try {
    const seen = [];
    const run = runAll({
      setup: {},
      tasks: ["a", "b", "c", "d", "e"],
      message: (task) => ({ task }),
      progress: (done, total, share) => seen.push([done, total, share]),
    });
    assert.equal(run.workers, 2);
    const results = await run.finished;
    assert.deepEqual(results, ["A", { error: "RuntimeError: unreachable" }, "C", "D", "E"]);
    // Two workers, then one more in place of the trapped one, which was ended.
    assert.equal(made.length, 3);
    assert.ok(made.filter((w) => w.trapped).every((w) => w.terminated));
    // Parts move the bar between two tasks' ends; it ends full.
    assert.ok(seen.some(([done, , share]) => share % 1 !== 0 && share > done));
    assert.deepEqual(seen.at(-1), [5, 5, 5]);
  } finally {
    globalThis.Worker = saved.Worker;
    if (saved.navigator) Object.defineProperty(globalThis, "navigator", saved.navigator);
    else delete globalThis.navigator;
  }
});
