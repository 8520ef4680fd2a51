// Owns `colonSeparatedKey`, `providerApplication`, `RouterChain`. `<interface>:<version>:<group>`,
// empty parts kept, as Java's `URL.getColonSeparatedKey()`. Must not change: Dubbo 3.3's rule
// semantics (the oracle tests compare with Dubbo Java).
import type { DubboUrl } from "../registry/url.js";
import { AffinityRouter } from "./affinity-router.js";
import { ConditionRouter, type StepContext } from "./condition-router.js";
import { RuleError } from "./rule-yaml.js";
import { FORCE_TAG_KEY, TAG_KEY, TagRouter } from "./tag-router.js";
import type { RouteCall, RouteExplanation, RouteStep, RouteTarget } from "./types.js";
import { urlSample } from "./url-sample.js";

/**
 * The routing half of Dubbo governance: the rules an operator writes into the config center
 * (condition routes v3.0 and v3.1, tag routes, affinity routes; script routes are refused) and
 * the chain that applies them to a call's provider list, in Dubbo Java's router order, with its
 * fail-fast rule. Pure: no I/O; whoever watches the config center hands the rules' text to
 * {@link RouterChain.setRule} and calls {@link RouterChain.route} per call. docs/governance.md
 * states every rule kind and where we differ from Java and dubbo-go.
 *
 * Integration: one chain per consumer reference (its consumer URL: `path` = interface, params
 * `application`, `version`, `group`, and the consumer's `host`); watch `keys(providerApps)` and
 * hand each key's text (null when deleted) to `setRule`; call `route()` on every call, also when
 * `idle` (static tags apply without rules, at the cost of one lookup), passing the same provider
 * array while the list is unchanged; on a call left with no provider, log `explain(…).text`.
 */

export type { RouteCall, RouteExplanation, RouteStep, RouteTarget } from "./types.js";

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

/** The routers of the chain in Dubbo's order (`@Activate(order)`), by their Java class names. */
const ORDER = [
  { router: "TagStateRouter", order: 100 },
  { router: "AffinityServiceStateRouter", order: 130 },
  { router: "ServiceStateRouter", order: 140 },
  { router: "ProviderAppStateRouter", order: 145 },
  { router: "AppStateRouter", order: 150 },
] as const;

type Log = (level: "warn" | "info" | "debug", msg: string) => void;

/** Whether any provider of a list carries a static tag (cached per list: the no-rule path reads only this). */
const tagged = new WeakMap<readonly RouteTarget[], boolean>();

function anyTagged(list: readonly RouteTarget[]): boolean {
  let t = tagged.get(list);
  if (t === undefined) {
    t = list.some((p) => !!p.url.params[TAG_KEY]);
    tagged.set(list, t);
  }
  return t;
}

export class RouterChain {
  private readonly consumer: DubboUrl;
  private readonly consumerSample: ReadonlyMap<string, string>;
  private readonly log: Log;
  private readonly service: string;
  private readonly app: string;
  /** Every rule's last text, by key (what arrived, used or not). */
  private readonly texts = new Map<string, string>();
  private readonly lastLog = new Map<string, string>();
  private readonly tags = new Map<string, TagRouter>();
  private readonly affinity = new AffinityRouter();
  private readonly serviceCondition = new ConditionRouter();
  /** Java's ProviderAppStateRouter listens to the consumer app's key and to the current provider app's key: the last event wins. */
  private readonly providerAppCondition = new ConditionRouter();
  private readonly appCondition = new ConditionRouter();
  private providerApp: string | undefined;
  /** The list last routed: a new array is a new provider list (Java's notify). */
  private lastList: readonly RouteTarget[] | undefined;
  private lastApp: string | undefined;
  private rules = 0;

  constructor(options: RouterChainOptions) {
    this.consumer = options.consumer;
    this.consumerSample = urlSample(options.consumer);
    this.log = options.log ?? (() => {});
    this.service = colonSeparatedKey(options.consumer);
    this.app = options.consumer.params.application ?? "";
  }

  /**
   * Config-center keys this chain reads for the given provider applications: the service
   * condition key (`<interface>:<version>:<group>.condition-router` from the consumer URL), the
   * service affinity key (`….affinity-router`), the consumer app's and each provider app's
   * `.condition-router`, each provider app's `.tag-router`, and each provider app's
   * `.script-router` (read only to be refused with one log line).
   */
  keys(providerApps: readonly string[]): string[] {
    const out = new Set<string>([`${this.service}.condition-router`, `${this.service}.affinity-router`]);
    if (this.app) out.add(`${this.app}.condition-router`);
    for (const p of providerApps) {
      if (!p) continue;
      for (const suffix of [".condition-router", ".tag-router", ".script-router"]) out.add(p + suffix);
    }
    return [...out];
  }

  /**
   * A rule's text for a key (null: deleted). A key this chain does not read → false. A rule
   * that does not parse keeps the previous one and logs one line naming the key and the error.
   * Script rules: refused, one log line per key. The same text twice is parsed once.
   */
  setRule(key: string, text: string | null): boolean {
    const m = /^(.*)\.(condition-router|tag-router|affinity-router|script-router)$/s.exec(key);
    if (!m) return false;
    const [, name, kind] = m;
    if (kind === "affinity-router" && name !== this.service) return false;
    if (text !== null && this.texts.get(key) === text) return true;
    if (text === null) this.texts.delete(key);
    else this.texts.set(key, text);
    if (kind === "script-router") {
      if (text !== null)
        this.note(
          key,
          "warn",
          `governance rule ${key} refused: script rules run code fetched from the config center (remote code execution); triple-rpc does not run them`,
        );
      return true;
    }
    try {
      const warning = this.apply(kind, name, text);
      if (warning) this.note(key, "warn", `governance rule ${key}: ${warning}`);
      else this.note(key, "info", `governance rule ${key} ${text === null ? "deleted" : "applied"}`);
    } catch (e) {
      const msg = e instanceof RuleError ? e.message : String(e);
      this.note(key, "warn", `governance rule ${key} refused, the previous rule stays: ${msg}`);
    }
    this.rules = this.texts.size;
    return true;
  }

  /** One line per key and message: a rule flapping between the same texts does not flood the log. */
  private note(key: string, level: "warn" | "info", msg: string): void {
    if (this.lastLog.get(key) === msg) return;
    this.lastLog.set(key, msg);
    this.log(level, msg);
  }

  private apply(kind: string, name: string, text: string | null): string | undefined {
    if (kind === "tag-router") {
      let t = this.tags.get(name);
      if (t === undefined) {
        t = new TagRouter();
        this.tags.set(name, t);
      }
      if (text === null) t.clear();
      else t.process(text);
      return undefined;
    }
    if (kind === "affinity-router") {
      if (text === null) this.affinity.clear();
      return text === null ? undefined : this.affinity.process(text);
    }
    return this.applyCondition(name, text);
  }

  private applyCondition(name: string, text: string | null): string | undefined {
    const feed = (r: ConditionRouter): string | undefined => {
      if (text !== null) return r.process(text);
      r.clear();
      return undefined;
    };
    if (name === this.service) return feed(this.serviceCondition);
    if (name === this.app) {
      try {
        feed(this.providerAppCondition);
      } catch {
        // the same text fails the same way for the app router below, which reports it
      }
      return feed(this.appCondition);
    }
    if (name === this.providerApp) return feed(this.providerAppCondition);
    return undefined; // a provider app Java has not subscribed to yet: read when its providers arrive
  }

  /** Java's notify: the first provider's application decides the provider-app rules. */
  private syncProviderApp(list: readonly RouteTarget[]): string {
    this.lastList = list;
    const app = providerApplication(list[0].url);
    this.lastApp = app;
    if (app && app !== this.app && app !== this.providerApp) {
      this.providerApp = app;
      const text = this.texts.get(`${app}.condition-router`);
      if (text) {
        try {
          this.providerAppCondition.process(text);
        } catch (e) {
          this.note(`${app}.condition-router`, "warn", `governance rule ${app}.condition-router refused, the previous rule stays: ${(e as Error).message}`);
        }
      }
    }
    return app;
  }

  /**
   * No rule is set. route() then applies only static tags (a provider's `dubbo.tag`, the call's
   * `dubbo.tag`/`dubbo.force.tag`), as Java's tag router always does, at the cost of one cached
   * lookup; skipping route() when idle ignores static tags.
   */
  get idle(): boolean {
    return this.rules === 0;
  }

  /**
   * The providers the rules keep for this call, in the list's order. Results are cached per
   * list: pass the same array object while the provider list is unchanged (a new array when it
   * changes), as Java caches per provider-list version.
   */
  route<T extends RouteTarget>(providers: readonly T[], call: RouteCall): readonly T[] {
    if (providers.length === 0) return providers;
    if (providers !== this.lastList) this.syncProviderApp(providers);
    if (this.rules === 0 && !anyTagged(providers)) {
      const att = call.attachments;
      const tag = att[TAG_KEY] || this.consumer.params[TAG_KEY];
      if (!tag || (att[FORCE_TAG_KEY] || this.consumer.params[FORCE_TAG_KEY] || "").toLowerCase() !== "true") return providers;
    }
    return this.run(providers, this.context(call), undefined);
  }

  private context(call: RouteCall): StepContext {
    const whenInput = { sample: this.consumerSample, method: call.method, args: call.args, attachments: call.attachments };
    return { call, consumer: this.consumer, whenInput };
  }

  private run<T extends RouteTarget>(providers: readonly T[], ctx: StepContext, steps: RouteStep[] | undefined): readonly T[] {
    const app = providers === this.lastList ? (this.lastApp as string) : this.syncProviderApp(providers);
    const routers = [this.tags.get(app) ?? NO_TAG_RULE, this.affinity, this.serviceCondition, this.providerAppCondition, this.appCondition];
    let list: readonly RouteTarget[] = providers;
    for (let i = 0; i < routers.length; i++) {
      const why: string[] | undefined = steps ? [] : undefined;
      list = routers[i].route(list, why ? { ...ctx, why } : ctx);
      if (steps && why) {
        steps.push({ router: ORDER[i].router, rule: this.ruleKeyOf(i, app), kept: list.length, message: why.join("; "), keptUrls: list.map((p) => p.url) });
      }
      if (list.length === 0) break; // Java's fail-fast (dubbo.router.should-fail-fast, default true)
    }
    return list as readonly T[];
  }

  private ruleKeyOf(i: number, app: string): string | undefined {
    const key = [`${app}.tag-router`, `${this.service}.affinity-router`, `${this.service}.condition-router`, undefined, `${this.app}.condition-router`][i];
    if (i === 3) {
      const p =
        this.providerApp !== undefined && this.texts.has(`${this.providerApp}.condition-router`)
          ? `${this.providerApp}.condition-router`
          : `${this.app}.condition-router`;
      return this.texts.has(p) ? p : undefined;
    }
    return key !== undefined && this.texts.has(key) ? key : undefined;
  }

  /** Which providers each router kept and why, in Dubbo's order, and the same as text for an operator. */
  explain<T extends RouteTarget>(providers: readonly T[], call: RouteCall): RouteExplanation {
    const steps: RouteStep[] = [];
    const kept = providers.length === 0 ? providers : this.run(providers, this.context(call), steps);
    const lines = [`route of ${this.service} ${call.method} over ${providers.length} providers (consumer ${this.app || "(no application)"}):`];
    let before = providers.length;
    steps.forEach((s, i) => {
      const which = s.kept > 0 && s.kept < before && s.kept <= 10 ? ` (${(s.keptUrls ?? []).map((u) => `${u.host}:${u.port}`).join(", ")})` : "";
      lines.push(`  ${i + 1}. ${s.router} (order ${ORDER[i].order})${s.rule ? ` [${s.rule}]` : ""}: ${s.kept} kept${which} — ${s.message || "all kept"}`);
      before = s.kept;
    });
    if (providers.length > 0 && steps.length < ORDER.length) lines.push(`  stopped after ${steps[steps.length - 1]?.router}: no provider left (fail-fast)`);
    lines.push(kept.length === 0 ? "  kept: none" : `  kept: ${kept.map((p) => `${p.url.host}:${p.url.port}`).join(", ")}`);
    return { steps, kept: kept.map((p) => p.url), text: lines.join("\n") };
  }
}

/** The tag router without a dynamic rule: static tags only. */
const NO_TAG_RULE = new TagRouter();
