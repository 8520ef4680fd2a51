// Owns `consistentHashBalancer`. consistenthash: calls with the same first argument go to the same
// provider while the provider set is stable, and only about 1/n of the keys move when a provider
// comes or goes. Must not change: the documented selection rule; state is per client.
import { createHash } from "node:crypto";
import { stringifyJson } from "../../codec/json.js";
import type { Provider } from "../../transport/client/provider.js";
import type { LoadBalancer } from "./load-balancer.js";

const REPLICAS = 160;

interface Ring {
  hashes: Uint32Array;
  owners: Provider[];
}

function buildRing(candidates: readonly Provider[]): Ring {
  const points: { h: number; p: Provider }[] = [];
  for (const p of candidates) {
    // Like Dubbo: one md5 digest yields four 32-bit points.
    for (let i = 0; i < REPLICAS / 4; i++) {
      const d = createHash("md5").update(`${p.address}${i}`).digest();
      for (let k = 0; k < 4; k++) points.push({ h: d.readUInt32LE(k * 4), p });
    }
  }
  points.sort((a, b) => a.h - b.h);
  return { hashes: Uint32Array.from(points, (x) => x.h), owners: points.map((x) => x.p) };
}

/**
 * consistenthash: calls with the same first argument go to the same provider while the provider
 * set is stable, and only about 1/n of the keys move when a provider comes or goes. 160 virtual
 * nodes per provider on an md5 ring.
 */
export function consistentHashBalancer(): LoadBalancer {
  const rings = new Map<string, Ring>();
  return {
    name: "consistenthash",
    select(candidates, inv) {
      const sig = candidates.map((p) => p.address).join(",");
      let ring = rings.get(sig);
      if (!ring) {
        if (rings.size > 64) rings.clear(); // provider sets churn rarely; a small cache is plenty
        rings.set(sig, (ring = buildRing(candidates)));
      }
      const key = inv.args.length === 0 ? "" : stringifyJson(inv.args[0]);
      const h = createHash("md5").update(key).digest().readUInt32LE(0);
      let lo = 0;
      let hi = ring.hashes.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (ring.hashes[mid] < h) lo = mid + 1;
        else hi = mid;
      }
      return ring.owners[lo === ring.hashes.length ? 0 : lo];
    },
  };
}
