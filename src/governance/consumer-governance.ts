import type { Logger } from "../runtime/logger.js";
import type { DubboUrl } from "../registry/url.js";
import { type ConfigCenter, GOVERNANCE_GROUP, governanceLog, RuleWatches } from "./config-center.js";
import { type ConfiguratorEntry, configureUrl, parseConfigurators, serviceKeyOf } from "./configurators.js";
import { MIGRATION_GROUP, migrationStep, parseMigration } from "./migration.js";
import { colonSeparatedKey, providerApplication, type RouterChain } from "./router-chain.js";

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
  /** A migration rule set the discovery of this service (undefined: the rule is gone). */
  readonly onDiscovery?: (mode: "interface" | "application" | "both" | undefined) => void;
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
  private readonly apps = new Set<string>();
  private closed = false;

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
    return this.serviceRules.length + this.appRules.length > 0;
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
  }

  /**
   * A provider URL as this consumer sees it: the consumer-side configurators applied
   * (application scope, then service scope: the service wins), matched as Java matches them
   * against its merged URL (the consumer's side and application, the provider's application as
   * `remote.application`); the parameters they change are written over the provider's own URL.
   */
  configure(url: DubboUrl): DubboUrl {
    if (!this.configures) return url;
    const merged: DubboUrl = {
      ...url,
      params: { ...url.params, "remote.application": providerApplication(url), application: this.o.consumer.params.application ?? "", side: "consumer" },
    };
    const out = configureUrl(merged, [this.appRules, this.serviceRules], this.o.consumer.host);
    if (out === merged) return url;
    // The parameters the rules changed, on the provider's own URL (which routers read).
    const params: Record<string, string> = { ...url.params };
    for (const [k, v] of Object.entries(out.params)) if (merged.params[k] !== v) params[k] = v;
    return { ...url, params };
  }

  private rule(group: string, key: string, text: string | null): void {
    if (this.closed) return;
    if (group === MIGRATION_GROUP) this.migration(key, text);
    else if (key === this.serviceKey || key === this.appKey) this.configurators(key, text);
    else this.chain.setRule(key, text);
  }

  private configurators(key: string, text: string | null): void {
    let entries: ConfiguratorEntry[] = [];
    if (text !== null) {
      try {
        entries = parseConfigurators(text);
      } catch (e) {
        governanceLog(this.o.logger, "warn", `the rule ${key} is refused (${(e as Error).message}); the previous rule stays`);
        return;
      }
    }
    if (key === this.serviceKey) this.serviceRules = entries;
    else this.appRules = entries;
    governanceLog(this.o.logger, "info", `the rule ${key} ${text === null ? "was deleted" : `applies (${entries.length} entries)`}`);
    this.o.onConfigurators();
  }

  private migration(key: string, text: string | null): void {
    if (text === null) {
      this.o.onDiscovery?.(undefined);
      return;
    }
    let step: "interface" | "application" | "both" | undefined;
    try {
      const c = this.o.consumer;
      const iface = c.params.interface ?? c.path;
      step = migrationStep(parseMigration(text), serviceKeyOf(iface, c.params.group, c.params.version), iface);
    } catch (e) {
      governanceLog(this.o.logger, "warn", `the migration rule ${key} is refused (${(e as Error).message}); the previous discovery stays`);
      return;
    }
    this.o.onDiscovery?.(step);
  }

  /** Stops following the config center (closing it when it was built for this consumer). */
  async close(): Promise<void> {
    this.closed = true;
    this.watches.close();
    if (this.o.owned) await this.o.center.close?.().catch(() => {});
  }
}

/** The most provider applications one consumer follows the rules of (each costs a few watches). */
const MAX_PROVIDER_APPS = 64;
