// Owns `ProviderGovernance`. The configurators a provider applies to its own URLs, as Dubbo Java's
// `RegistryProtocol` does on export: `<interface>:<version>:<group>.configurators` of each exported
// … Must not change: Dubbo 3.3's rule semantics (the oracle tests compare with Dubbo Java).
import type { Logger } from "../runtime/logger.js";
import type { DubboUrl } from "../registry/url.js";
import { type ConfigCenter, GOVERNANCE_GROUP, governanceLog, RuleWatches } from "./config-center.js";
import { type ConfiguratorEntry, configureUrl, isDisabled, parseConfigurators } from "./configurators.js";
import { checkedTuning } from "./tuning.js";
import { colonSeparatedKey } from "./router-chain.js";

/** What a provider's governance needs. */
export interface ProviderGovernanceInit {
  readonly center: ConfigCenter;
  readonly owned: boolean;
  /** The provider's application (`<app>.configurators`). */
  readonly application: string;
  readonly logger: Logger;
  /** A rule addressed to this provider changed: its URLs are configured and registered again. */
  readonly onChange: () => void;
}

/**
 * The configurators a provider applies to its own URLs, as Dubbo Java's `RegistryProtocol`
 * does on export: `<interface>:<version>:<group>.configurators` of each exported service and
 * `<app>.configurators` of its application, `side: provider` items only, matched against the
 * provider's host. The result is what the provider registers (`reExport`): a `weight` or
 * `timeout` rewritten into its URL, or, with `disabled: true`, no registration at all until the
 * rule goes.
 */
export class ProviderGovernance {
  private readonly watches: RuleWatches;
  private readonly rules = new Map<string, readonly ConfiguratorEntry[]>();
  private readonly appKey: string;

  constructor(private readonly o: ProviderGovernanceInit) {
    this.appKey = `${o.application}.configurators`;
    this.watches = new RuleWatches(o.center, o.logger, (_group, key, text) => this.rule(key, text));
    this.watches.watch(GOVERNANCE_GROUP, this.appKey);
  }

  /** Follows the rules of a service this provider exports. */
  follow(url: DubboUrl): void {
    this.watches.watch(GOVERNANCE_GROUP, `${colonSeparatedKey(url)}.configurators`);
  }

  /** A provider URL with the rules addressed to it applied; undefined when they disable it. */
  configure(url: DubboUrl): DubboUrl | undefined {
    if (this.rules.size === 0) return url;
    const lists = [this.rules.get(this.appKey) ?? [], this.rules.get(`${colonSeparatedKey(url)}.configurators`) ?? []];
    const out = configureUrl(url, lists, url.host);
    return isDisabled(out) ? undefined : out;
  }

  private rule(key: string, text: string | null): void {
    if (text === null) {
      if (!this.rules.delete(key)) return;
    } else {
      try {
        // A bad timeout, retries or balancer would be registered for every consumer to read: dropped here.
        const entries = checkedTuning(parseConfigurators(text), (problem) =>
          governanceLog(this.o.logger, "warn", `the rule ${key}: ${problem}; that parameter is ignored, the rest of the rule applies`),
        );
        this.rules.set(key, entries);
      } catch (e) {
        governanceLog(this.o.logger, "warn", `the rule ${key} is refused (${(e as Error).message}); the previous rule stays`);
        return;
      }
    }
    governanceLog(this.o.logger, "info", `the rule ${key} ${text === null ? "was deleted" : "applies"}; the provider registers its URLs again`);
    this.o.onChange();
  }

  /** Stops following (closing the config center when it was built for this provider). */
  async close(): Promise<void> {
    this.watches.close();
    if (this.o.owned) await this.o.center.close?.().catch(() => {});
  }
}
