// Measures protocols on the user's table off the page's thread: each message is one call
// of the toolkit's measurement (ldp-wasm's `measure`, `measureLinked` and
// `measureSeveral`, the library calls of `ldp simulate`), so the page stays live and a
// cancel is the worker's termination.

import init, { Population, SeveralColumns, measure, measureLinked, measureSeveral } from "./pkg/ldp_measure.js";

const ready = init();
let population = null;
let table = null;

self.onmessage = async ({ data }) => {
  try {
    await ready;
    const started = performance.now();
    let m;
    if (data.kind === "population") {
      population?.free();
      population = new Population(data.k, data.items);
    } else if (data.kind === "table") {
      table?.free();
      table = SeveralColumns.fromCsv(data.csv);
    } else if (data.kind === "measure") {
      // Each run's start: the page's progress bar moves within a long instance. With t
      // linked reports, the attack on them (about t times the work, without a callback)
      // takes its share of the bar at its end.
      const own = data.linked ? 1 / (1 + data.linked.collections[0]) : 1;
      const part = (done) => self.postMessage({ id: data.id, part: own * done / (data.options.runs ?? 10) });
      m = measure(data.spec, population, data.options, part);
      if (data.linked) {
        self.postMessage({ id: data.id, part: own });
        // `ldp simulate --collections t`; a refusal is this column's, not the row's.
        let linked;
        try {
          linked = measureLinked(data.spec, population, data.linked);
        } catch (e) {
          if (e instanceof WebAssembly.RuntimeError) throw e; // a trap is the worker's
          linked = { error: `${e.name}: ${e.message}` };
        }
        m = { ...m, linked };
      }
    } else if (data.kind === "several") {
      m = measureSeveral(data.solution, data.protocol, data.eps, table, data.options);
    }
    self.postMessage({ id: data.id, ok: true, m: m && { ...m, ms: performance.now() - started } });
  } catch (e) {
    // A RuntimeError is a trap (a panic in the module): the page replaces this worker.
    const trap = e instanceof WebAssembly.RuntimeError;
    self.postMessage({ id: data.id, ok: false, trap, message: `${e.name}: ${e.message}` });
  }
};
