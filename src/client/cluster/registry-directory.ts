// Owns `RoutedProvider`, `RegistryDirectory`, `warmUpOf`, `registryDirectory`. A provider of a
// registry directory: its URL as this consumer sees it (configured), which routers read. Must not
// change: the documented retry and failure semantics of the policy.
import type * as tls from "node:tls";
import { resolveRegistry } from "../../registry/create.js";
import type { Registry } from "../../registry/registry.js";
import { hasInstanceDiscovery, registryLog } from "../../registry/registry.js";
import { InstanceSubscription } from "../../registry/instance-subscription.js";
import { consumerUrl, MAX_WEIGHT } from "../../registry/service-url.js";
import { type DubboUrl, hostPort, type ServiceKey } from "../../registry/url.js";
import type { RegistryLevel } from "../../registry/options.js";
import type { MethodDescriptor } from "../../service/descriptors.js";
import { isValidWeight, Provider, type WarmUp } from "../../transport/client/provider.js";
import type { Logger } from "../../runtime/logger.js";
import type { Clock } from "../../transport/clock.js";
import type { Directory } from "./directory.js";
import { type DirectoryTuning, ProviderTuning } from "./tuning.js";
import { callable, type Level, LevelChoice, levelsOf, type Mode } from "./level-choice.js";
import { type MigrationPlan, shouldMigrate } from "../../governance/migration.js";
import type { Invocation } from "../../runtime/invocation.js";
import { callTag, FORCE_TAG_KEY, TAG_KEY } from "../../runtime/call-tag.js";
import { lowerFirst } from "../../service/describe.js";
import { type ConfigCenter, type ConfigCenterSpec, governanceLog, resolveConfigCenter } from "../../governance/config-center.js";
import { isDisabled } from "../../governance/configurators.js";
import { ConsumerGovernance } from "../../governance/consumer-governance.js";
import { type RouteCall, type RouteExplanation, RouterChain } from "../../governance/router-chain.js";

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
  /** What its providers' warm-up, back-off and ejection read as now (the client's `clock`). */
  readonly clock?: Clock;
  /** Which layout to read: interface level, application level, or both merged (default). */
  readonly discovery?: Discovery;
  /** The applications providing the service (Dubbo's `provided-by`): skips the interface → application mapping. */
  readonly providedBy?: readonly string[];
  /** The consumer's URL as routers read it (application, version, group, `dubbo.tag`, host). */
  readonly routeAs: DubboUrl;
  /** Governance rules from a config center (routing, configurators, migration); none when undefined. */
  readonly governance?: {
    readonly center: ConfigCenter;
    readonly owned: boolean;
  };
}

/** A provider of a registry directory: its URL as this consumer sees it (configured), which routers read. */
export class RoutedProvider extends Provider {
  url!: DubboUrl;
  /** Its `timeout` / `loadbalance` (its URL's, a configurator's), when it has any. */
  tuning: ProviderTuning | undefined;
}

/**
 * Which registry layout a consumer reads (`registry.level`): `interface`
 * (`/dubbo/<interface>/providers`), `application` (mapping, `/services/<app>`, metadata), or
 * `both` (merged: one provider per address, whichever layout lists it).
 */
type Discovery = RegistryLevel;

/** A mode for log lines: the `registry.level` word, or Dubbo's step name for APPLICATION_FIRST. */
function levelWord(mode: Mode): string {
  return mode === "application-first" ? "APPLICATION_FIRST" : mode;
}
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
  private providers: readonly RoutedProvider[] = [];
  private unsubscribe: (() => void) | undefined;
  /** Stops following the 2.6 rule nodes. */
  private stopLegacy: (() => void) | undefined;
  private instances: InstanceSubscription | undefined;
  /** The layouts' lists and the mode in force (the option's, or a migration rule's). */
  private readonly levels: LevelChoice;
  /** A FORCE_* migration waiting for the new level's addresses before comparing (Java's `waitAddressNotify`). */
  private pending: { readonly target: Level; readonly plan: MigrationPlan; readonly timer: NodeJS.Timeout } | undefined;
  /** APPLICATION_FIRST with a `proportion` below 100: the interface level's providers, for the other calls. */
  private fallback: readonly RoutedProvider[] | undefined;
  /** Each call's draw of `proportion` (one per call, whatever its attempts). */
  private draws = new WeakMap<Invocation, boolean>();
  /** The config center's rules for this service, when governance is on. */
  readonly governance: ConsumerGovernance | undefined;
  /** Dubbo's router chain: the rules of the config center, and static tags (which need none). */
  private readonly chain: RouterChain;
  /** Some provider listed has a static tag (`dubbo.tag`): calls are routed even without rules. */
  private tagged = false;
  private firstList: Promise<void> | undefined;
  private resolveFirst: (() => void) | undefined;
  private firstTimer: NodeJS.Timeout | undefined;
  private protecting = false;
  private closed = false;
  /** Providers listed that cannot be called, logged already. */
  private readonly loggedBad = new Set<string>();
  /** What the providers' URLs and the configurators set for calls (undefined: nothing). */
  tuning: DirectoryTuning | undefined;

  constructor(private readonly o: RegistryDirectoryOptions) {
    this.registry = o.registry.address;
    this.firstList = new Promise<void>((r) => {
      this.resolveFirst = r;
    });
    // Not unref'd: a call waiting for the first list must keep the process alive until it comes.
    this.firstTimer = setTimeout(() => this.settleFirst(), o.firstListWaitMs);
    const mode = o.discovery ?? "both";
    this.levels = new LevelChoice(mode);
    this.chain = new RouterChain({ consumer: o.routeAs, log: (level, msg) => governanceLog(o.logger, level, msg) });
    for (const level of levelsOf(mode)) this.follow(level);
    const g = o.governance;
    if (g) {
      this.governance = new ConsumerGovernance({
        ...g,
        chain: this.chain,
        consumer: o.routeAs,
        logger: o.logger,
        onConfigurators: () => this.refresh(),
        onDiscovery: (plan) => this.migrate(plan, mode),
      });
      this.followLegacyRules();
    }
    if (o.consumer) void o.registry.register(o.consumer).catch(() => {});
  }

  /**
   * Dubbo 2.6's rule nodes under `/dubbo/<interface>/`, followed as Java's registry directory
   * follows them: `configurators/` (`override://` URLs) are applied before the config center's
   * configurators; `routers/` (`route://` condition URLs) are not applied: one log line for each
   * node name not seen before says so.
   */
  private followLegacyRules(): void {
    type Legacy = { subscribeLegacyRules?: (iface: string, l: (category: "routers" | "configurators", urls: readonly DubboUrl[]) => void) => () => void };
    const reg = this.o.registry as Registry & Legacy;
    if (typeof reg.subscribeLegacyRules !== "function") return;
    const iface = this.o.key.interface;
    const logged = new Set<string>();
    this.stopLegacy = reg.subscribeLegacyRules.call(reg, iface, (category, urls) => {
      if (this.closed) return;
      if (category === "configurators") {
        this.governance?.legacyConfigurators(urls, `${this.registry} /dubbo/${iface}/configurators`);
        return;
      }
      const fresh = urls.filter((u) => u.protocol !== "empty" && !logged.has(JSON.stringify(u)));
      if (fresh.length === 0 || logged.size > 1000) return;
      for (const u of fresh) logged.add(JSON.stringify(u));
      governanceLog(
        this.o.logger,
        "warn",
        `${this.registry}: ${iface} has ${fresh.length} new Dubbo 2.6 router node(s) under routers/ (${fresh[0].protocol}://…${fresh[0].params.rule ? ` rule ${JSON.stringify(decodeRule(fresh[0].params.rule))}` : ""}); they are not applied: write them as condition rules in the config center (/dubbo/config/dubbo/<interface>::.condition-router)`,
      );
    });
  }

  /** Follows one layout of the registry (a no-op when it is followed already, or the registry has no application level). */
  private follow(level: Level): void {
    const registry = this.o.registry;
    if (level === "application" && !this.instances && hasInstanceDiscovery(registry)) {
      this.instances = new InstanceSubscription({
        registry,
        key: this.o.key,
        providedBy: this.o.providedBy,
        tls: this.o.secure ? (this.o.tls ?? {}) : undefined,
        logger: this.o.logger,
        listener: (urls) => this.listed("application", urls),
      });
    }
    if (level === "interface" && !this.unsubscribe) this.unsubscribe = registry.subscribe(this.o.key, (urls) => this.listed("interface", urls));
  }

  /** Stops following a layout and forgets its list. */
  private unfollow(level: Level): void {
    if (level === "application") {
      this.instances?.close();
      this.instances = undefined;
    } else {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
    }
    this.levels.drop(level);
  }

  /** A layout's new list: the calls' list again, and a waiting migration may decide. */
  private listed(level: Level, urls: readonly DubboUrl[]): void {
    if (this.closed) return;
    this.levels.set(level, urls);
    this.governance?.providersListed(urls);
    const p = this.pending;
    if (p && p.target === level && p.plan.delay === 0) this.decide(p);
    this.refresh();
  }

  /** The calls' list from the layouts now (and APPLICATION_FIRST's interface-level share). */
  private refresh(): void {
    this.update(this.levels.chosen());
    const fb = this.levels.fallback();
    this.fallback = fb && this.providers.length > 0 ? this.build(fb, new Map(this.providers.map((p) => [p.address, p]))).next : undefined;
  }

  /**
   * A migration rule's plan for this service (undefined: back to the `registry.level` option), as
   * Java's `MigrationRuleHandler` applies it. APPLICATION_FIRST follows both levels and uses the
   * application level while it lists enough addresses (`threshold`); FORCE_* moves to one level
   * once its addresses are known (after `delay` s), only when it lists enough of them, unless
   * `force` — else the current level stays (Java does not retry until the rule changes).
   */
  private migrate(plan: MigrationPlan | undefined, option: Mode): void {
    if (this.closed) return;
    this.cancelPending();
    this.levels.plan = plan;
    const target = plan?.mode ?? option;
    if (plan === undefined || target === this.levels.mode || plan.mode === "application-first") {
      this.switchTo(target);
      return;
    }
    const level = plan.mode;
    const wait = plan.delay > 0 ? plan.delay * 1000 : plan.force ? 0 : this.o.firstListWaitMs;
    const pending = { target: level, plan, timer: setTimeout(() => this.decide(pending), wait) };
    pending.timer.unref();
    this.pending = pending;
    this.follow(level);
    if (this.levels.listed.has(level) && plan.delay === 0) this.decide(pending);
  }

  /** A FORCE_* migration compares the levels' address counts (Java's `shouldMigrate`) and moves, or stays. */
  private decide(p: { readonly target: Level; readonly plan: MigrationPlan; readonly timer: NodeJS.Timeout }): void {
    if (this.pending !== p || this.closed) return;
    this.cancelPending();
    // Java compares the new level with the old one (the other level), whatever the old mode used.
    const now = callable(this.levels.urls[p.target === "application" ? "interface" : "application"]);
    const next = callable(this.levels.urls[p.target]);
    if (p.plan.force || shouldMigrate(next, now, p.plan.threshold)) {
      this.switchTo(p.target);
      return;
    }
    if (!levelsOf(this.levels.mode).includes(p.target)) this.unfollow(p.target);
    registryLog(
      this.o.logger,
      "warn",
      `${this.registry}: a migration rule asks ${this.o.key.interface} to move to registry.level ${levelWord(p.target)}, but that level lists ${next} provider(s) against ${now} (threshold ${p.plan.threshold}); registry.level ${levelWord(this.levels.mode)} stays (force: true moves anyway)`,
    );
  }

  private cancelPending(): void {
    if (this.pending) clearTimeout(this.pending.timer);
    this.pending = undefined;
  }

  /** Uses `mode` from now on: follows its levels, drops the others; the list changes once the new level has listed. */
  private switchTo(mode: Mode): void {
    const from = this.levels.mode;
    if (mode !== from)
      registryLog(
        this.o.logger,
        "info",
        `${this.registry}: a migration rule switches ${this.o.key.interface} from registry.level ${levelWord(from)} to ${levelWord(mode)}`,
      );
    this.levels.mode = mode;
    for (const level of ["interface", "application"] as const) if (!levelsOf(mode).includes(level)) this.unfollow(level);
    for (const level of levelsOf(mode)) this.follow(level);
    // The providers listed meanwhile stay until a level the mode reads has listed.
    if (levelsOf(mode).some((l) => this.levels.listed.has(l))) this.refresh();
  }

  list(_service?: string, inv?: Invocation): readonly Provider[] {
    // No rule, no tag anywhere (or no call to route): the list as it is, nothing more on the call path.
    const providers = this.fallback && inv ? this.share(inv) : this.providers;
    if (inv === undefined || (this.chain.idle && !this.tagged && !this.o.routeAs.params[TAG_KEY] && callTag(inv.options) === undefined)) return providers;
    return this.chain.route(providers, routeCall(inv));
  }

  /** APPLICATION_FIRST's `proportion`: the call's draw (Java's `nextDouble(100) > promotion` → interface level). */
  private share(inv: Invocation): readonly RoutedProvider[] {
    let toInterface = this.draws.get(inv);
    if (toInterface === undefined) {
      toInterface = Math.random() * 100 > (this.levels.plan?.proportion ?? 100);
      this.draws.set(inv, toInterface);
    }
    return toInterface && this.fallback ? this.fallback : this.providers;
  }

  /** Why the rules left a call no provider: the explanation's text, when the registry lists some. */
  explainEmpty(inv: Invocation): string | undefined {
    if (this.providers.length === 0) return undefined;
    const text = this.chain.explain(this.providers, routeCall(inv)).text;
    governanceLog(this.o.logger, "debug", `no provider of ${this.o.key.interface} for ${inv.method.name}: ${text}`);
    return `routing rules kept none of the ${this.providers.length} providers (${firstLine(text)}); see explainRoute()`;
  }

  /** Which providers each router keeps for this call, and why (`explainRoute`). */
  explain(inv: Invocation): RouteExplanation {
    const ex = this.chain.explain(this.providers, routeCall(inv));
    return this.governance ? ex : { ...ex, text: `${ex.text}\n  (no config center: static tags only)` };
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
    const { next, seen } = this.build(urls, new Map(this.providers.map((p) => [p.address, p])));
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
    this.tagged = next.some((p) => !!p.url.params[TAG_KEY]);
    this.tuning = tuningOf(next, this.governance?.consumerOverrides);
    // Calls made before any provider was known wait for the first one (or the end of the wait).
    if (next.length > 0) this.settleFirst();
  }

  /** The providers of a list, as this consumer sees them (configured); known ones keep their object (health, load). */
  private build(urls: readonly DubboUrl[], current: ReadonlyMap<string, RoutedProvider>): { next: RoutedProvider[]; seen: Set<string> } {
    const g = this.governance;
    const next: RoutedProvider[] = [];
    const seen = new Set<string>();
    for (const listed of urls) {
      // Only Triple providers can be called; others (dubbo://, rest://) are someone else's.
      if (listed.protocol !== "tri" || !listed.port) continue;
      // As this consumer sees it: configurators applied (one may disable the provider, or reweigh it).
      const { url, overrides } = g ? g.configured(listed) : { url: listed, overrides: undefined };
      if (g && isDisabled(url)) continue;
      const weight = this.weightOf(url);
      // Provider writes the address in URL's canonical form ([::1], lower case), which is what
      // the same provider is known by across notifications.
      const warmUp = warmUpOf(url.params);
      let candidate: RoutedProvider;
      try {
        candidate = new RoutedProvider(`${this.o.secure ? "https" : "http"}://${hostPort(url.host, url.port)}`, weight, warmUp, this.o.clock);
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
      provider.url = url;
      provider.tuning = ProviderTuning.of(overrides, listed.params);
      next.push(provider);
    }
    return { next, seen };
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
      registryLog(
        this.o.logger,
        "warn",
        `${this.registry}: provider of ${this.o.key.interface} at ${at} announces weight ${w}; counted as ${MAX_WEIGHT}, the most a provider gets`,
      );
    }
    return MAX_WEIGHT;
  }

  /** Logs a provider that cannot be called once (while the directory lives; at most {@link MAX_LOGGED_BAD} remembered). */
  private skipBad(url: DubboUrl, e: Error): void {
    const key = `${url.host}\0${url.port}`;
    if (this.loggedBad.has(key)) return;
    if (this.loggedBad.size >= MAX_LOGGED_BAD) this.loggedBad.clear();
    this.loggedBad.add(key);
    registryLog(
      this.o.logger,
      "warn",
      `${this.registry}: provider of ${this.o.key.interface} at ${JSON.stringify(url.host)} port ${url.port} skipped: ${e.message}`,
    );
  }

  /** Stops following the registry and removes the consumer's node (closing the registry if it is this client's). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settleFirst();
    this.unsubscribe?.();
    this.stopLegacy?.();
    this.instances?.close();
    await this.governance?.close();
    const { registry, consumer, owned } = this.o;
    if (consumer) await registry.unregister(consumer).catch(() => {});
    if (owned) await registry.close().catch(() => {});
  }
}

/**
 * A call as Dubbo's routers see it: the Java method name, the arguments, and the attachments:
 * the call's metadata (text values), then its tag (the call's, else the one carried from the
 * incoming call; the client's own tag is a consumer URL parameter, which routers read last).
 */
function routeCall(inv: Invocation): RouteCall {
  const attachments: Record<string, string> = {};
  const md = inv.options?.metadata;
  if (md) for (const [k, v] of Object.entries(md)) if (typeof v === "string") attachments[k.toLowerCase()] = v;
  const tag = callTag(inv.options);
  if (tag) {
    attachments[TAG_KEY] = tag.tag;
    if (tag.force !== undefined) attachments[FORCE_TAG_KEY] = String(tag.force);
  }
  return { method: lowerFirst(inv.method.name), args: inv.args, attachments };
}

/** What the providers and the consumer's overrides set for calls, or undefined when nothing. */
function tuningOf(providers: readonly RoutedProvider[], consumer: Readonly<Record<string, string>> | undefined): DirectoryTuning | undefined {
  const timeouts = providers.some((p) => p.tuning?.timeouts);
  const retries = consumer && Object.keys(consumer).some((k) => k === "retries" || k.endsWith(".retries")) ? consumer : undefined;
  return timeouts || retries ? { timeouts, consumer: retries } : undefined;
}

/** A 2.6 router's `rule=` text, URL-decoded (shown in the log line), at most 200 characters. */
function decodeRule(rule: string): string {
  let text = rule;
  try {
    text = decodeURIComponent(rule);
  } catch {}
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? text;
  return line.length > 300 ? `${line.slice(0, 300)}…` : line.trim();
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
  readonly clock?: Clock;
  readonly discovery?: Discovery;
  readonly providedBy?: string | readonly string[];
  readonly configCenter?: ConfigCenterSpec;
  /** The client's `tag` / `forceTag`: consumer URL parameters the tag router reads. */
  readonly tag?: string;
  readonly forceTag?: boolean;
}

/** The consumer URL routers read: the client's tag as Dubbo's consumer parameters. */
function withTag(url: DubboUrl, tag: string | undefined, force: boolean | undefined): DubboUrl {
  if (tag === undefined) return url;
  const params: Record<string, string> = { ...url.params, [TAG_KEY]: tag };
  if (force !== undefined) params[FORCE_TAG_KEY] = String(force);
  return { ...url, params };
}

/** The directory of a client created with `registry`: subscribed, and registered as a consumer. */
export function registryDirectory(init: RegistryClientInit): RegistryDirectory {
  const { registry, owned } = resolveRegistry(init.registry, "createClient", init.logger);
  const self = consumerUrl(init.key, init.application ?? "triple-rpc", init.methods);
  let center: ReturnType<typeof resolveConfigCenter>;
  try {
    center = resolveConfigCenter(init.configCenter, registry, "createClient", init.logger);
  } catch (e) {
    if (owned) void registry.close().catch(() => {});
    throw e;
  }
  return new RegistryDirectory({
    registry,
    owned,
    key: init.key,
    routeAs: withTag(self, init.tag, init.forceTag),
    governance: center,
    consumer: init.registerConsumer === false ? undefined : self,
    secure: init.secure,
    tls: init.tls,
    emptyProtection: init.emptyProtection ?? true,
    firstListWaitMs: init.firstListWaitMs,
    logger: registry.logger ?? init.logger,
    clock: init.clock,
    discovery: init.discovery,
    providedBy:
      typeof init.providedBy === "string"
        ? init.providedBy
            .split(",")
            .map((a) => a.trim())
            .filter(Boolean)
        : init.providedBy,
  });
}
