// A user's own table, read in the page: CSV, TSV or JSON lines, parsed here (nothing is
// sent anywhere), one column mapped to the items 0..k-1 of a protocol's domain.

// The largest file read: a larger one would hold the tab for seconds; sample it first.
export const MAX_BYTES = 64 * 1024 * 1024;

// A problem with the file, said on the page.
export class TableError extends Error {
  constructor(message) {
    super(message);
    this.name = "TableError";
  }
}

// The file's text: refused when empty, too large or not UTF-8 (naming the byte).
export async function readText(file) {
  if (file.size === 0) throw new TableError(`${file.name} is empty`);
  if (file.size > MAX_BYTES) {
    const mb = (n) => (n / (1024 * 1024)).toFixed(0);
    throw new TableError(`${file.name} is ${mb(file.size)} MB; the page reads up to ${mb(MAX_BYTES)} MB (a sample of the rows tells the same distribution)`);
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new TableError(`${file.name} is not UTF-8 text (near byte ${firstBadByte(bytes)}); save it as UTF-8`);
  }
}

// About where UTF-8 breaks: the longest prefix that decodes as the start of UTF-8 text
// (a prefix may end inside a character), by bisection.
function firstBadByte(bytes) {
  let lo = 0, hi = bytes.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      lo = mid;
    } catch {
      hi = mid;
    }
  }
  return lo;
}

// The format, from the name, else from the first line.
export function formatOf(name, text) {
  const lower = name.toLowerCase();
  if (lower.endsWith(".tsv") || lower.endsWith(".tab")) return "tsv";
  if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson") || lower.endsWith(".json")) return "jsonl";
  if (lower.endsWith(".csv")) return "csv";
  const first = text.slice(0, text.indexOf("\n") + 1 || text.length);
  if (first.trimStart().startsWith("{")) return "jsonl";
  return first.includes("\t") && !first.includes(",") ? "tsv" : "csv";
}

// { format, columns, rows }: the header's names and every row's cells (strings; JSON
// lines keep numbers and booleans as their text, null as missing).
export function parseTable(name, text) {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const format = formatOf(name, text);
  const table = format === "jsonl" ? jsonLines(text) : delimited(text, format === "tsv" ? "\t" : ",");
  if (table.columns.length === 0) throw new TableError(`${name} has no columns`);
  if (table.rows.length === 0) throw new TableError(`${name} has a header but no rows`);
  return { format, ...table };
}

// RFC 4180: quoted fields may hold the delimiter, line breaks and doubled quotes. A file
// without quotes is split by lines and delimiters (many times faster than the scan).
function delimited(text, sep) {
  const records = text.includes("\"") ? scanned(text, sep) : split(text, sep);
  if (records.length === 0) throw new TableError("the file holds no rows");
  const columns = records[0].cells.map((c) => c.trim());
  const rows = [];
  for (const { line: at, cells } of records.slice(1)) {
    if (cells.length !== columns.length) {
      throw new TableError(`line ${at}: ${cells.length} fields, but the header names ${columns.length}`);
    }
    rows.push(cells);
  }
  return { columns, rows };
}

function split(text, sep) {
  const records = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i += 1) {
    let l = lines[i];
    if (l.endsWith("\r")) l = l.slice(0, -1);
    if (l !== "") records.push({ line: i + 1, cells: l.split(sep) });
  }
  return records;
}

function scanned(text, sep) {
  const records = [];
  let row = [], field = "", quoted = false, i = 0, line = 1;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (quoted) {
      if (c === "\"") {
        if (text[i + 1] === "\"") { field += "\""; i += 2; continue; }
        quoted = false; i += 1; continue;
      }
      if (c === "\n") line += 1;
      field += c; i += 1; continue;
    }
    if (c === "\"" && field === "") { quoted = true; i += 1; continue; }
    if (c === sep) { row.push(field); field = ""; i += 1; continue; }
    if (c === "\n" || c === "\r") {
      row.push(field); field = "";
      if (!(row.length === 1 && row[0] === "")) records.push({ line, cells: row });
      row = [];
      if (c === "\r" && text[i + 1] === "\n") i += 1;
      i += 1; line += 1; continue;
    }
    field += c; i += 1;
  }
  if (quoted) throw new TableError(`line ${line}: a quoted field is never closed`);
  if (field !== "" || row.length > 0) { row.push(field); records.push({ line, cells: row }); }
  return records;
}

function jsonLines(text) {
  const columns = [];
  const seen = new Map();
  const objects = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((l, i) => {
    if (l.trim() === "") return;
    let v;
    try {
      v = JSON.parse(l);
    } catch (e) {
      throw new TableError(`line ${i + 1}: not JSON (${e.message})`);
    }
    if (v === null || typeof v !== "object" || Array.isArray(v)) {
      throw new TableError(`line ${i + 1}: a row is a JSON object`);
    }
    for (const key of Object.keys(v)) {
      if (!seen.has(key)) { seen.set(key, columns.length); columns.push(key); }
    }
    objects.push(v);
  });
  const rows = objects.map((o) => columns.map((c) => {
    const v = o[c];
    if (v === undefined || v === null) return "";
    return typeof v === "object" ? JSON.stringify(v) : String(v);
  }));
  return { columns, rows };
}

// Column `index` of `table` as a domain: its labels by frequency (ties by first row), the
// k - 1 most frequent kept and the rest sharing one item, "other", when there are more
// than `kMax`; `items` maps every row with a value to its item, `missing` counts the
// empty cells left out. `notes` says what a reader should know.
export function categories(table, index, kMax) {
  const counts = new Map();
  let missing = 0;
  for (const row of table.rows) {
    const v = row[index].trim();
    if (v === "") { missing += 1; continue; }
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  const present = table.rows.length - missing;
  const column = table.columns[index];
  if (present === 0) throw new TableError(`column ${column} is empty`);
  if (counts.size < 2) throw new TableError(`column ${column} holds one value (${counts.keys().next().value}): nothing to estimate`);
  // The most frequent first, ties in order of first appearance: by buckets of equal count
  // (O(rows), where sorting a million distinct values took seconds).
  const buckets = new Map();
  for (const [label, c] of counts) {
    const b = buckets.get(c);
    if (b) b.push(label); else buckets.set(c, [label]);
  }
  const order = [...buckets.keys()].sort((a, b) => b - a);
  const merged = counts.size > kMax;
  const keep = merged ? kMax - 1 : counts.size;
  const labels = [];
  const freq = [];
  for (const c of order) {
    for (const label of buckets.get(c)) {
      if (labels.length === keep) break;
      labels.push(label);
      freq.push(c);
    }
    if (labels.length === keep) break;
  }
  let other = 0;
  if (merged) {
    other = present - freq.reduce((s, c) => s + c, 0);
    labels.push(OTHER);
    freq.push(other);
  }
  const item = new Map(labels.map((l, i) => [l, i]));
  const items = new Uint32Array(present);
  let j = 0;
  for (const row of table.rows) {
    const v = row[index].trim();
    if (v === "") continue;
    items[j++] = item.get(v) ?? labels.length - 1;
  }
  let numbers = 0;
  for (const label of counts.keys()) if (Number.isFinite(Number(label))) numbers += 1;
  const notes = [];
  if (counts.size === present && present >= 20) {
    notes.push(`every value is distinct: column ${column} looks like an id, not a category`);
  }
  if (merged) notes.push(`${(counts.size - kMax + 1).toLocaleString("en")} rarer values (${other.toLocaleString("en")} rows) share the item "${OTHER}"`);
  if (missing > 0) notes.push(`${missing.toLocaleString("en")} empty cells left out`);
  if (numbers > 0 && numbers < counts.size) notes.push("numbers and text mixed: every value is read as a label");
  return { labels, counts: freq, items, k: labels.length, distinct: counts.size, missing, notes };
}

// The label of the bucket of the rarer values.
export const OTHER = "(other)";

// The most distinct values a column of "Several columns" may hold: more is an id, not an
// attribute (and the server would keep a counter per value of every attribute).
export const MAX_SEVERAL_K = 1000;

// Columns `indices` of `table` as a CSV text of their own (a header of their names, then
// each row whose cells are all filled, quoted where needed), what `ldp simulate --dataset
// FILE.csv` reads; with the rows left out, and the re-identification risk of the table:
// the share of rows whose combination of values no other row has, and the smallest
// group of rows sharing one.
export function several(table, indices) {
  if (indices.length < 2) throw new TableError("choose at least two columns");
  const quote = (v) => (/[",\r\n]/.test(v) || v !== v.trim() ? `"${v.replaceAll("\"", "\"\"")}"` : v);
  const names = indices.map((i) => table.columns[i] || `column ${i + 1}`);
  const seen = new Set();
  for (const n of names) {
    if (seen.has(n)) throw new TableError(`two chosen columns are named ${n}`);
    seen.add(n);
  }
  const lines = [names.map(quote).join(",")];
  const groups = new Map();
  const distinct = indices.map(() => new Set());
  let dropped = 0;
  for (const row of table.rows) {
    const cells = indices.map((i) => row[i].trim());
    if (cells.some((c) => c === "")) { dropped += 1; continue; }
    cells.forEach((c, j) => distinct[j].add(c));
    lines.push(cells.map(quote).join(","));
    const key = JSON.stringify(cells);
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  const users = lines.length - 1;
  if (users === 0) throw new TableError("no row has every chosen column filled");
  distinct.forEach((d, j) => {
    if (d.size < 2) throw new TableError(`column ${names[j]} holds one value: nothing to estimate`);
    if (d.size > MAX_SEVERAL_K) throw new TableError(`column ${names[j]} has ${d.size.toLocaleString("en")} distinct values (at most ${MAX_SEVERAL_K.toLocaleString("en")} here): an id, not an attribute`);
  });
  let unique = 0;
  let smallest = Infinity;
  for (const c of groups.values()) {
    if (c === 1) unique += 1;
    smallest = Math.min(smallest, c);
  }
  return { csv: lines.join("\n") + "\n", names, users, dropped, domains: distinct.map((d) => d.size), unique: unique / users, smallest };
}
