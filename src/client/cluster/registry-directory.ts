import type * as tls from "node:tls";
import { resolveRegistry } from "../../registry/create.js";
import type { Registry } from "../../registry/registry.js";
import { hasInstanceDiscovery, registryLog } from "../../registry/registry.js";
import { InstanceSubscription } from "../../registry/instance-subscription.js";
import { consumerUrl, MAX_WEIGHT } from "../../registry/service-url.js";
import { type DubboUrl, hostPort, type ServiceKey } from "../../registry/url.js";
import type { MethodDescriptor } from "../../service/descriptors.js";
import { isValidWeight, Provider, type WarmUp } from "../../transport/client/provider.js";
import type { Logger } from "../../runtime/logger.js";
import type { Directory } from "./directory.js";

/** Settings of a {@link RegistryDirectory}. */
export interface RegistryDirectoryOptions {
  readonly registry: Registry;
  /** Close the registry with the directory (it was made for this client). */
  readonly owned: boolean;
  readonly key: ServiceKey;
  /** The consumer's own node, registered under `…/consumers` while the directory lives. */
  readonly consumer: DubboUrl | undefined;
  /** Providers are `https://` (the client has TLS options). */
  readonly secure: boolean;
  /** The client's TLS options, for application-level metadata calls to `https://` providers. */
  readonly tls?: tls.ConnectionOptions;
  /** Keep the last providers when the registry suddenly lists none. Default true. */
  readonly emptyProtection: boolean;
  /** How long a call made before the first list waits for it, ms. */
  readonly firstListWaitMs: number;
  /** Where its log lines go: the registry's logger, else the client's. */
  readonly logger: Logger;
  /** Which layout to read: interface level, application (instance) level, or both merged (`auto`, default). */
  readonly discovery?: Discovery;
  /** The applications providing the service (Dubbo's `provided-by`): skips the interface → application mapping. */
  readonly providedBy?: readonly string[];
}

/**
 * Which registry layout a consumer reads: `interface` (`/dubbo/<interface>/providers`),
 * `instance` (application level: mapping, `/services/<app>`, metadata), or `auto` (both, merged:
 * one provider per address, whichever layout lists it).
 */
export type Discovery = "interface" | "instance" | "auto";

const DISCOVERY_MODES: readonly string[] = ["interface", "instance", "auto"];
/** How many uncallable providers a directory remembers having logged. */
const MAX_LOGGED_BAD = 1000;

/**
 * A directory a registry keeps current: the providers of one service, replaced as a whole on
 * every notification (calls read the current array; no lock, no copy per call). A provider that
 * stays keeps its `Provider` object, so its health and load survive updates; one that leaves
 * gets no new calls, while calls already on it finish.
 */
export class RegistryDirectory implements Directory {
  readonly registry: string;
  private providers: readonly Provider[] = [];
  private readonly unsubscribe: (() => void) | undefined;
  private readonly instances: InstanceSubscription | undefined;
  /** The latest list of each layout; a notification of one is merged with the other's. */
  private interfaceUrls: readonly DubboUrl[] = [];
  private instanceUrls: readonly DubboUrl[] = [];
  private firstList: Promise<void> | undefined;
  private resolveFirst: (() => void) | undefined;
  private firstTimer: NodeJS.Timeout | undefined;
  private protecting = false;
  private closed = false;
  /** Providers listed that cannot be called, logged already. */
  private readonly loggedBad = new Set<string>();

  constructor(private readonly o: RegistryDirectoryOptions) {
    this.registry = o.registry.address;
    this.firstList = new Promise<void>((r) => {
      this.resolveFirst = r;
    });
    // Not unref'd: a call waiting for the first list must keep the process alive until it comes.
    this.firstTimer = setTimeout(() => this.settleFirst(), o.firstListWaitMs);
    const mode = o.discovery ?? "auto";
    if (!DISCOVERY_MODES.includes(mode)) throw new TypeError(`createClient: discovery must be "interface", "instance" or "auto", got ${JSON.stringify(mode)}`);
    const registry = o.registry;
    if (mode !== "interface" && hasInstanceDiscovery(registry)) {
      this.instances = new InstanceSubscription({
        registry,
        key: o.key,
        providedBy: o.providedBy,
        tls: o.secure ? (o.tls ?? {}) : undefined,
        logger: o.logger,
        listener: (urls) => {
          this.instanceUrls = urls;
          this.update([...this.instanceUrls, ...this.interfaceUrls]);
        },
      });
    }
    if (mode !== "instance") {
      this.unsubscribe = registry.subscribe(o.key, (urls) => {
        this.interfaceUrls = urls;
        this.update([...this.instanceUrls, ...this.interfaceUrls]);
      });
    }
    if (o.consumer) void o.registry.register(o.consumer).catch(() => {});
  }

  list(): readonly Provider[] {
    return this.providers;
  }

  /** Resolves once the first provider is known (or the wait for it ended). */
  ready(): Promise<void> {
    return this.firstList ?? Promise.resolve();
  }

  private settleFirst(): void {
    clearTimeout(this.firstTimer);
    this.resolveFirst?.();
    this.resolveFirst = undefined;
    this.firstList = undefined;
  }

  /** A notification: every matching provider now. */
  private update(urls: readonly DubboUrl[]): void {
    if (this.closed) return;
    const current = new Map(this.providers.map((p) => [p.address, p]));
    const next: Provider[] = [];
    const seen = new Set<string>();
    for (const url of urls) {
      // Only Triple providers can be called; others (dubbo://, rest://) are someone else's.
      if (url.protocol !== "tri" || !url.port) continue;
      const weight = this.weightOf(url);
      // Provider writes the address in URL's canonical form ([::1], lower case), which is what
      // the same provider is known by across notifications.
      const warmUp = warmUpOf(url.params);
      let candidate: Provider;
      try {
        candidate = new Provider(`${this.o.secure ? "https" : "http"}://${hostPort(url.host, url.port)}`, weight, warmUp);
      } catch (e) {
        // A host or port no URL can hold (port 70000, `zz::zz`): skipped, logged once, the rest kept.
        this.skipBad(url, e as Error);
        continue;
      }
      if (seen.has(candidate.address)) continue;
      seen.add(candidate.address);
      const old = current.get(candidate.address);
      const provider = old && old.fullWeight === weight && sameWarmUp(old.warmUp, warmUp) ? old : candidate;
      provider.leaving = false; // listed: whatever it announced before, it is back
      next.push(provider);
    }
    if (next.length === 0 && this.providers.length > 0 && this.o.emptyProtection) {
      // Kept, but unregistered: they are shutting down, so their refusals are no news.
      for (const p of this.providers) p.leaving = true;
      if (!this.protecting) {
        this.protecting = true;
        registryLog(
          this.o.logger,
          "warn",
          `${this.registry} lists no provider of ${this.o.key.interface} any more; keeping the last known ` +
            `${this.providers.length} (${this.providers.map((p) => p.address).join(", ")}) until providers come back (empty protection)`,
        );
      }
      this.settleFirst();
      return;
    }
    if (this.protecting && next.length > 0) registryLog(this.o.logger, "info", `${this.registry} lists providers of ${this.o.key.interface} again`);
    this.protecting = false;
    // A provider the registry no longer lists has unregistered (it is shutting down): calls still
    // on their way to it may find it gone, which is no news worth a warning.
    for (const p of this.providers) if (!seen.has(p.address)) p.leaving = true;
    this.providers = next;
    // Calls made before any provider was known wait for the first one (or the end of the wait).
    if (next.length > 0) this.settleFirst();
  }

  /** A provider's `weight=` (100 when absent or not a weight), at most {@link MAX_WEIGHT} (logged once per provider when more). */
  private weightOf(url: DubboUrl): number {
    const w = Number(url.params.weight);
    if (url.params.weight === undefined || !isValidWeight(w)) return 100;
    if (w <= MAX_WEIGHT) return w;
    const key = `${url.host}\0${url.port}\0weight`;
    if (!this.loggedBad.has(key)) {
      if (this.loggedBad.size >= MAX_LOGGED_BAD) this.loggedBad.clear();
      this.loggedBad.add(key);
      const at = JSON.stringify(hostPort(url.host, url.port));
      registryLog(this.o.logger, "warn", `${this.registry}: provider of ${this.o.key.interface} at ${at} announces weight ${w}; counted as ${MAX_WEIGHT}, the most a provider gets`);
    }
    return MAX_WEIGHT;
  }

  /** Logs a provider that cannot be called once (while the directory lives; at most {@link MAX_LOGGED_BAD} remembered). */
  private skipBad(url: DubboUrl, e: Error): void {
    const key = `${url.host}\0${url.port}`;
    if (this.loggedBad.has(key)) return;
    if (this.loggedBad.size >= MAX_LOGGED_BAD) this.loggedBad.clear();
    this.loggedBad.add(key);
    registryLog(this.o.logger, "warn", `${this.registry}: provider of ${this.o.key.interface} at ${JSON.stringify(url.host)} port ${url.port} skipped: ${e.message}`);
  }

  /** Stops following the registry and removes the consumer's node (closing the registry if it is this client's). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settleFirst();
    this.unsubscribe?.();
    this.instances?.close();
    const { registry, consumer, owned } = this.o;
    if (consumer) await registry.unregister(consumer).catch(() => {});
    if (owned) await registry.close().catch(() => {});
  }
}

/**
 * The warm-up a provider URL announces: Dubbo's `warmup` (ms) counted from its `timestamp`
 * (at application level, the instance's). None without an explicit `warmup` (Dubbo's consumers
 * would assume 10 minutes; ours ramp only providers that ask for it).
 */
export function warmUpOf(params: Readonly<Record<string, string>>): WarmUp | undefined {
  const ms = Number(params.warmup);
  const since = Number(params.timestamp);
  return Number.isFinite(ms) && ms > 0 && Number.isFinite(since) && since > 0 ? { since, ms } : undefined;
}

function sameWarmUp(a: WarmUp | undefined, b: WarmUp | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.since === b.since && a.ms === b.ms);
}

/** What {@link registryDirectory} needs besides the client's options. */
export interface RegistryClientInit {
  readonly registry: string | Registry;
  readonly key: ServiceKey;
  readonly methods: readonly MethodDescriptor[];
  readonly application: string | undefined;
  readonly emptyProtection: boolean | undefined;
  readonly registerConsumer: boolean | undefined;
  readonly secure: boolean;
  readonly tls?: tls.ConnectionOptions;
  readonly firstListWaitMs: number;
  readonly logger: Logger;
  readonly discovery?: Discovery;
  readonly providedBy?: string | readonly string[];
}

/** The directory of a client created with `registry`: subscribed, and registered as a consumer. */
export function registryDirectory(init: RegistryClientInit): RegistryDirectory {
  const { registry, owned } = resolveRegistry(init.registry, "createClient", init.logger);
  return new RegistryDirectory({
    registry,
    owned,
    key: init.key,
    consumer: init.registerConsumer === false ? undefined : consumerUrl(init.key, init.application ?? "triple-rpc", init.methods),
    secure: init.secure,
    tls: init.tls,
    emptyProtection: init.emptyProtection ?? true,
    firstListWaitMs: init.firstListWaitMs,
    logger: registry.logger ?? init.logger,
    discovery: init.discovery,
    providedBy: typeof init.providedBy === "string" ? init.providedBy.split(",").map((a) => a.trim()).filter(Boolean) : init.providedBy,
  });
}
