// Owns `StaticDirectory`. A fixed list of providers: the built-in directory ("registry static").
// Must not change: the documented retry and failure semantics of the policy.
import type { Invocation } from "../../runtime/invocation.js";
import { Provider, type ProviderInit } from "../../transport/client/provider.js";
import { type Clock, systemClock } from "../../transport/clock.js";
import type { DirectoryTuning } from "./tuning.js";

/**
 * Where a client finds the providers of a service. The static list is built in; a registry
 * directory (`registry: "zookeeper://…"`) implements the same interface and replaces the list
 * `list` returns whenever the registry reports a change.
 */
export interface Directory {
  /** Named in failover messages ("from the registry <registry>"). */
  readonly registry: string;
  /**
   * The providers of `service` now. Return the same Provider objects across calls: they carry
   * health and load. With `inv` (a call choosing its provider), a directory that routes (Dubbo
   * governance rules) returns the providers the rules keep for that call.
   */
  list(service: string, inv?: Invocation): readonly Provider[];
  /** Why routing left `inv` no provider, in a few words (the `unavailable` error's message adds it). */
  explainEmpty?(inv: Invocation): string | undefined;
  /**
   * What the providers' URLs and the config center set for calls (Dubbo's `timeout`, `retries`,
   * `loadbalance`); undefined while nothing is set. Registry directories only.
   */
  readonly tuning?: DirectoryTuning;
  /** Stops watching the registry, if any. */
  close?(): void | Promise<void>;
  /**
   * A directory filled asynchronously (from a registry): resolves once its first list is known.
   * A call that finds the list empty waits for it; static directories leave it out.
   */
  ready?(): Promise<void>;
}

/** Parses `"h1:p1, h2:p2"` or a list of URLs / host:port / `{ url, weight }` into providers. */
function parseProviders(init: string | readonly ProviderInit[], clock: Clock): Provider[] {
  const list =
    typeof init === "string"
      ? init
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : init;
  const out: Provider[] = [];
  const seen = new Set<string>();
  for (const p of list) {
    const provider = typeof p === "string" ? new Provider(p, 100, undefined, clock) : new Provider(p.url, p.weight, undefined, clock);
    if (seen.has(provider.address)) continue; // a duplicate would only skew the balancers
    seen.add(provider.address);
    out.push(provider);
  }
  return out;
}

/** A fixed list of providers: the built-in directory ("registry static"). */
export class StaticDirectory implements Directory {
  readonly registry = "static";
  readonly providers: readonly Provider[];

  /** `clock`: what the providers' back-off and ejection read as now (the client's `clock`). */
  constructor(init: string | readonly ProviderInit[], clock: Clock = systemClock) {
    this.providers = parseProviders(init, clock);
    if (this.providers.length === 0) throw new TypeError("createClient: providers must name at least one provider");
  }

  list(): readonly Provider[] {
    return this.providers;
  }
}
