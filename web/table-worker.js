// Reads and holds a user's table off the page's thread (./table.js), so that a large file
// never freezes the tab: the page asks for a column as a domain and gets its items back.

import { TableError, categories, parseTable, readText, several } from "./table.js";

let table = null;

function reply(id, body, transfer = []) {
  self.postMessage({ id, ...body }, transfer);
}

self.onmessage = async ({ data }) => {
  const { id } = data;
  try {
    if (data.kind === "load") {
      table = null;
      table = parseTable(data.file.name, await readText(data.file));
      // The first column that makes a domain of two values or more and is no id.
      let first = 0;
      for (let i = 0; i < table.columns.length; i += 1) {
        try {
          const d = categories(table, i, data.kMax);
          if (d.distinct < d.items.length || d.items.length < 20) { first = i; break; }
        } catch { /* the next column */ }
      }
      reply(id, { ok: true, columns: table.columns, rows: table.rows.length, format: table.format, first });
    } else if (data.kind === "domain") {
      if (!table) throw new TableError("no table is loaded");
      const d = categories(table, data.index, data.kMax);
      reply(id, { ok: true, domain: d }, [d.items.buffer]);
    } else if (data.kind === "several") {
      if (!table) throw new TableError("no table is loaded");
      reply(id, { ok: true, several: several(table, data.indices) });
    }
  } catch (e) {
    reply(id, { ok: false, message: e instanceof TableError ? e.message : `${data.file?.name ?? "the table"}: ${e.message}` });
  }
};
