// Shared by the page's tests: the built page, the `ldp` binary, a static server.

import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { extname, join, normalize } from "node:path";

function required(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run these tests with \`cargo xtask web --test\``);
  }
  return value;
}

export const WEB_DIR = required("LDP_WEB_DIR");
export const LDP = required("LDP_BIN");
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const SCREENSHOT = process.env.LDP_SCREENSHOT;

if (!existsSync(join(WEB_DIR, "pkg", "ldp_wasm_bg.wasm"))) {
  throw new Error(`${WEB_DIR} holds no built page: run \`cargo xtask web\` first`);
}

// `ldp ARGS` with `input` on stdin; its stdout.
export function ldp(args, input = "") {
  return execFileSync(LDP, args, { input, encoding: "utf8", maxBuffer: 1 << 28 });
}

// `ldp ARGS --format json`, parsed.
export function ldpJson(args) {
  return JSON.parse(ldp([...args, "--format", "json"]));
}

// Equal to 1e-12, relative to the larger magnitude (absolute below 1).
export function close(a, b) {
  return Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));
}

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
};

// Serves WEB_DIR on a free localhost port, as any static host would.
export async function serve() {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
    const file = join(WEB_DIR, path.endsWith("/") ? `${path}index.html` : path);
    if (!file.startsWith(WEB_DIR)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() };
}
