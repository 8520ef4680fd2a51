// Owns `ConsumerGovernance`. One consumer's view of the config center, as Dubbo Java's reference
// has it: the routing rules (handed to a RouterChain), the configurators at service and application
// … Must not change: Dubbo 3.3's rule semantics (the oracle tests compare with Dubbo Java).
import type { Logger } from "../runtime/logger.js";
import type { DubboUrl } from "../registry/url.js";
import { type ConfigCenter, GOVERNANCE_GROUP, governanceLog, RuleWatches } from "./config-center.js";
import { type ConfiguratorEntry, configureUrl, overrideUrlEntry, parseConfigurators } from "./configurators.js";
import { MIGRATION_GROUP, type MigrationPlan, type MigrationRule, migrationPlan, parseMigration } from "./migration.js";
import { colonSeparatedKey, providerApplication, type RouterChain } from "./router-chain.js";
import { checkedTuning } from "./tuning.js";

/** What a consumer's governance needs. */
export interface ConsumerGovernanceInit {
  readonly center: ConfigCenter;
  /** The chain the routing rules go to (the directory routes with it, rules or not: static tags). */
  readonly chain: RouterChain;
  /** Close the config center with the consumer (it was built for it). */
  readonly owned: boolean;
  /** The consumer's own URL (interface, version, group, application, host, `dubbo.tag`…). */
  readonly consumer: DubboUrl;
  readonly logger: Logger;
  /** Configurators changed: the directory configures its providers again. */
  readonly onConfigurators: () => void;
  /** A migration rule set the discovery of this service (undefined: no rule, or none for this service). */
  readonly onDiscovery?: (plan: MigrationPlan | undefined) => void;
}

/**
 * One consumer's view of the config center, as Dubbo Java's reference has it: the routing rules
 * (handed to a {@link RouterChain}), the configurators at service and application scope (applied
 * to each provider URL), and the migration rule of its application. Provider applications
 * learnt from the registry add their keys (`<providerApp>.tag-router`, …) as they appear.
 */
export class ConsumerGovernance {
  readonly chain: RouterChain;
  private readonly watches: RuleWatches;
  private readonly serviceKey: string;
  private readonly appKey: string;
  private serviceRules: readonly ConfiguratorEntry[] = [];
  private appRules: readonly ConfiguratorEntry[] = [];
  /** Dubbo 2.6's `override://` nodes under `/dubbo/<interface>/configurators` (Java applies them first). */
  private legacyRules: readonly ConfiguratorEntry[] = [];
  private readonly apps = new Set<string>();
  private closed = false;
  /** The migration rule in force (its `applications` entries depend on the provider applications). */
  private migrationRule: MigrationRule | undefined;
  /**
   * The consumer URL's parameters the configurators change (Java's `directoryUrl`, where its
   * failover reads `retries`); undefined when they change none.
   */
  consumerOverrides: Readonly<Record<string, string>> | undefined;

  constructor(private readonly o: ConsumerGovernanceInit) {
    this.chain = o.chain;
    const app = o.consumer.params.application ?? "";
    this.serviceKey = `${colonSeparatedKey(o.consumer)}.configurators`;
    this.appKey = `${app}.configurators`;
    this.watches = new RuleWatches(o.center, o.logger, (group, key, text) => this.rule(group, key, text));
    for (const key of this.chain.keys([])) this.watches.watch(GOVERNANCE_GROUP, key);
    this.watches.watch(GOVERNANCE_GROUP, this.serviceKey);
    if (app) {
      this.watches.watch(GOVERNANCE_GROUP, this.appKey);
      if (o.onDiscovery) this.watches.watch(MIGRATION_GROUP, `${app}.migration`);
    }
  }

  /** True while a configurator rule is set: providers are configured on every registry change. */
  get configures(): boolean {
    return this.serviceRules.length + this.appRules.length + this.legacyRules.length > 0;
  }

  /** The providers now listed: their applications' keys are followed from now on. */
  providersListed(urls: readonly DubboUrl[]): void {
    let added = false;
    for (const u of urls) {
      const app = providerApplication(u);
      if (app && !this.apps.has(app) && this.apps.size < MAX_PROVIDER_APPS) {
        this.apps.add(app);
        added = true;
      }
    }
    if (!added || this.closed) return;
    for (const key of this.chain.keys([...this.apps])) this.watches.watch(GOVERNANCE_GROUP, key);
    if (this.migrationRule && this.migrationRule.applications.size > 0) this.o.onDiscovery?.(this.plan(this.migrationRule));
  }

  /**
   * A provider URL as this consumer sees it: the consumer-side configurators applied
   * (application scope, then service scope: the service wins), matched as Java matches them
   * against its merged URL (the consumer's side and application, the provider's application as
   * `remote.application`); the parameters they change are written over the provider's own URL.
   */
  configure(url: DubboUrl): DubboUrl {
    return this.configured(url).url;
  }

  /** {@link configure}, and the parameters the rules changed (undefined: none). */
  configured(url: DubboUrl): { url: DubboUrl; overrides: Readonly<Record<string, string>> | undefined } {
    if (!this.configures) return { url, overrides: undefined };
    const merged: DubboUrl = {
      ...url,
      params: { ...url.params, "remote.application": providerApplication(url), application: this.o.consumer.params.application ?? "", side: "consumer" },
    };
    const overrides = changedParams(merged, configureUrl(merged, [this.legacyRules, this.appRules, this.serviceRules], this.o.consumer.host));
    // The parameters the rules changed, on the provider's own URL (which routers read).
    return overrides ? { url: { ...url, params: { ...url.params, ...overrides } }, overrides } : { url, overrides };
  }

  private rule(group: string, key: string, text: string | null): void {
    if (this.closed) return;
    if (group === MIGRATION_GROUP) this.migration(key, text);
    else if (key === this.serviceKey || key === this.appKey) this.configurators(key, text);
    else this.chain.setRule(key, text);
  }

  /**
   * The interface's 2.6 `override://` nodes (`/dubbo/<interface>/configurators`), applied before
   * the config center's rules as Java's `RegistryDirectory.overrideWithConfigurator` does;
   * `empty://` (Java's "no rule") and other protocols are left out.
   */
  legacyConfigurators(urls: readonly DubboUrl[], where: string): void {
    if (this.closed) return;
    const entries = checkedTuning(urls.filter((u) => u.protocol === "override").map(overrideUrlEntry), (problem) =>
      governanceLog(this.o.logger, "warn", `the configurator node under ${where}: ${problem}; that parameter is ignored`),
    );
    if (entries.length === 0 && this.legacyRules.length === 0) return;
    this.legacyRules = entries;
    governanceLog(this.o.logger, "info", `the Dubbo 2.6 configurators under ${where} apply (${entries.length} override URLs)`);
    this.reconfigure();
  }

  private configurators(key: string, text: string | null): void {
    let entries: ConfiguratorEntry[] = [];
    if (text !== null) {
      try {
        entries = checkedTuning(parseConfigurators(text), (problem) =>
          governanceLog(this.o.logger, "warn", `the rule ${key}: ${problem}; that parameter is ignored, the rest of the rule applies`),
        );
      } catch (e) {
        governanceLog(this.o.logger, "warn", `the rule ${key} is refused (${(e as Error).message}); the previous rule stays`);
        return;
      }
    }
    if (key === this.serviceKey) this.serviceRules = entries;
    else this.appRules = entries;
    governanceLog(this.o.logger, "info", `the rule ${key} ${text === null ? "was deleted" : `applies (${entries.length} entries)`}`);
    this.reconfigure();
  }

  /** The configurators changed: the consumer URL's overrides again, and the directory's providers. */
  private reconfigure(): void {
    const c = this.o.consumer;
    const self: DubboUrl = { ...c, params: { ...c.params, side: "consumer" } };
    this.consumerOverrides = this.configures
      ? changedParams(self, configureUrl(self, [this.legacyRules, this.appRules, this.serviceRules], c.host))
      : undefined;
    this.o.onConfigurators();
  }

  private migration(key: string, text: string | null): void {
    let rule: MigrationRule | undefined;
    try {
      rule = text === null ? undefined : parseMigration(text);
    } catch (e) {
      governanceLog(this.o.logger, "warn", `the migration rule ${key} is refused (${(e as Error).message}); the previous discovery stays`);
      return;
    }
    this.migrationRule = rule;
    this.o.onDiscovery?.(rule && this.plan(rule));
  }

  /** The rule's plan for this service (Java's display key: `interface[:version]`). */
  private plan(rule: MigrationRule): MigrationPlan | undefined {
    const c = this.o.consumer;
    const iface = c.params.interface ?? c.path;
    return migrationPlan(rule, c.params.version ? `${iface}:${c.params.version}` : iface, [...this.apps]);
  }

  /** Stops following the config center (closing it when it was built for this consumer). */
  async close(): Promise<void> {
    this.closed = true;
    this.watches.close();
    if (this.o.owned) await this.o.center.close?.().catch(() => {});
  }
}

/** The parameters of `after` that differ from `before`'s, or undefined when none does. */
function changedParams(before: DubboUrl, after: DubboUrl): Record<string, string> | undefined {
  if (after === before) return undefined;
  let out: Record<string, string> | undefined;
  for (const [k, v] of Object.entries(after.params)) if (before.params[k] !== v) (out ??= {})[k] = v;
  return out;
}

/** The most provider applications one consumer follows the rules of (each costs a few watches). */
const MAX_PROVIDER_APPS = 64;
