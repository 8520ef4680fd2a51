import * as assert from "node:assert/strict";
import * as http from "node:http";
import { H2, post1, type Reply, type RequestInit } from "../helpers/http.js";

const GREET_INIT = { headers: { "content-type": "application/json" }, body: '{"name":"triple"}' };

/** What {@link Bystander.stop} saw. */
export interface BystanderReport {
  readonly calls: number;
  /** Slowest greet, ms (a greet that never answered counts as its timeout). */
  readonly maxMs: number;
  readonly failures: readonly string[];
}

/** How long a bystander calls at most when nobody stops it (a test that failed before its stop). */
const BYSTANDER_LIFETIME_MS = 30_000;
/** Greets per protocol that measure a quiet greet after the attack, and how much slower one beside it may be. */
const QUIET_GREETS = 5;
const QUIET_FACTOR = 20;

/**
 * A well-behaved client calling beside an attack: greets in a loop over HTTP/1.1 and HTTP/2, each
 * given `timeoutMs` to answer, the slowest answer recorded. A server whose event loop is held by
 * one hostile body shows up here as a slow or missing answer. It stops by itself after
 * `lifetimeMs`, so a test that fails before calling `stop()` still ends its file in bounded time
 * (instead of the runner's per-file timeout).
 */
export class Bystander {
  private stopped = false;
  private readonly lifetime: NodeJS.Timeout;
  private calls = 0;
  private maxMs = 0;
  private readonly failures: string[] = [];
  private readonly h2: H2;
  private readonly loops: Promise<void>[];

  constructor(
    private readonly url: string,
    private readonly timeoutMs = 5_000,
    lifetimeMs = BYSTANDER_LIFETIME_MS,
  ) {
    this.h2 = new H2(url);
    this.lifetime = setTimeout(() => void this.stop(), lifetimeMs);
    this.lifetime.unref();
    this.loops = [
      this.loop(() => post1(url, "/greet.GreetService/Greet", GREET_INIT)),
      this.loop(() => this.h2.request("/greet.GreetService/Greet", GREET_INIT)),
    ];
  }

  private async loop(call: () => Promise<Reply>): Promise<void> {
    while (!this.stopped) {
      const t = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string>((r) => {
        timer = setTimeout(() => r(`no answer within ${this.timeoutMs} ms`), this.timeoutMs);
      });
      try {
        const r = await Promise.race([call(), timeout]);
        if (typeof r === "string") this.failures.push(r);
        else if (r.status !== 200) this.failures.push(`${r.status} ${r.text().slice(0, 200)}`);
      } catch (e) {
        this.failures.push(String(e));
      } finally {
        clearTimeout(timer);
      }
      this.calls++;
      this.maxMs = Math.max(this.maxMs, performance.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async stop(): Promise<BystanderReport> {
    this.stopped = true;
    clearTimeout(this.lifetime);
    await Promise.all(this.loops);
    this.h2.close();
    return { calls: this.calls, maxMs: Math.round(this.maxMs), failures: this.failures };
  }

  /**
   * The slowest of a few greets on each protocol, one after another, once the attack is over: how
   * slow a greet is on this machine now, with nothing held (a loaded machine slows it too).
   */
  private async quietMaxMs(): Promise<number> {
    let max = 0;
    for (const call of [() => post1(this.url, "/greet.GreetService/Greet", GREET_INIT), () => this.h2.request("/greet.GreetService/Greet", GREET_INIT)]) {
      for (let i = 0; i < QUIET_GREETS; i++) {
        const t = performance.now();
        await call();
        max = Math.max(max, performance.now() - t);
      }
    }
    return max;
  }

  /**
   * Stops, and asserts every greet succeeded and none waited longer than `boundMs` or, on a
   * machine loaded enough that greets are slow with no attack at all, {@link QUIET_FACTOR} times
   * the slowest greet once the attack is over (a ratio to a baseline measured in the same test:
   * an event loop held by a hostile body still shows as one greet far slower than the others).
   */
  async assertResponsive(boundMs: number): Promise<BystanderReport> {
    this.stopped = true;
    clearTimeout(this.lifetime);
    await Promise.all(this.loops);
    const quietMs = Math.round(await this.quietMaxMs());
    const r = await this.stop();
    assert.deepEqual(r.failures, [], "well-formed calls failed beside the attack");
    assert.ok(r.calls >= 2, `only ${r.calls} well-formed calls completed beside the attack`);
    const bound = Math.max(boundMs, QUIET_FACTOR * quietMs);
    if (process.env.BOUNDS_FIGURES) console.error(`bystander: slowest ${r.maxMs} ms of ${r.calls} calls, ${quietMs} ms quiet`);
    assert.ok(
      r.maxMs < bound,
      `a well-formed call waited ${r.maxMs} ms beside the attack (bound ${bound} ms: ${boundMs} ms, or ${QUIET_FACTOR}x the slowest greet after it, ${quietMs} ms)`,
    );
    return r;
  }
}

/** A reply and how long it took. */
export interface Timed {
  readonly reply: Reply;
  readonly ms: number;
}

/**
 * One HTTP/1.1 POST that must be answered within `timeoutMs` (the socket is destroyed and the
 * promise rejects otherwise), so a server stuck on a hostile body fails the test in bounded time.
 */
export function timedPost(url: string, path: string, init: RequestInit, timeoutMs: number): Promise<Timed> {
  const u = new URL(path, url);
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: "POST", headers: init.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        clearTimeout(timer);
        const body = Buffer.concat(chunks);
        const reply: Reply = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          json: () => JSON.parse(body.toString("utf8")),
          text: () => body.toString("utf8"),
        };
        resolve({ reply, ms: Math.round(performance.now() - t) });
      });
      res.on("error", reject);
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`${path}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(init.body);
  });
}

/** Asserts a JSON error answer: HTTP status, code, and a message naming what was exceeded. */
export function assertRefused(r: Reply, status: number, code: string, message: RegExp): void {
  assert.equal(r.status, status, `${r.status} ${r.text().slice(0, 300)}`);
  const body = r.json();
  assert.equal(body.code, code, r.text().slice(0, 300));
  assert.match(body.message, message);
}

/**
 * How long a well-formed greet of about `bytes` bytes takes on this server now (a field the
 * greet ignores pads it to the size; `senders` of them at once, the slowest of those, the
 * fastest of two rounds): the same upload and a JSON parse of as
 * many bytes. The baseline a hostile body's refusal is timed against, in place of a wall-clock
 * bound (a loaded machine slows both alike).
 */
export async function sameSizeGreetMs(url: string, bytes: number, senders = 1): Promise<number> {
  const body = JSON.stringify({ name: "triple", pad: "x".repeat(Math.max(0, bytes - 26)) });
  let best = Infinity;
  for (let i = 0; i < 2; i++) {
    const all = await Promise.all(
      Array.from({ length: senders }, () => timedPost(url, "/greet.GreetService/Greet", { headers: GREET_INIT.headers, body }, 30_000)),
    );
    for (const { reply } of all) assert.equal(reply.status, 200, reply.text().slice(0, 200));
    best = Math.min(best, Math.max(...all.map((a) => a.ms)));
  }
  return best;
}

/** Floor of a same-size baseline, ms: below it, scheduling noise would make the ratio. */
// BOUNDS_FIGURES=1 in the environment prints each measured figure beside its baseline (to stderr).
const BASELINE_FLOOR_MS = 50;

/**
 * Asserts `ms` (a hostile body's answer) is under `factor` times `baselineMs` (a well-formed
 * body measured on the same server in the same test, e.g. {@link sameSizeGreetMs}; floored at
 * 50 ms); the message names both figures.
 */
export function assertNearBaseline(ms: number, baselineMs: number, factor: number, what: string): void {
  const base = Math.max(baselineMs, BASELINE_FLOOR_MS);
  if (process.env.BOUNDS_FIGURES) console.error(`${what}: ${ms} ms, baseline ${baselineMs} ms`);
  assert.ok(ms < factor * base, `${what}: ${ms} ms against a baseline of ${baselineMs} ms (bound ${factor}x, the baseline floored at ${BASELINE_FLOOR_MS} ms)`);
}
