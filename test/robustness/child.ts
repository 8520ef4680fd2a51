import * as assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import type { ServerOptions } from "../../src/index.js";
import { H2, post1, type Reply } from "../helpers/http.js";
import { waitForListening } from "../helpers/child.js";
import type { ProbeReport } from "./fixture-services.js";

/** RSS the server under test must stay below, whatever it is sent. */
const RSS_BOUND = 300 * 1024 * 1024;

const FIXTURE = path.join(__dirname, "fixture-server.js");

/** Options of the server under test: JSON-serialisable server options. */
export type FixtureOptions = Omit<ServerOptions, "services" | "interceptors" | "auth" | "tls">;

/**
 * The server under test, in its own process: a crash is the child exiting, memory is measured
 * inside it. `stop()` in the test's `after` ends it.
 */
export class ServerChild {
  readonly url: string;
  readonly port: number;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private stderr = "";

  private constructor(
    private readonly proc: ChildProcess,
    port: number,
  ) {
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    proc.stderr?.on("data", (c: Buffer) => {
      this.stderr = (this.stderr + c.toString()).slice(-8192);
    });
    proc.once("exit", (code, signal) => {
      this.exit = { code, signal };
    });
  }

  /** Starts the fixture server with `options` and waits until it listens. */
  static start(options: FixtureOptions = {}, nodeArgs: string[] = ["--expose-gc"]): Promise<ServerChild> {
    const proc = spawn(process.execPath, [...nodeArgs, FIXTURE], {
      env: { ...process.env, FIXTURE_OPTIONS: JSON.stringify(options) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    return waitForListening(proc, "fixture server").then((port) => new ServerChild(proc, port));
  }

  /** Fails the test when the server process has exited. */
  assertAlive(): void {
    assert.equal(this.exit, undefined, `the server process died (${JSON.stringify(this.exit)}): ${this.stderr}`);
    assert.equal(this.proc.exitCode, null);
  }

  /** Memory (after a full GC) and prototype pollution, measured inside the server. */
  async report(): Promise<ProbeReport> {
    const r = await post1(this.url, "/robust.Probe/Report", { headers: { "content-type": "application/json" }, body: "[]" });
    assert.equal(r.status, 200, r.text());
    return r.json() as ProbeReport;
  }

  /**
   * The health check each test ends with: the process is alive, well-formed calls over HTTP/1.1
   * and HTTP/2 succeed, RSS is under the bound and Object.prototype is clean.
   */
  async assertHealthy(): Promise<ProbeReport> {
    this.assertAlive();
    await assertGreets(this.url);
    const rep = await this.report();
    assert.ok(rep.rss < RSS_BOUND, `server RSS ${Math.round(rep.rss / 1048576)} MiB exceeds ${RSS_BOUND / 1048576} MiB`);
    assert.deepEqual(rep.pollution, [], "Object.prototype was polluted");
    this.assertAlive();
    return rep;
  }

  /** Ends the server process (SIGTERM: graceful close; SIGKILL after 5 s). */
  async stop(): Promise<void> {
    if (this.exit) return;
    const exited = new Promise<void>((r) => this.proc.once("exit", () => r()));
    this.proc.kill("SIGTERM");
    const t = setTimeout(() => this.proc.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(t);
  }
}

/** Greet over HTTP/1.1 and over HTTP/2 (a fresh session each), asserting both succeed. */
async function assertGreets(url: string): Promise<void> {
  const init = { headers: { "content-type": "application/json" }, body: '{"name":"triple"}' };
  const r1 = await post1(url, "/greet.GreetService/Greet", init);
  assert.equal(r1.status, 200, `HTTP/1.1 greet: ${r1.status} ${r1.text()}`);
  assert.deepEqual(r1.json(), { greeting: "triple" });
  const h2 = new H2(url);
  try {
    const r2 = await h2.request("/greet.GreetService/Greet", init);
    assert.equal(r2.status, 200, `HTTP/2 greet: ${r2.status} ${r2.text()}`);
    assert.deepEqual(r2.json(), { greeting: "triple" });
  } finally {
    h2.close();
  }
}

/**
 * Runs `attack` while a steady stream of well-formed greets goes on beside it, and asserts every
 * one of those succeeded: hostile input must not disturb other callers.
 */
export async function whileGreeting<R>(url: string, attack: () => Promise<R>): Promise<R> {
  let stop = false;
  let ok = 0;
  const failures: string[] = [];
  const h2 = new H2(url);
  const init = { headers: { "content-type": "application/json" }, body: '{"name":"triple"}' };
  const loop = async (call: () => Promise<Reply>) => {
    while (!stop) {
      try {
        const r = await call();
        if (r.status === 200) ok++;
        else failures.push(`${r.status} ${r.text()}`);
      } catch (e) {
        failures.push(String(e));
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const loops = [loop(() => post1(url, "/greet.GreetService/Greet", init)), loop(() => h2.request("/greet.GreetService/Greet", init))];
  try {
    return await attack();
  } finally {
    stop = true;
    await Promise.all(loops);
    h2.close();
    assert.deepEqual(failures, [], "well-formed calls failed during the attack");
    assert.ok(ok >= 2, `only ${ok} well-formed calls completed during the attack`);
  }
}

/** Whether a request media type has a codec yet (form/multipart/xml land with the binder work). */
export async function codecAvailable(url: string, contentType: string): Promise<boolean> {
  const r = await post1(url, "/robust.User/Shout", { headers: { "content-type": contentType }, body: "" });
  return r.status !== 415;
}
