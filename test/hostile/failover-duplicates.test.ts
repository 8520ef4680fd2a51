import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { type ClientOptions, closeClient, createClient } from "../../src/index.js";
import { JournalService } from "./client-journal-service.js";
import { ProviderChild } from "./client-providers.js";

/**
 * Issue 22, break 5: failover must not run a call twice. Two providers journal every call id a
 * handler starts; one provider is SIGKILLed with at least 40 calls in flight on it. A call whose
 * request reached the killed provider may have run: a non-idempotent method must not be sent
 * again (zero ids in two journals), an idempotent one must be (zero failures).
 */

const CALLS = 120; // half charge, half lookup; about half of them on the victim
const HANDLER_MS = 1000;
const IN_FLIGHT_ON_VICTIM = 40;

interface Run {
  chargeFailures: number;
  lookupFailures: string[];
  duplicates: string[];
  onVictim: number;
}

async function killUnderLoad(victim: ProviderChild, survivor: ProviderChild, tag: string, options: Partial<ClientOptions>): Promise<Run> {
  const client = createClient(JournalService, {
    providers: [survivor.address, victim.address],
    timeoutMs: 10_000,
    retries: 2,
    loadBalance: "roundrobin",
    ...options,
  });
  try {
    // Connections up first; round-robin puts half the calls (60) on the victim.
    await Promise.all(Array.from({ length: 8 }, () => client.lookup(`warm-${tag}`, 0)));
    let chargeFailures = 0;
    const lookupFailures: string[] = [];
    const calls = Array.from({ length: CALLS }, (_, i) => {
      const id = `${tag}-${i}`;
      if (i % 2 === 0) {
        return client.charge(id, HANDLER_MS).catch(() => {
          chargeFailures++;
        });
      }
      return client.lookup(id, HANDLER_MS).catch((e: Error) => {
        lookupFailures.push(`${id}: ${e.message}`);
      });
    });
    // Kill the victim once enough handlers started on it (they all still work).
    const deadline = Date.now() + 8000;
    let onVictim = 0;
    while ((onVictim = victim.entries().filter((id) => id.startsWith(`${tag}-`)).length) < IN_FLIGHT_ON_VICTIM) {
      assert.ok(Date.now() < deadline, `only ${onVictim} calls reached the victim`);
      await new Promise((r) => setTimeout(r, 10));
    }
    victim.signal("SIGKILL");
    await Promise.all(calls);
    const ran = [...survivor.entries(), ...victim.entries()].filter((id) => id.startsWith(`${tag}-`));
    const seen = new Set<string>();
    const duplicates: string[] = [];
    for (const id of ran) {
      if (seen.has(id)) duplicates.push(id);
      seen.add(id);
    }
    return { chargeFailures, lookupFailures, duplicates, onVictim };
  } finally {
    await closeClient(client);
    await victim.stop();
  }
}

describe("hostile: failover does not run a call twice when a provider is killed (issue 22, break 5)", () => {
  const cases: [string, Partial<ClientOptions>][] = [
    ["triple-h2", {}],
    ["triple-h1", { httpVersion: "1.1" }],
    ["grpc", { protocol: "grpc" }],
    ["connect", { protocol: "connect" }],
    ["grpc-web", { protocol: "grpc-web" }],
  ];
  let dir: string;
  let survivor: ProviderChild;
  const victims = new Map<string, ProviderChild>();
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "triple-journal-"));
    // Every process at once: one survivor, one victim per case (each is killed).
    const started = await Promise.all([
      ProviderChild.start(path.join(dir, "survivor")),
      ...cases.map(([tag]) => ProviderChild.start(path.join(dir, `victim-${tag}`))),
    ]);
    survivor = started[0];
    for (const [i, [tag]] of cases.entries()) victims.set(tag, started[i + 1]);
  });
  after(async () => {
    await Promise.all([survivor?.stop(), ...[...victims.values()].map((v) => v.stop())]);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [tag, options] of cases) {
    it(`${tag}: no non-idempotent call ran twice, no idempotent call failed`, async (t) => {
      const r = await killUnderLoad(victims.get(tag)!, survivor, tag, options);
      const charges = r.duplicates.filter((id) => Number(id.slice(tag.length + 1)) % 2 === 0);
      t.diagnostic(
        `${tag}: ${r.onVictim} handlers running on the killed provider; ran twice: ${charges.length} charges, ` +
          `${r.duplicates.length - charges.length} lookups (idempotent); failed: ${r.chargeFailures} charges, ${r.lookupFailures.length} lookups`,
      );
      assert.deepEqual(charges, [], `${charges.length} non-idempotent calls ran on both providers (${r.onVictim} in flight on the killed one)`);
      assert.deepEqual(r.lookupFailures, [], "idempotent calls failed");
      // The charges in flight on the killed provider fail (they may have run): the caller decides.
      assert.ok(r.chargeFailures <= r.onVictim, `${r.chargeFailures} charges failed`);
    });
  }
});
