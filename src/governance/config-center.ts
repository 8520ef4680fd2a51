// Owns `GOVERNANCE_GROUP`, `resolveConfigCenter`, `governanceLog`, `RuleWatches`. The config-center
// group of governance rules (`/dubbo/config/dubbo/<key>`): Dubbo's `DEFAULT_GROUP`. Must not
// change: Dubbo 3.3's rule semantics (the oracle tests compare with Dubbo Java).
import type { Logger } from "../runtime/logger.js";
import type { Registry } from "../registry/registry.js";
import { ZookeeperRegistry } from "../registry/zookeeper.js";
import { MAX_RULE_BYTES } from "./config-yaml.js";

/**
 * Where governance rules are read: Dubbo's config center. `ZookeeperRegistry` is one (the
 * registry doubles as the config center, as Dubbo Java does by default); any object with
 * `watchConfig` can be given as `configCenter`.
 */
export interface ConfigCenter {
  /** Named in log lines. */
  readonly address: string;
  /**
   * Follows `<group>/<key>` (on ZooKeeper `/dubbo/config/<group>/<key>`): the listener gets its
   * data now and on every change, undefined while there is none. Returns the function that stops.
   */
  watchConfig(group: string, key: string, listener: (data: Buffer | undefined) => void): () => void;
  /** Closes it (only a config center built from an address is closed by its user). */
  close?(): Promise<void>;
}

/** A key whose text took `t` ms to apply waits `COST_FACTOR × t` ms before its next text. */
const COST_FACTOR = 9;
/** The longest cool-down of a key, ms. */
const MAX_COOL_DOWN_MS = 5000;

/** The config-center group of governance rules (`/dubbo/config/dubbo/<key>`): Dubbo's `DEFAULT_GROUP`. */
export const GOVERNANCE_GROUP = "dubbo";

/** True for an object implementing {@link ConfigCenter}. */
function isConfigCenter(x: unknown): x is ConfigCenter {
  return typeof x === "object" && x !== null && typeof (x as ConfigCenter).watchConfig === "function" && typeof (x as ConfigCenter).address === "string";
}

/** What the `configCenter` option of a client or server takes. */
export type ConfigCenterSpec = string | ConfigCenter | false;

/**
 * The config center of a client or server: `false` none; an address (`zookeeper://host:port`) a
 * ZooKeeper of its own (closed with its user); an object as given; unset, the registry when it
 * can be one (ZooKeeper), else none.
 */
export function resolveConfigCenter(
  spec: ConfigCenterSpec | undefined,
  registry: Registry | undefined,
  who: string,
  logger: Logger,
): { center: ConfigCenter; owned: boolean } | undefined {
  if (spec === false) return undefined;
  if (spec === undefined) return registry && isConfigCenter(registry) ? { center: registry, owned: false } : undefined;
  if (isConfigCenter(spec)) return { center: spec, owned: false };
  if (typeof spec === "string" && /^zookeeper:\/\//i.test(spec)) return { center: new ZookeeperRegistry(spec, { logger }), owned: true };
  const shown = typeof spec === "string" ? JSON.stringify(spec) : `a ${typeof spec}`;
  throw new TypeError(
    `${who}: registry.configCenter must be false, an address ("zookeeper://127.0.0.1:2181") or an object with watchConfig(group, key, listener); got ${shown}`,
  );
}

/** The one way governance code logs: through the server's or client's `logger`, prefixed `triple-rpc governance:`. */
export function governanceLog(logger: Logger, level: "debug" | "info" | "warn" | "error", message: string): void {
  // `debug` goes only to a logger that has it (pino's does; the default logger has none).
  const log = (logger as unknown as Partial<Record<string, Logger["info"]>>)[level];
  if (typeof log === "function") log.call(logger, { component: "governance" }, `triple-rpc governance: ${message}`);
}

/**
 * The config-center keys one client or server follows: each key watched once, its text handed
 * on only when it changed, a rule past {@link MAX_RULE_BYTES} refused (one log line; the
 * previous rule stays). `onRule` gets null when the key's node is deleted.
 */
export class RuleWatches {
  private readonly stops = new Map<string, () => void>();
  private readonly texts = new Map<string, string | null>();
  /** Per key: when its next text may be handed on (cost pacing), and the latest text waiting until then. */
  private readonly paced = new Map<string, { nextAt: number; waiting?: Buffer | undefined; timer?: NodeJS.Timeout }>();
  private closed = false;

  constructor(
    private readonly center: ConfigCenter,
    private readonly logger: Logger,
    private readonly onRule: (group: string, key: string, text: string | null) => void,
  ) {}

  /** Follows `<group>/<key>` (once, however often asked). */
  watch(group: string, key: string): void {
    const id = `${group}/${key}`;
    if (this.closed || this.stops.has(id)) return;
    this.stops.set(
      id,
      this.center.watchConfig(group, key, (data) => this.received(group, key, data)),
    );
  }

  /** True while `<group>/<key>` holds a rule. */
  has(group: string, key: string): boolean {
    return (this.texts.get(`${group}/${key}`) ?? null) !== null;
  }

  /**
   * A key's new data: handed on now, or, while the key is cooling down after an expensive
   * parse, kept (the latest wins) until the cool-down ends. Parsing a rule costs up to a few
   * hundred ms; a key then waits {@link COST_FACTOR} times as long before its next text, so a
   * rule flapping 100 times a second takes at most a tenth of the CPU.
   */
  private received(group: string, key: string, data: Buffer | undefined): void {
    if (this.closed) return;
    const id = `${group}/${key}`;
    const p = this.paced.get(id);
    const now = performance.now();
    if (p && now < p.nextAt) {
      p.waiting = data;
      p.timer ??= setTimeout(() => {
        p.timer = undefined;
        p.nextAt = 0;
        this.received(group, key, p.waiting);
      }, p.nextAt - now);
      p.timer.unref();
      return;
    }
    this.handOn(group, key, id, data);
    const cost = performance.now() - now;
    if (cost >= 1) this.paced.set(id, { nextAt: performance.now() + Math.min(cost * COST_FACTOR, MAX_COOL_DOWN_MS) });
    else this.paced.delete(id);
  }

  private handOn(group: string, key: string, id: string, data: Buffer | undefined): void {
    if (data && data.length > MAX_RULE_BYTES) {
      governanceLog(
        this.logger,
        "warn",
        `${this.center.address}: the rule ${id} is ${data.length} bytes, more than the ${MAX_RULE_BYTES} a rule may have; refused, the previous rule stays`,
      );
      return;
    }
    const text = data === undefined || data.length === 0 ? null : data.toString("utf8");
    // Unchanged (a watch that fired for our own re-read, or nothing there from the start): no news.
    if ((this.texts.get(id) ?? null) === text) {
      this.texts.set(id, text);
      return;
    }
    this.texts.set(id, text);
    this.onRule(group, key, text);
  }

  /** Stops following every key. */
  close(): void {
    this.closed = true;
    for (const p of this.paced.values()) clearTimeout(p.timer);
    for (const stop of this.stops.values()) stop();
    this.stops.clear();
  }
}
