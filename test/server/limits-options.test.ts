import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createServer, DEFAULT_LIMITS, type LimitOptions } from "../../src/index.js";
import { JSON_HEADERS, post1 } from "../helpers/http.js";
import { CalcService } from "./fixtures.js";

/**
 * Every protection of the hardening rounds is a limit: a limit that silently turns itself off is
 * a hole. `{ ...DEFAULT_LIMITS, ...given }` let `maxBodyBytes: undefined` (what
 * `env ? Number(env) : undefined` gives) or `NaN` (what `Number("4MB")` gives) disable it, since
 * every comparison with them is false.
 */
describe("createServer limits: undefined keeps the default, bad values and unknown names are refused", () => {
  it("a limit given as undefined keeps its default: a 5 MiB body is still 413", async () => {
    const server = createServer({ services: [new CalcService()], limits: { maxBodyBytes: undefined, maxFormFields: undefined } });
    await server.listen({ port: 0, host: "127.0.0.1" });
    try {
      const r = await post1(server.url, "/test.Calc/add", { headers: JSON_HEADERS, body: `[1,2${" ".repeat(5 << 20)}]` });
      assert.equal(r.status, 413, r.text().slice(0, 200));
      assert.match(r.text(), /4194304/);
    } finally {
      await server.close();
    }
  });

  it("NaN, a negative number, a string, null → TypeError naming the limit", () => {
    for (const [v, shown] of [
      [Number.NaN, "NaN"],
      [-1, "-1"],
      ["4MB", '"4MB"'],
      [null, "null"],
    ] as const) {
      assert.throws(
        () => createServer({ limits: { maxBodyBytes: v as unknown as number } }),
        (e: unknown) =>
          e instanceof TypeError &&
          e.message === `createServer: limits.maxBodyBytes must be a non-negative integer number of bytes (Infinity for no limit), got ${shown}`,
        String(v),
      );
    }
  });

  it("an unknown name → TypeError naming the nearest limit, or listing the limits", () => {
    assert.throws(
      () => createServer({ limits: { maxBodyByte: 10 } as unknown as LimitOptions }),
      (e: unknown) => e instanceof TypeError && e.message === "createServer: limits.maxBodyByte is not an option (did you mean maxBodyBytes?)",
    );
    assert.throws(
      () => createServer({ limits: { maxBodySize: 10 } as unknown as LimitOptions }),
      /createServer: limits\.maxBodySize is not an option; the options of limits are maxBodyBytes, .*maxNumberDigits/,
    );
  });

  it("maxNumberDigits: below 19 (a Java long's digits) → TypeError naming it; 19 and Infinity are kept", () => {
    assert.throws(
      () => createServer({ limits: { maxNumberDigits: 18 } }),
      (e: unknown) =>
        e instanceof TypeError &&
        e.message === "createServer: limits.maxNumberDigits must be a whole number >= 19 (a Java long's digits; Infinity for no limit), got 18",
    );
    assert.throws(() => createServer({ limits: { maxNumberDigits: Number.NaN } }), /limits\.maxNumberDigits must be a whole number >= 19/);
    assert.doesNotThrow(() => createServer({ limits: { maxNumberDigits: 19 } }));
    assert.doesNotThrow(() => createServer({ limits: { maxNumberDigits: Number.POSITIVE_INFINITY } }));
    assert.equal(DEFAULT_LIMITS.maxNumberDigits, 4096);
  });

  it("Infinity lifts a limit; 0 and whole numbers are kept", () => {
    assert.doesNotThrow(() => createServer({ limits: { maxFormFields: Number.POSITIVE_INFINITY, maxXmlDepth: 0, maxBodyBytes: 1024 } }));
    assert.equal(DEFAULT_LIMITS.maxBodyBytes, 4 * 1024 * 1024, "the defaults are not changed by a server's limits");
  });

  it("timeouts: NaN, negative or non-number idleTimeoutMs / headersTimeoutMs / requestTimeoutMs / bodyIdleTimeoutMs → TypeError naming it (NaN switched the idle sweep off)", () => {
    for (const name of ["idleTimeoutMs", "headersTimeoutMs", "requestTimeoutMs", "bodyIdleTimeoutMs"] as const) {
      for (const [v, shown] of [
        [Number.NaN, "NaN"],
        [-1, "-1"],
        ["5000", '"5000"'],
      ] as const) {
        assert.throws(
          () => createServer({ [name]: v as unknown as number }),
          (e: unknown) =>
            e instanceof TypeError &&
            e.message === `createServer: ${name} must be a whole number of milliseconds from 0 to 2147483647 (0 switches the timeout off), got ${shown}`,
          `${name} ${String(v)}`,
        );
      }
      assert.doesNotThrow(() => createServer({ [name]: 0 }));
    }
  });

  it("timeouts: a fraction, Infinity or more than 2147483647 ms → TypeError naming our option (node:http named its own; a longer timer fires at once)", () => {
    const zero = { shutdownTimeoutMs: "0 cancels in-flight calls at once", drainDelayMs: "0 closes the listener at once" } as Record<string, string>;
    for (const name of ["idleTimeoutMs", "headersTimeoutMs", "requestTimeoutMs", "bodyIdleTimeoutMs", "shutdownTimeoutMs", "drainDelayMs"] as const) {
      for (const v of [0.5, Number.POSITIVE_INFINITY, 3e9]) {
        assert.throws(
          () => createServer({ [name]: v }),
          (e: unknown) =>
            e instanceof TypeError &&
            e.message ===
              `createServer: ${name} must be a whole number of milliseconds from 0 to 2147483647 (${zero[name] ?? "0 switches the timeout off"}), got ${String(v)}`,
          `${name} ${String(v)}`,
        );
      }
      assert.doesNotThrow(() => createServer({ requestTimeoutMs: 0, [name]: 2_147_483_647 }));
    }
    assert.throws(
      () => createServer({ shutdownTimeoutMs: -1 }),
      /createServer: shutdownTimeoutMs must be a whole number of milliseconds from 0 to 2147483647 \(0 cancels in-flight calls at once\), got -1/,
    );
    // node:http's own rule (headers within the request's time), said with our names.
    assert.throws(
      () => createServer({ headersTimeoutMs: 400_000 }),
      (e: unknown) =>
        e instanceof TypeError &&
        e.message ===
          "createServer: headersTimeoutMs (400000) must not exceed requestTimeoutMs (300000, the default): raise requestTimeoutMs too, or set it to 0",
    );
    assert.doesNotThrow(() => createServer({ headersTimeoutMs: 400_000, requestTimeoutMs: 500_000 }));
  });
});
