#!/usr/bin/env node
// The cost of the compiled validator alone: bench/validation-server.mjs's five constraints
// (pattern, min, max, maxLength, format) on valid arguments, called in a loop.
//
//   npm run build && node bench/validation-micro.mjs
import { createRequire } from "node:module";
import * as path from "node:path";

const require = createRequire(import.meta.url);
const dist = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", process.env.DIST ?? "dist");
const { Method, Service } = require(path.join(dist, "src", "index.js"));
const { describeService } = require(path.join(dist, "src", "service", "describe.js"));
const { compileValidator } = require(path.join(dist, "src", "codec", "validation.js"));

function method(name, params) {
  class Orders {
    place() {}
  }
  Method({ params })(Orders.prototype, "place", Object.getOwnPropertyDescriptor(Orders.prototype, "place"));
  Service(name)(Orders);
  return describeService(Orders).methods[0];
}

const plain = method("bench.Plain", [
  { name: "sku", type: String },
  { name: "qty", type: Number },
  { name: "note", type: String, optional: true },
  { name: "email", type: String },
]);
const checked = method("bench.Checked", [
  { name: "sku", type: String, pattern: "^[A-Z]{2}-\\d+$" },
  { name: "qty", type: Number, min: 1, max: 100 },
  { name: "note", type: String, optional: true, maxLength: 200 },
  { name: "email", type: String, format: "email" },
]);
console.log(`without constraints: ${compileValidator(plain) === undefined ? "no validator (the invoker is unchanged)" : "A VALIDATOR (unexpected)"}`);
const validate = compileValidator(checked);
const args = ["AB-12", 2, "gift wrap", "ann@example.com"];
const N = Number(process.env.N ?? 2e6);
for (let i = 0; i < N / 10; i++) validate(args);
let best = Infinity;
for (let round = 0; round < 5; round++) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) validate(args);
  best = Math.min(best, Number(process.hrtime.bigint() - t) / N);
}
console.log(`five constraints, valid arguments: ${best.toFixed(0)} ns per call (best of 5 x ${N})`);
