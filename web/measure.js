// "Measure every protocol on it": every protocol of the registry, at each budget the user
// lists, measured on the loaded column by Web Workers (./measure-worker.js), one per core
// the browser offers. Each measurement is `ldp simulate --items items.txt --runs R
// --seed S --attack map --prior-from-data` for that instance: the same seeds, the same
// numbers. Then the measured Pareto front of MSE and ASR at each budget, the recommendation
// under the chooser's bounds, and its spec to download.

import { analyze } from "./pkg/ldp_wasm.js";
import { label } from "./plot.js";

// A budget list: numbers above 0, comma- or space-separated, each once, in order.
export function budgets(text) {
  const values = text.split(/[\s,]+/).filter((t) => t !== "").map((t) => {
    const v = Number(t);
    if (!Number.isFinite(v) || v <= 0) throw new Error(`budgets: expected numbers above 0, got ${t}`);
    return v;
  });
  if (values.length === 0) throw new Error("budgets: give at least one ε, such as 1,2,4");
  return [...new Set(values)].sort((a, b) => a - b);
}

// The instances to measure: every protocol at every budget, as `analyze` gives them (the
// adaptive ones tuned with the chooser's weights); a row that fails alone is kept as such.
export function instances(k, eps, options) {
  return eps.flatMap((e) => analyze("all", k, e, options).map((row) => ({ eps: e, row })));
}

// The file name of a row's spec: what the CLI line beside the table reads.
export function specFile(protocol, eps) {
  return `${protocol}-eps${eps}.json`;
}

// Runs `tasks` on workers (./measure-worker.js), as many as the browser reports cores
// (at most one per task): each worker first gets `setup` (the data it holds, copied to
// each), then `message(task)` for one task at a time; `progress(done, total, share)`
// after each, and whenever a worker posts `{part}` (the share of its task done): `share`
// counts the tasks done and the parts of those under way. A task that traps the module
// (`{trap: true}`) fails in its row, and its worker is replaced.
// A task that fails alone gets `{error}`. `cancel()` on the returned handle terminates
// the workers.
export function runAll({ setup, tasks, message, progress }) {
  if (tasks.length === 0) return { finished: Promise.resolve([]), cancel() {}, workers: 0 };
  const size = Math.max(1, Math.min(navigator.hardwareConcurrency || 2, tasks.length));
  const workers = new Set();
  let stopped = false;
  let fail;
  // Ends every worker and rejects with `reason`, once: a cancel, or the first failure.
  const stop = (reason) => {
    if (stopped) return;
    stopped = true;
    for (const w of workers) w.terminate();
    fail(reason);
  };
  const finished = new Promise((resolve, reject) => {
    fail = reject;
    const results = new Array(tasks.length);
    const parts = new Map();
    let next = 0;
    let done = 0;
    const share = () => done + [...parts.values()].reduce((s, p) => s + p, 0);
    // A worker given `setup`, then tasks while any is left.
    const spawn = () => {
      const w = new Worker(new URL("./measure-worker.js", import.meta.url), { type: "module" });
      workers.add(w);
      w.onerror = (e) => stop(new Error(`a measuring worker failed: ${e.message}`));
      w.onmessage = ({ data }) => {
        if (!data.ok) stop(new Error(data.message));
        else give(w);
      };
      w.postMessage({ id: -1, ...setup });
    };
    const give = (w) => {
      if (stopped || next === tasks.length) return;
      const i = next++;
      w.onmessage = ({ data }) => {
        if (stopped) return;
        if (data.part !== undefined) {
          parts.set(i, data.part);
          progress(done, tasks.length, share());
          return;
        }
        parts.delete(i);
        results[i] = data.ok ? data.m : { error: data.message };
        done += 1;
        progress(done, tasks.length, share());
        if (done === tasks.length) {
          stopped = true;
          for (const x of workers) x.terminate();
          resolve(results);
        } else if (data.trap) {
          // A trap (a panic in the module) leaves its memory in no known state: the task
          // failed in its row, and a fresh worker takes the next ones.
          w.terminate();
          workers.delete(w);
          if (next < tasks.length) spawn();
        } else {
          give(w);
        }
      };
      w.postMessage({ id: i, ...message(tasks[i]) });
    };
    for (let j = 0; j < size; j += 1) spawn();
  });
  return { finished, cancel: () => stop(new Error("cancelled")), workers: size };
}

// The rows on the Pareto front of (measured MSE, measured ASR) among `rows`: no other row
// has both lower or equal, one of them lower.
export function front(rows) {
  return rows.filter((a) => !rows.some((b) => b !== a && b.m.mse <= a.m.mse && b.m.asr <= a.m.asr &&
    (b.m.mse < a.m.mse || b.m.asr < a.m.asr)));
}

// At one budget: the row of lowest measured MSE that meets the bounds (measured ASR at
// most asr_max, bits at most bits_max), or null. With an ASR bound alone it lies on the
// front; a size bound may pick a row the front leaves out (one that a larger report
// dominates).
export function recommend(rows, bounds) {
  const meets = (r) => (bounds.asr_max === undefined || r.m.asr <= bounds.asr_max) &&
    (bounds.bits_max === undefined || r.row.bits <= bounds.bits_max);
  return rows.filter(meets).sort((a, b) => a.m.mse - b.m.mse)[0] ?? null;
}

// "1.2e-5 ± 3.4e-7": a mean and its 95% band (1.96 standard errors).
export function band(mean, se) {
  if (mean === null || mean === undefined) return "–";
  return se === null || se === undefined ? label(mean) : `${label(mean)} ± ${label(1.96 * se)}`;
}
