import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ClientOptions, closeClient, createClient } from "../../src/index.js";
import { JournalService } from "./client-journal-service.js";
import { ProviderChild } from "./client-providers.js";

/**
 * Issue 22, break 4: a hung provider must be dropped. Two providers, failover, a short call
 * timeout; one provider is frozen (SIGSTOP) under load. Once one timeout has passed, calls must
 * go to the provider that answers: under 5 % of the calls started after that may fail (before
 * the fix, half of them timed out for the whole freeze).
 */

const TIMEOUT_MS = 500;
const FREEZE_MS = 3500;
const INFLIGHT = 16;

interface Outcome {
  /** Calls started during the freeze after its first timeout: answered and failed. */
  ok: number;
  failed: number;
  /** The failures' messages, counted. */
  errors: Map<string, number>;
}

async function freezeUnderLoad(healthy: ProviderChild, victim: ProviderChild, options: Partial<ClientOptions>): Promise<Outcome> {
  const client = createClient(JournalService, { providers: [healthy.address, victim.address], timeoutMs: TIMEOUT_MS, ...options });
  try {
    // Both providers answer before the freeze (connections up, latencies known).
    for (let i = 0; i < 20; i++) await Promise.all([client.lookup("warm", 0, { timeoutMs: 5000 }), client.lookup("warm", 0, { timeoutMs: 5000 })]);
    const t0 = performance.now();
    victim.signal("SIGSTOP");
    const out: Outcome = { ok: 0, failed: 0, errors: new Map() };
    const settleFrom = TIMEOUT_MS + 200; // the calls in flight when it froze time out in this window
    const worker = async () => {
      while (performance.now() - t0 < FREEZE_MS) {
        const started = performance.now() - t0;
        let error: string | undefined;
        try {
          await client.lookup("x", 0);
        } catch (e) {
          error = (e as Error).message.replace(/\d+/g, "N");
        }
        if (started < settleFrom) continue;
        if (error === undefined) out.ok++;
        else {
          out.failed++;
          out.errors.set(error, (out.errors.get(error) ?? 0) + 1);
        }
      }
    };
    await Promise.all(Array.from({ length: INFLIGHT }, worker));
    return out;
  } finally {
    victim.signal("SIGCONT");
    await closeClient(client);
  }
}

describe("hostile: a hung provider is dropped by the client (issue 22, break 4)", () => {
  let healthy: ProviderChild;
  let victim: ProviderChild;
  before(async () => {
    [healthy, victim] = await Promise.all([ProviderChild.start(), ProviderChild.start()]);
  });
  after(async () => {
    await Promise.all([healthy?.stop(), victim?.stop()]);
  });

  const cases: [string, Partial<ClientOptions>][] = [
    ["Triple over HTTP/2, default balancer and outlier detection", {}],
    ["gRPC, random balancer: outlier ejection alone", { protocol: "grpc", loadBalance: "random" }],
    ["Triple over HTTP/1.1, default settings", { httpVersion: "1.1" }],
  ];
  for (const [name, options] of cases) {
    it(`${name}: under 5 % of the calls fail once one timeout has passed`, async () => {
      const r = await freezeUnderLoad(healthy, victim, options);
      const total = r.ok + r.failed;
      assert.ok(total > 100, `too few calls to judge: ${total}`);
      const share = r.failed / total;
      const why = [...r.errors].map(([m, n]) => `${n} × ${m}`).join("; ");
      assert.ok(share < 0.05, `${r.failed} of ${total} calls failed (${(share * 100).toFixed(1)} %) while a provider was frozen: ${why}`);
    });
  }
});
