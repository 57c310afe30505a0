// The ASR-MSE plot in plain SVG: a log MSE axis, a linear ASR axis, classic protocols as
// labelled points, adaptive frontiers as lines, the recommendation ringed. No plotting
// library: the page has no build step and loads nothing but itself and the module.

const SVG = "http://www.w3.org/2000/svg";

// Okabe-Ito colours, one per family, as in the project's figures.
const FAMILY_COLOUR = {
  grr: "#000000", ss: "#E69F00", ass: "#E69F00",
  sue: "#0072B2", oue: "#0072B2", aue: "#0072B2",
  blh: "#009E73", olh: "#009E73", alh: "#009E73",
  she: "#CC79A7", the: "#D55E00", athe: "#D55E00",
  hr: "#56B4E9", hm: "#56B4E9", flh: "#8C7A00", cms: "#7F7F7F", hcms: "#7F7F7F",
  dbitflip: "#1B5E20",
};

export function colour(protocol) {
  return FAMILY_COLOUR[protocol] ?? "#444444";
}

function el(name, attrs = {}, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// Ticks of a log axis over [lo, hi]: the powers of ten inside, with 2 and 5 between them
// when fewer than three powers fall inside.
function logTicks(lo, hi) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= lo && v <= hi) ticks.push({ v, major: m === 1 });
    }
  }
  const majors = ticks.filter((t) => t.major);
  return majors.length >= 3 ? majors : ticks;
}

// Ticks of a linear axis over [0, hi]: 1, 2, 2.5 or 5 times a power of ten apart, three
// to six of them whatever the scale (every ASR below 0.01 left only "0" with steps of
// at least 0.01).
export function linearTicks(hi) {
  const power = 10 ** Math.floor(Math.log10(hi / 5));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => hi / s <= 6);
  const ticks = [];
  for (let i = 0; i * step <= hi * (1 + 1e-9); i++) ticks.push(Number((i * step).toPrecision(6)));
  return ticks;
}

// A label's box beside the point (cx, cy): to its right, or its left near the right
// edge, moved down or up in steps until it overlaps nothing placed before (labels,
// markers, the ring) and stays inside the frame.
function place(placed, cx, cy, width, frame) {
  const left = cx + 6 + width > frame.right;
  const x0 = left ? cx - 6 - width : cx + 6;
  for (let step = 0; step < 60; step++) {
    const dy = (step % 2 ? -1 : 1) * Math.ceil(step / 2) * 11;
    const box = { x: x0, y: cy - 5 + dy, w: width, h: 11 };
    if (box.y < frame.top || box.y + box.h > frame.bottom) continue;
    if (!placed.some((b) => overlap(box, b))) {
      placed.push(box);
      return box;
    }
  }
  const y = Math.min(Math.max(cy - 5, frame.top), frame.bottom - 11);
  return { x: x0, y, w: width, h: 11 };
}

function overlap(a, b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

// Frontiers drawn on top of each other (every point of each within 3 px of the other's
// line), grouped: one label names them all ("AUE = ALH"), or one would hide the others.
function coinciding(frontiers, px) {
  const near = (a, b) => a.every((p) => b.some((q) => Math.hypot(p[0] - q[0], p[1] - q[1]) <= 3));
  const groups = [];
  for (const f of frontiers) {
    const pts = px(f);
    const g = pts.length ? groups.find((g) => g.pts.length && near(pts, g.pts) && near(g.pts, pts)) : undefined;
    if (g) g.members.push(f.protocol);
    else groups.push({ pts, members: [f.protocol], first: f });
  }
  return groups;
}

// A number for people: four significant digits, exponent form (`4.4e-4`) outside
// [0.001, 100000).
export function label(v) {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 1e5) return String(Number(v.toPrecision(4)));
  const [mantissa, exponent] = v.toExponential(3).split("e");
  return `${mantissa.replace(/\.?0+$/, "")}e${exponent.replace("+", "")}`;
}

// points: classic instances [{protocol, asr, mse, param}], each with its 95% band
// (`asrBand`, `mseBand`: half-widths) where it was measured; frontiers: [{protocol,
// points: [{asr, mse, param}]}], with `name` for its label (the protocol's by default) and
// `markers: false` for a line through points drawn already; pick: the recommended
// instance, or null.
export function draw(svg, { points, frontiers, pick }, tooltip) {
  const W = 640, H = 420, m = { left: 62, right: 16, top: 12, bottom: 48 };
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.replaceChildren();
  const all = points.concat(frontiers.flatMap((f) => f.points), pick ? [pick] : []);
  // The MSE axis spans the classic points and the recommendation (at least a decade);
  // a frontier running on to huge MSE (SS at omega near k) is cut at the frame.
  const finite = (v) => v > 0 && Number.isFinite(v);
  const min = (vs) => vs.reduce((a, b) => Math.min(a, b), Infinity);
  const max = (vs) => vs.reduce((a, b) => Math.max(a, b), -Infinity);
  const shown = points.concat(pick ? [pick] : []).map((p) => p.mse).filter(finite);
  let lo = Math.min(min(all.map((p) => p.mse).filter(finite)), min(shown));
  let hi = max(shown);
  hi = Math.max(hi, lo * 10);
  lo = 10 ** (Math.log10(lo) - 0.04);
  hi = 10 ** (Math.log10(hi) + 0.04);
  const asrHi = Math.min(1, max(all.map((p) => p.asr + (p.asrBand ?? 0))) * 1.08 || 1);
  const x = (v) => m.left + ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (W - m.left - m.right);
  const y = (v) => H - m.bottom - (v / asrHi) * (H - m.top - m.bottom);

  const axes = el("g", { class: "axes", "font-size": "12", fill: "#333" });
  axes.append(el("rect", { x: m.left, y: m.top, width: W - m.left - m.right, height: H - m.top - m.bottom, fill: "none", stroke: "#999" }));
  for (const t of logTicks(lo, hi)) {
    axes.append(el("line", { x1: x(t.v), x2: x(t.v), y1: m.top, y2: H - m.bottom, stroke: "#eee" }));
    axes.append(el("text", { x: x(t.v), y: H - m.bottom + 16, "text-anchor": "middle" }, label(t.v)));
  }
  for (const t of linearTicks(asrHi)) {
    axes.append(el("line", { x1: m.left, x2: W - m.right, y1: y(t), y2: y(t), stroke: "#eee" }));
    axes.append(el("text", { x: m.left - 6, y: y(t) + 4, "text-anchor": "end", class: "asr-tick" }, label(t)));
  }
  axes.append(el("text", { x: (m.left + W - m.right) / 2, y: H - 8, "text-anchor": "middle" }, "MSE per user (log scale)"));
  axes.append(el("text", { x: 16, y: (m.top + H - m.bottom) / 2, "text-anchor": "middle", transform: `rotate(-90 16 ${(m.top + H - m.bottom) / 2})` }, "ASR"));
  svg.append(axes);
  // The clip's id is the plot's own: the page draws more than one plot.
  const clip = `${svg.id || "plot"}-frame`;
  const frame = el("clipPath", { id: clip });
  frame.append(el("rect", { x: m.left, y: m.top, width: W - m.left - m.right, height: H - m.top - m.bottom }));
  const defs = el("defs");
  defs.append(frame);
  svg.append(defs);

  const show = (p, event) => {
    const param = p.param === null || p.param === undefined ? "" : `\nparam ${typeof p.param === "number" ? label(p.param) : p.param}`;
    const pm = (band) => (band > 0 ? ` ± ${label(band)}` : "");
    tooltip.textContent = `${p.protocol}${param}\nASR ${label(p.asr)}${pm(p.asrBand)}\nMSE ${label(p.mse)}${pm(p.mseBand)}`;
    const box = svg.getBoundingClientRect();
    tooltip.style.left = `${event.clientX - box.left + 12}px`;
    tooltip.style.top = `${event.clientY - box.top + 12}px`;
    tooltip.hidden = false;
  };
  const hide = () => { tooltip.hidden = true; };
  const marker = (p, r, attrs) => {
    const c = el("circle", { cx: x(p.mse), cy: y(p.asr), r, ...attrs, "data-protocol": p.protocol });
    c.append(el("title", {}, `${p.protocol}: ASR ${label(p.asr)}, MSE ${label(p.mse)}`));
    c.addEventListener("mouseenter", (e) => show(p, e));
    c.addEventListener("mouseleave", hide);
    return c;
  };

  // What labels must not cover: the classic markers and the ring, placed first.
  const placed = points.map((p) => ({ x: x(p.mse) - 5, y: y(p.asr) - 5, w: 10, h: 10 }));
  if (pick) placed.push({ x: x(pick.mse) - 10, y: y(pick.asr) - 10, w: 20, h: 20 });
  const bounds = { top: m.top, bottom: H - m.bottom, right: W - m.right };
  const inFrame = (p) => p.mse >= lo && p.mse <= hi;
  const px = (f) => f.points.filter(inFrame).map((p) => [x(p.mse), y(p.asr)]);
  const groups = coinciding(frontiers, px);
  // The 95% bands of measured points, under everything else: a bar each way, the MSE's
  // cut at the frame (its lower end may reach 0 on the log axis).
  const bands = el("g", { class: "bands", "clip-path": `url(#${clip})` });
  for (const p of points) {
    const stroke = { stroke: colour(p.protocol), "stroke-width": 1, "data-protocol": p.protocol };
    if (p.asrBand > 0) {
      bands.append(el("line", { x1: x(p.mse), x2: x(p.mse), y1: y(p.asr - p.asrBand), y2: y(p.asr + p.asrBand), ...stroke, class: "asr-band" }));
    }
    if (p.mseBand > 0) {
      const left = p.mse - p.mseBand > 0 ? x(p.mse - p.mseBand) : m.left;
      bands.append(el("line", { x1: left, x2: x(p.mse + p.mseBand), y1: y(p.asr), y2: y(p.asr), ...stroke, class: "mse-band" }));
    }
  }
  if (bands.childElementCount) svg.append(bands);
  for (const f of frontiers) {
    const g = el("g", { class: "frontier", "data-protocol": f.protocol, "clip-path": `url(#${clip})` });
    const sorted = [...f.points].sort((a, b) => a.mse - b.mse);
    g.append(el("polyline", { points: sorted.map((p) => `${x(p.mse)},${y(p.asr)}`).join(" "), fill: "none", stroke: colour(f.protocol), "stroke-width": 1.6 }));
    if (f.markers !== false) {
      for (const p of sorted) g.append(marker({ ...p, protocol: f.protocol }, 2.6, { fill: colour(f.protocol) }));
    }
    svg.append(g);
  }
  // One label per group of coinciding frontiers, outside the clip so that it is never cut.
  const name = new Map(frontiers.map((f) => [f.protocol, f.name ?? f.protocol.toUpperCase()]));
  for (const { first, members } of groups) {
    const end = [...first.points].sort((a, b) => a.mse - b.mse)[0];
    const text = members.map((p) => name.get(p)).join(" = ");
    const box = place(placed, x(end.mse), y(end.asr) - 8, text.length * 7, bounds);
    svg.append(el("text", { x: box.x, y: box.y + 9, "font-size": 11, fill: colour(first.protocol), class: "frontier-label", "data-protocols": members.join(" ") }, text));
  }
  const pts = el("g", { class: "classic" });
  for (const p of [...points].sort((a, b) => a.mse - b.mse || b.asr - a.asr)) {
    pts.append(marker(p, 4.2, { fill: "#fff", stroke: colour(p.protocol), "stroke-width": 2 }));
    const text = p.protocol.toUpperCase();
    const box = place(placed, x(p.mse), y(p.asr), text.length * 7, bounds);
    pts.append(el("text", { x: box.x, y: box.y + 9, "font-size": 11, fill: colour(p.protocol), class: "point-label" }, text));
    if (Math.abs(box.y + 5 - y(p.asr)) > 8) {
      pts.append(el("line", { x1: x(p.mse), y1: y(p.asr), x2: box.x - 1, y2: box.y + 5, stroke: colour(p.protocol), "stroke-width": 0.6 }));
    }
  }
  svg.append(pts);
  if (pick) {
    svg.append(marker(pick, 9, { fill: "none", stroke: "#b00020", "stroke-width": 2.5, class: "recommended" }));
  }
}
