// Our web client (triple-rpc/web) against connect-web in the same headless Chromium, calling the same
// server (the greet sample on our server, over HTTP/1.1 and TLS/HTTP/2) over Connect JSON: unary calls/s
// and server-stream messages/s (GreetServerStream: 3 messages a call). Both clients run in one page,
// alternately, best of 2 rounds.
//   npm run build && node bench/web.mjs            (SECONDS=3 CONCURRENCY=8 by default)
import { mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import { tmpdir } from "node:os";
import * as path from "node:path";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";
import * as protobuf from "protobufjs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { createServer } = require("../dist/src/index.js");
const { GreetServiceImpl, GREET_PROTO } = require("../dist/samples/greet/greet-service.js");
const { greetDescriptors } = require("../dist/test/connect/greet-descriptors.js");
const { selfSigned } = require("../dist/test/helpers/tls.js");
const { CHROMIUM, CHROMIUM_ARGS } = require("../dist/test/helpers/chromium.js");

const SECONDS = Number(process.env.SECONDS ?? 3);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);

const greetRoot = new protobuf.Root();
greetRoot.loadSync(GREET_PROTO, { keepCase: true });
const greetJson = greetRoot.toJSON();
const built = await esbuild.build({
  entryPoints: [path.resolve("bench/web-page.ts")],
  bundle: true,
  write: false,
  format: "iife",
  platform: "browser",
  target: "chrome120",
  minify: true,
  define: { GREET_JSON: JSON.stringify(greetJson) },
  logLevel: "silent",
});
const script = built.outputFiles[0].text;
const pages = http.createServer((req, res) => {
  if (req.url === "/bundle.js") res.writeHead(200, { "content-type": "text/javascript" }).end(script);
  else res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><script src="/bundle.js"></script>');
});
await new Promise((r) => pages.listen(0, "127.0.0.1", r));
const origin = `http://localhost:${pages.address().port}`;
const { key, cert } = selfSigned();
const servers = {
  "HTTP/1.1": createServer({ services: [new GreetServiceImpl()], cors: { origins: [origin] } }),
  "HTTP/2 (TLS)": createServer({ services: [new GreetServiceImpl()], cors: { origins: [origin] }, tls: { key, cert } }),
};
for (const s of Object.values(servers)) await s.listen({ port: 0, host: "127.0.0.1" });
const dir = mkdtempSync(path.join(tmpdir(), "triple-bench-web-"));
const ctx = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, "--ignore-certificate-errors"] });
const page = await ctx.newPage();
await page.goto(`${origin}/`);
const set = Buffer.from(greetDescriptors().setBytes).toString("base64");
console.log(`| transport | measure | triple-rpc/web | connect-web | ratio |\n|---|---|---:|---:|---:|`);
for (const [name, s] of Object.entries(servers)) {
  const r = await page.evaluate(([u, b, sec, c]) => globalThis.bench(u, b, sec, c), [s.url, set, SECONDS, CONCURRENCY]);
  const best = (prefix, per) => Math.max(...[1, 2].map((i) => (r[`${prefix} ${i}`][per] * 1000) / r[`${prefix} ${i}`].ms));
  const u = [best("unary ours", "calls"), best("unary connect-web", "calls")];
  const m = [best("stream ours", "messages"), best("stream connect-web", "messages")];
  console.log(`| ${name} | unary calls/s | ${u[0].toFixed(0)} | ${u[1].toFixed(0)} | ${(u[0] / u[1]).toFixed(2)} |`);
  console.log(`| ${name} | server-stream messages/s | ${m[0].toFixed(0)} | ${m[1].toFixed(0)} | ${(m[0] / m[1]).toFixed(2)} |`);
}
await ctx.close();
rmSync(dir, { recursive: true, force: true });
for (const s of Object.values(servers)) await s.close();
pages.close();
