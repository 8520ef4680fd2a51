#!/usr/bin/env node
// Dubbo Java beside triple-rpc (issue 34): unary calls/s of org.triplerpc.interop.Bench.next (a
// small POJO each way: Address{city, zip}) over Triple with hessian2 and fastjson2, closed loop,
//   (a) a Dubbo Java consumer → our provider,
//   (b) our client → a Dubbo Java provider,
//   (c) a Dubbo Java consumer → a Dubbo Java provider (Dubbo 3.3.1 built here: test/fixtures/dubbo-java),
// the provider pinned to CPU 0 and the load generator to CPU 1; prints a/c and b/c.
// Goal: a/c ≥ 1.0 (our provider serves a Java consumer at least as fast as a Java provider).
//
//   npm run build && node bench/dubbo-java.mjs          # 10 s runs after 5 s of warm-up, 2 rounds
//   DURATION=20 WARMUP=10 ROUNDS=3 CONCURRENCY=32 node bench/dubbo-java.mjs
import { execFile, spawn } from "node:child_process";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, pinned, startServer, stop } from "./harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const dist = path.join(root, process.env.DIST ?? "dist");
const require = createRequire(import.meta.url);
const peer = require(path.join(dist, "test", "java", "dubbo-peer.js"));
const NODE_SIDE = path.join(dist, "bench", "dubbo-java-node.js");
const DURATION = Number(process.env.DURATION ?? 10);
const WARMUP = Number(process.env.WARMUP ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const JVM = ["-Xms256m", "-Xmx512m", "-XX:+UseParallelGC"];

const missing = peer.dubboJavaMissing();
if (missing) throw new Error(`the Dubbo Java peer cannot run here: ${missing}`);

/** A Dubbo Java provider of Bench on CPU 0. */
async function javaProvider(port) {
  const [cmd, args] = pinned("0", "java", await peer.javaBenchArgs("org.triplerpc.interop.BenchProvider", [String(port)], JVM));
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "ignore"] });
  await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("LISTENING")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the Java provider exited ${code}: ${out}`)));
  });
  const stopIt = () =>
    new Promise((r) => {
      child.once("exit", r);
      child.stdin.end();
    });
  return { stop: stopIt };
}

/** Our provider of Bench on CPU 0. */
async function ourProvider(port) {
  const child = await startServer([NODE_SIDE, "server", String(port)], {}, "ready");
  return { stop: () => stop(child) };
}

/** Runs a load generator on CPU 1; its last output line is the JSON result. */
function loadOn1(cmd, args) {
  const [c, a] = pinned("1", cmd, args);
  return new Promise((resolve, reject) =>
    execFile(c, a, { encoding: "utf8", maxBuffer: 16 << 20 }, (err, out, stderr) => {
      if (err) return reject(new Error(`${cmd} failed: ${err.message} ${stderr}`));
      const r = JSON.parse(out.trim().split("\n").pop());
      if (r.failures > 0) return reject(new Error(`${r.failures} failed calls: ${JSON.stringify(r)}`));
      resolve(r.rate);
    }),
  );
}

const javaLoad = async (port, ser) =>
  loadOn1(
    "java",
    await peer.javaBenchArgs("org.triplerpc.interop.LoadDriver", [`tri://127.0.0.1:${port}`, ser, String(CONCURRENCY), String(DURATION), String(WARMUP)], JVM),
  );
const ourLoad = (port, ser) =>
  loadOn1(process.execPath, [NODE_SIDE, "client", `http://127.0.0.1:${port}`, ser, String(CONCURRENCY), String(DURATION), String(WARMUP)]);

const PAIRS = {
  "a: Java consumer → ours": [ourProvider, javaLoad],
  "b: our client → Java": [javaProvider, ourLoad],
  "c: Java consumer → Java": [javaProvider, javaLoad],
};

const best = {};
for (let round = 1; round <= ROUNDS; round++) {
  for (const ser of ["hessian2", "fastjson2"]) {
    for (const [name, [provider, load]] of Object.entries(PAIRS)) {
      const port = await freePort();
      const p = await provider(port);
      const key = `${ser} | ${name}`;
      try {
        const rate = await load(port, ser);
        best[key] = Math.max(best[key] ?? 0, rate);
        console.log(`round ${round} ${key}: ${Math.round(rate)} calls/s`);
      } catch (e) {
        // A run that fails (a call timed out on a loaded machine) is reported and left out.
        console.log(`round ${round} ${key}: failed: ${e.message.split("\n").find((l) => /Exception|Error/.test(l)) ?? e.message.slice(0, 300)}`);
      } finally {
        await p.stop();
      }
    }
  }
}
console.log(`\nbest of ${ROUNDS} rounds, ${DURATION} s each after ${WARMUP} s of warm-up, ${CONCURRENCY} calls in flight:`);
console.log("| serialization | a: Java consumer → ours | b: our client → Java | c: Java → Java | a/c | b/c |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const ser of ["hessian2", "fastjson2"]) {
  const [a, b, c] = Object.keys(PAIRS).map((n) => best[`${ser} | ${n}`]);
  console.log(`| ${ser} | ${Math.round(a)} | ${Math.round(b)} | ${Math.round(c)} | ${(a / c).toFixed(2)} | ${(b / c).toFixed(2)} |`);
}
