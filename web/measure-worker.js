// Measures protocols on the user's table off the page's thread: each message is one call
// of the toolkit's measurement (ldp-wasm's `measure`, the library call of `ldp simulate`),
// so the page stays live and a cancel is the worker's termination.

import init, { Population, measure } from "./pkg/ldp_wasm.js";

const ready = init();
let population = null;

self.onmessage = async ({ data }) => {
  try {
    await ready;
    if (data.kind === "population") {
      population?.free();
      population = new Population(data.k, data.items);
      self.postMessage({ id: data.id, ok: true });
    } else if (data.kind === "measure") {
      const started = performance.now();
      const m = measure(data.spec, population, data.options);
      self.postMessage({ id: data.id, ok: true, m: { ...m, ms: performance.now() - started } });
    }
  } catch (e) {
    self.postMessage({ id: data.id, ok: false, message: `${e.name}: ${e.message}` });
  }
};
