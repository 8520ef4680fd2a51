#!/usr/bin/env node
// The parse cost per byte of each request body format, on the same data: JSON (parseJson, what
// Triple JSON bodies go through), XML (parseXml: the shape pre-scan, fast-xml-parser's validator
// and parser) and url-encoded forms (parseForm). Decoding only: no binding, no handler.
//
//   npm run build && node bench/parsers.mjs
//   SIZES=65536,1048576 ROUNDS=5 node bench/parsers.mjs
//
// Printed per shape and size: the best of ROUNDS, in µs per KiB of body and ns per byte, and
// XML's cost as a multiple of JSON's. The shapes: "records" (an array of small objects, the
// usual RPC argument), "text" (one long string value: the cheapest case for JSON).
import { createRequire } from "node:module";
import * as path from "node:path";

const require = createRequire(import.meta.url);
const dist = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", process.env.DIST ?? "dist");
const { parseJson } = require(path.join(dist, "src", "codec", "json.js"));
const { parseXml } = require(path.join(dist, "src", "codec", "xml-codec.js"));
const { parseForm } = require(path.join(dist, "src", "codec", "form-codec.js"));
const { DEFAULT_LIMITS } = require(path.join(dist, "src", "runtime", "limits.js"));

const SIZES = (process.env.SIZES ?? "16384,262144,1048576").split(",").map(Number);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
// The element, attribute and size limits lifted: this measures the parser, not the refusals.
const LIMITS = { ...DEFAULT_LIMITS, maxXmlElements: 1e9, maxXmlAttributes: 1e9, maxXmlBytes: 1e12 };

function record(i) {
  return { id: i, name: `user ${i}`, email: `user${i}@example.com`, active: i % 2 === 0, score: i * 1.5 };
}

/** One body per format carrying the same values, about `bytes` long. */
function bodies(shape, bytes) {
  if (shape === "text") {
    const s = "lorem ipsum ".repeat(Math.ceil(bytes / 12)).slice(0, bytes);
    return { json: JSON.stringify({ text: s }), xml: `<r><text>${s}</text></r>`, form: `text=${s.replaceAll(" ", "+")}` };
  }
  const items = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    items.push(record(i));
    size += 90;
  }
  const json = JSON.stringify(items);
  const xml = `<r>${items.map((o) => `<item><id>${o.id}</id><name>${o.name}</name><email>${o.email}</email><active>${o.active}</active><score>${o.score}</score></item>`).join("")}</r>`;
  // A form has no nesting: the same values as flat fields (the form-field limit lifted).
  const form = items
    .map((o) => `id=${o.id}&name=${encodeURIComponent(o.name)}&email=${encodeURIComponent(o.email)}&active=${o.active}&score=${o.score}`)
    .join("&");
  return { json, xml, form };
}

function best(fn, input) {
  let bestNs = Infinity;
  const reps = Math.max(1, Math.round(2_000_000 / input.length));
  for (let r = 0; r < ROUNDS; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) fn(input);
    bestNs = Math.min(bestNs, Number(process.hrtime.bigint() - t) / reps);
  }
  return bestNs;
}

const parsers = {
  json: (s) => parseJson(s),
  xml: (s) => parseXml(s, LIMITS),
  form: (b) => parseForm(b, "utf-8", Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY),
};

console.log(`node ${process.version}, best of ${ROUNDS}`);
console.log("shape   | bytes (json / xml / form)  | json µs/KiB | xml µs/KiB | form µs/KiB | xml ÷ json | xml ns/byte");
for (const shape of ["records", "text"]) {
  for (const size of SIZES) {
    const b = bodies(shape, size);
    const input = { json: b.json, xml: b.xml, form: Buffer.from(b.form) };
    const ns = {};
    for (const k of Object.keys(parsers)) {
      parsers[k](input[k]); // warm-up, and a format error shows here
      ns[k] = best(parsers[k], input[k]);
    }
    const perKiB = (k) => ((ns[k] / input[k].length) * 1024) / 1000;
    console.log(
      `${shape.padEnd(7)} | ${`${b.json.length} / ${b.xml.length} / ${b.form.length}`.padEnd(26)} | ${perKiB("json").toFixed(1).padStart(11)} | ${perKiB("xml").toFixed(1).padStart(10)} | ${perKiB("form").toFixed(1).padStart(11)} | ${(perKiB("xml") / perKiB("json")).toFixed(1).padStart(10)} | ${(ns.xml / input.xml.length).toFixed(0).padStart(11)}`,
    );
  }
}
