// Owns `ZookeeperRegistry`. Dubbo's interface-level layout on ZooKeeper, as Dubbo 3.3 (Java and Go)
// reads and writes it: `/<root>/<interface>/<providers|consumers>/<URL-encoded full URL>`, the leaf
// ephemeral, every parent persistent. Must not change: the ZooKeeper paths, URL encodings and
// metadata Apache Dubbo reads and writes.
import type { InstanceDiscovery, ProvidersListener, Registry } from "./registry.js";
import { localAddress } from "../transport/local-address.js";
import { registryLog } from "./registry.js";
import { defaultLogger, type Logger } from "../runtime/logger.js";
import { appendApp, droppedApps, listsApp, parseMapping } from "./mapping.js";
import { type DubboUrl, encodeComponent, hostPort, matchesService, parseNodeName, parseUrl, type ServiceKey, toFullString } from "./url.js";
import { ZK_BAD_VERSION, ZK_NO_AUTH, ZK_NODE_EXISTS, ZookeeperConnection, zkCode } from "./zookeeper-connection.js";

/** Options of {@link ZookeeperRegistry} beyond its address. */
export interface ZookeeperRegistryOptions {
  /** Session timeout asked of ZooKeeper, ms; default the address's `session` parameter, else 60 000 (Dubbo's). */
  sessionTimeoutMs?: number;
  /** Root node; default the address's `group` parameter, else `dubbo`. */
  root?: string;
  /** Where log lines go; default `console`. */
  logger?: Logger;
  /** Interval of retries of failed registrations and subscriptions, ms; default 5000 (Dubbo's failback). */
  retryIntervalMs?: number;
}

interface Subscription {
  /** The directory created (persistent) before listing, if any. */
  readonly dir: string | undefined;
  /** Lists again (arming the watch) and tells the listener. */
  readonly refresh: () => Promise<void>;
  /** The watch: one function per subscription, so re-listing never stacks watches. */
  readonly watch: () => void;
  active: boolean;
}

/** Root of application instances (`/services/<application>/<host>:<port>`), as Dubbo and dubbo-go write them. */
const SERVICES_ROOT = "/services";
/** How often a mapping update is tried again after a concurrent writer won the compare-and-set. */
const MAPPING_CAS_TRIES = 20;
/** A guarded node restored again within this many ms is restored after a growing wait (below). */
const RESTORE_CALM_MS = 10_000;
/** The longest wait before restoring a node another writer keeps deleting, ms. */
const RESTORE_MAX_MS = 60_000;
/** After this many quick restores in a row, one log line says another writer keeps at it. */
const RESTORE_FIGHT = 3;
/** The longest mapping text written, bytes: under ZooKeeper's default node limit (jute.maxbuffer, 1 MiB). */
const MAX_MAPPING_BYTES = 1_000_000;

/**
 * Dubbo's interface-level layout on ZooKeeper, as Dubbo 3.3 (Java and Go) reads and writes it:
 * `/<root>/<interface>/<providers|consumers>/<URL-encoded full URL>`, the leaf ephemeral, every
 * parent persistent. Providers are listed with a child watch re-armed on every event.
 *
 * The address is `zookeeper://host:port[?backup=host2:port2,host3:port3&session=ms&group=root]`.
 * Registrations survive reconnects; after a session expiry (or a server that lost its data)
 * a new session re-creates them (deleting a stale node of the old session first) and re-lists
 * every subscription. While ZooKeeper is unreachable subscribers keep their last list.
 */
/** The most 2.6-style rule nodes read per category of an interface (each one is matched on every provider change). */
const MAX_LEGACY_RULES = 1000;

export class ZookeeperRegistry implements Registry, InstanceDiscovery {
  readonly address: string;
  private readonly root: string;
  readonly logger: Logger;
  private readonly retryMs: number;
  private readonly conn: ZookeeperConnection;
  /** Paths of the nodes this registry keeps written, with their data (undefined: the host's address). */
  private readonly registered = new Map<string, Buffer | undefined>();
  private readonly subscriptions = new Set<Subscription>();
  /**
   * Persistent writes replayed on a new session, in case ZooKeeper lost its data: mappings
   * (interface → application) and metadata reports (path → JSON). Both are idempotent.
   */
  private readonly mappings = new Map<string, string>();
  private readonly reports = new Map<string, string>();
  /**
   * The watch on each node this registry keeps written (its own nodes, the mappings naming its
   * applications): one function per path, so re-arming never stacks watches.
   */
  private readonly guards = new Map<string, () => void>();
  /** Per guarded path: how often it was restored lately (backing off when another writer keeps at it). */
  private readonly restores = new Map<string, { n: number; at: number }>();
  /** Paths ZooKeeper refused to let us write (an ACL), logged already. */
  private readonly refused = new Set<string>();
  /** Mapping paths logged as cut down by {@link parseMapping}. */
  private readonly cutMappings = new Set<string>();
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly pending = new Set<() => Promise<unknown>>();
  private closed = false;
  private failing = false;

  constructor(address: string, options: ZookeeperRegistryOptions = {}) {
    const url = parseUrl(address);
    if (url.protocol.toLowerCase() !== "zookeeper") throw new TypeError(`registry ${address}: expected zookeeper://host:port`);
    if (!url.host) throw new TypeError(`registry ${address}: no host`);
    const first = hostPort(url.host, url.port || 2181);
    const backups = (url.params.backup ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    this.address = `zookeeper://${first}`;
    this.root = `/${(options.root ?? url.params.group ?? "dubbo").replace(/^\/+|\/+$/g, "")}`;
    this.logger = options.logger ?? defaultLogger;
    this.retryMs = options.retryIntervalMs ?? 5000;
    const session = options.sessionTimeoutMs ?? (Number(url.params.session) || 60_000);
    this.conn = new ZookeeperConnection({
      servers: [first, ...backups].join(","),
      address: this.address,
      sessionTimeoutMs: session,
      logger: this.logger,
      onConnected: (fresh) => this.recover(fresh),
    });
    this.conn.start();
  }

  /** The node path of a URL: `/<root>/<interface>/<category>/<encoded URL>`. */
  private nodePath(url: DubboUrl): string {
    const category = url.params.category ?? (url.params.side === "consumer" ? "consumers" : "providers");
    const iface = url.params.interface ?? url.path;
    return `${this.root}/${encodeComponent(iface)}/${category}/${encodeComponent(toFullString(url))}`;
  }

  async register(url: DubboUrl): Promise<void> {
    const path = this.nodePath(url);
    this.registered.set(path, undefined);
    // While ZooKeeper is unreachable the write waits in the client's queue: do not wait for it forever.
    await within(
      this.attempt(() => this.writeNode(path)),
      FIRST_TRY_MS,
    );
  }

  async unregister(url: DubboUrl): Promise<void> {
    const path = this.nodePath(url);
    this.guards.delete(path);
    this.restores.delete(path);
    if (!this.registered.delete(path)) return;
    if (this.conn.connected)
      await within(
        this.conn.remove(path).catch(() => {}),
        FIRST_TRY_MS,
      );
  }

  subscribe(key: ServiceKey, listener: ProvidersListener): () => void {
    const dir = `${this.root}/${encodeComponent(key.interface)}/providers`;
    return this.follow(dir, async (sub) => {
      const children = await this.conn.children(dir, sub.watch);
      if (!sub.active) return;
      const urls: DubboUrl[] = [];
      for (const name of children) {
        const url = parseNodeName(name);
        if (url && matchesService(key, url)) urls.push(url);
      }
      listener(urls);
    });
  }

  /** Starts a subscription: `dir` created if given, then `list` now, on every watch event and after reconnections. */
  private follow(dir: string | undefined, list: (sub: Subscription) => Promise<void>): () => void {
    const sub: Subscription = {
      dir,
      active: true,
      refresh: () => (sub.active ? list(sub) : Promise.resolve()),
      watch: () => {
        if (sub.active) void this.attempt(sub.refresh);
      },
    };
    this.subscriptions.add(sub);
    void this.attempt(async () => {
      if (sub.dir) await this.conn.mkdirp(sub.dir);
      await sub.refresh();
    });
    return () => {
      sub.active = false;
      this.subscriptions.delete(sub);
    };
  }

  async registerInstance(app: string, id: string, data: string): Promise<void> {
    const path = `${SERVICES_ROOT}/${app}/${id}`;
    this.registered.set(path, Buffer.from(data));
    await within(
      this.attempt(() => this.writeNode(path)),
      FIRST_TRY_MS,
    );
  }

  async unregisterInstance(app: string, id: string): Promise<void> {
    const path = `${SERVICES_ROOT}/${app}/${id}`;
    this.guards.delete(path);
    this.restores.delete(path);
    if (!this.registered.delete(path)) return;
    if (this.conn.connected)
      await within(
        this.conn.remove(path).catch(() => {}),
        FIRST_TRY_MS,
      );
  }

  async addMapping(iface: string, app: string): Promise<void> {
    const path = `${this.root}/mapping/${iface}`;
    this.mappings.set(`${path}\0${app}`, path);
    await within(
      this.attempt(() => this.casMapping(path, app)),
      FIRST_TRY_MS,
    );
  }

  /**
   * Appends `app` to the mapping node's comma-separated list with a versioned set (ZooKeeper's
   * compare-and-set), as Dubbo's `MetadataServiceNameMapping` does: a concurrent writer makes the
   * set fail, and the list is read and appended again, so no application is ever dropped. The
   * node is then watched: rewritten without `app` (or deleted) by another writer, `app` is added
   * again.
   */
  private async casMapping(path: string, app: string): Promise<boolean> {
    let wrote = false;
    for (let i = 0; i < MAPPING_CAS_TRIES; i++) {
      const cur = await this.conn.data(path);
      try {
        if (!cur) {
          await this.conn.mkdirp(path.slice(0, path.lastIndexOf("/")));
          await this.conn.createPersistent(path, Buffer.from(app));
          wrote = true;
        } else {
          const text = cur.data.toString();
          if (!listsApp(text, app)) {
            await this.conn.setData(path, mappingWithApp(path, text, app), cur.version);
            wrote = true;
          }
        }
        if (!(await this.guard(path, () => this.restoreMappings(path)))) continue; // deleted meanwhile
        return wrote;
      } catch (e) {
        if (zkCode(e) !== ZK_BAD_VERSION && zkCode(e) !== ZK_NODE_EXISTS) throw e;
        await new Promise((r) => setTimeout(r, Math.random() * 20));
      }
    }
    throw new Error(`${path}: the mapping kept changing under us (${MAPPING_CAS_TRIES} tries)`);
  }

  /** Adds again every application of ours a mapping node should list (it changed); true when one was missing. */
  private async restoreMappings(path: string): Promise<boolean> {
    let wrote = false;
    for (const [k, p] of this.mappings) if (p === path && (await this.casMapping(path, k.slice(k.indexOf("\0") + 1)))) wrote = true;
    return wrote;
  }

  /**
   * Arms the watch of a node this registry keeps written: when another writer deletes it or
   * changes its data, `restore` runs (retried like any write). False when the node is gone.
   */
  private async guard(path: string, restore: () => Promise<boolean>): Promise<boolean> {
    let watcher = this.guards.get(path);
    if (!watcher) {
      const w = () => {
        const live = () => !this.closed && this.guards.get(path) === w;
        const run = () => {
          if (live()) void this.attempt(async () => (await restore()) && this.restored(path));
        };
        const wait = this.restoreWait(path);
        if (wait === 0) run();
        else setTimeout(run, wait).unref();
      };
      this.guards.set(path, (watcher = w));
    }
    return this.conn.watchExists(path, watcher);
  }

  /**
   * How long to wait before restoring `path`: no time, unless it had to be written back less than
   * 10 s before; then 1 s, 2 s, 4 s… up to a minute. Two live processes announcing the same node
   * (the same address) would otherwise delete each other's node as fast as ZooKeeper answers.
   */
  private restoreWait(path: string): number {
    const last = this.restores.get(path);
    if (!last || Date.now() - last.at >= RESTORE_CALM_MS) return 0;
    return Math.min(1000 * 2 ** (last.n - 1), RESTORE_MAX_MS);
  }

  /** `path` had to be written back (another writer deleted or changed it). */
  private restored(path: string): void {
    const now = Date.now();
    const last = this.restores.get(path);
    const n = last && now - last.at < RESTORE_CALM_MS ? last.n + 1 : 1;
    this.restores.set(path, { n, at: now });
    if (n === RESTORE_FIGHT) {
      registryLog(
        this.logger,
        "warn",
        `${this.address}: ${path} keeps being deleted or changed by another writer (two processes announcing the same address?); writing it back at most every ${RESTORE_MAX_MS / 1000} s`,
      );
    }
  }

  /**
   * Follows a mapping node: the listener gets its first MAX_MAPPED_APPS application names (the
   * text is scanned, never split whole); what is left out is logged once per mapping path.
   */
  subscribeMapping(iface: string, listener: (apps: readonly string[]) => void): () => void {
    const path = `${this.root}/mapping/${iface}`;
    return this.follow(undefined, async (sub) => {
      const cur = await this.conn.data(path, sub.watch);
      // A missing node arms no data watch: watch for its creation instead.
      if (!cur && (await this.conn.watchExists(path, sub.watch))) return sub.refresh();
      if (!sub.active) return;
      const mapped = parseMapping(cur ? cur.data.toString() : "");
      if (mapped.ignored + mapped.invalid > 0 && !this.cutMappings.has(path)) {
        this.cutMappings.add(path);
        registryLog(this.logger, "warn", `the mapping ${path}: ${droppedApps(mapped)}`);
      }
      listener(mapped.apps);
    });
  }

  /**
   * Follows one config-center entry, as Dubbo's ZooKeeper config center lays them out
   * (`TreePathDynamicConfiguration`): the data of `/<root>/config/<group>/<key>` (`/dubbo/config/dubbo/<key>`
   * for governance rules), undefined while there is no such node. A watch event is read at most
   * every {@link CONFIG_PACE_MS}: a node rewritten 100 times a second costs 10 reads a second,
   * and the listener always ends with the latest data.
   */
  watchConfig(group: string, key: string, listener: (data: Buffer | undefined) => void): () => void {
    const path = `${this.root}/config/${group}/${key}`;
    let last = 0;
    let timer: NodeJS.Timeout | undefined;
    let stop: () => void = () => {};
    const paced = () => {
      if (timer) return;
      const run = () => {
        timer = undefined;
        last = Date.now();
        sub.watch();
      };
      const wait = last + CONFIG_PACE_MS - Date.now();
      if (wait <= 0) return run();
      timer = setTimeout(run, wait);
      timer.unref();
    };
    const sub = { watch: () => {} };
    stop = this.follow(undefined, async (s) => {
      sub.watch = s.watch;
      const cur = await this.conn.data(path, paced);
      // A missing node arms no data watch: watch for its creation instead.
      if (!cur && (await this.conn.watchExists(path, paced))) return s.refresh();
      if (s.active) listener(cur?.data);
    });
    return () => {
      clearTimeout(timer);
      stop();
    };
  }

  /**
   * Follows an interface's 2.6-style rule nodes (`/<root>/<interface>/routers` and
   * `/configurators` children, URL-encoded `route://` and `override://` URLs), as Dubbo Java's
   * registry directory subscribes to those categories: `listener` gets each category's URLs on
   * every change (at most {@link MAX_LEGACY_RULES} a category; names that are no URL skipped).
   */
  subscribeLegacyRules(iface: string, listener: (category: "routers" | "configurators", urls: readonly DubboUrl[]) => void): () => void {
    const stops = (["routers", "configurators"] as const).map((category) => {
      const dir = `${this.root}/${encodeComponent(iface)}/${category}`;
      return this.follow(dir, async (sub) => {
        const children = await this.conn.children(dir, sub.watch);
        if (!sub.active) return;
        listener(
          category,
          children.slice(0, MAX_LEGACY_RULES).flatMap((name) => parseNodeName(name) ?? []),
        );
      });
    });
    return () => {
      for (const stop of stops) stop();
    };
  }

  subscribeInstances(app: string, listener: (instances: readonly Buffer[]) => void): () => void {
    const dir = `${SERVICES_ROOT}/${app}`;
    return this.follow(dir, async (sub) => {
      const children = await this.conn.children(dir, sub.watch);
      // Each instance's data is watched too: a provider re-publishes its revision in place.
      const data = await Promise.all(children.map((c) => this.conn.data(`${dir}/${c}`, sub.watch)));
      if (sub.active) listener(data.flatMap((d) => (d ? [d.data] : [])));
    });
  }

  async putMetadata(app: string, revision: string, json: string): Promise<void> {
    const path = `${this.root}/metadata/${app}/${revision}`;
    this.reports.set(path, json);
    await within(
      this.attempt(() => this.writeReport(path)),
      FIRST_TRY_MS,
    );
  }

  private async writeReport(path: string): Promise<void> {
    const json = this.reports.get(path);
    if (json === undefined) return;
    await this.conn.mkdirp(path.slice(0, path.lastIndexOf("/")));
    try {
      await this.conn.createPersistent(path, Buffer.from(json));
    } catch (e) {
      if (zkCode(e) !== ZK_NODE_EXISTS) throw e;
    }
  }

  async getMetadata(app: string, revision: string): Promise<string | undefined> {
    return (await this.conn.data(`${this.root}/metadata/${app}/${revision}`))?.data.toString();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    for (const s of this.subscriptions) s.active = false;
    this.subscriptions.clear();
    if (this.conn.connected) {
      const removals = [...this.registered.keys()].map((p) => this.conn.remove(p).catch(() => {}));
      await within(Promise.all(removals), FIRST_TRY_MS);
    }
    this.registered.clear();
    await this.conn.close();
  }

  /**
   * Writes one ephemeral node; a node left by an earlier session (or written by another writer)
   * is deleted and written again (Dubbo does the same); one of this session whose data differs is
   * updated in place. The node is then watched: deleted or changed by another writer while our
   * session lives, it is written again. A write ZooKeeper refuses (an ACL) is logged once per node
   * and retried like any failed write.
   */
  private async writeNode(path: string): Promise<boolean> {
    let wrote: boolean;
    try {
      wrote = await this.writeNodeOnce(path);
    } catch (e) {
      if (zkCode(e) === ZK_NO_AUTH && this.registered.has(path)) {
        // Said here, in words, once per node; attempt() retries it without a line of its own.
        reported.add(e as object);
        if (this.refused.has(path)) throw e;
        this.refused.add(path);
        registryLog(
          this.logger,
          "error",
          `${this.address}: ZooKeeper refuses to write ${path} (NO_AUTH: an ACL on ${path.slice(0, path.lastIndexOf("/")) || "/"} or above does not let this session create or delete there); consumers do not see this node until the ACL allows it again; retrying every ${this.retryMs} ms`,
        );
      }
      throw e;
    }
    if (this.refused.delete(path)) registryLog(this.logger, "warn", `${this.address}: ${path} written again`);
    return wrote;
  }

  /** One try of {@link writeNode}: true when something was written (created, replaced or set). */
  private async writeNodeOnce(path: string): Promise<boolean> {
    if (!this.registered.has(path)) return false;
    const own = this.registered.get(path);
    await this.conn.mkdirp(path.slice(0, path.lastIndexOf("/")));
    // Unregistered while the parents were made: its delete went first, so creating it now would
    // leave a node nothing removes (until the session ends). Checked again before every write.
    if (!this.registered.has(path)) return false;
    const data = own ?? Buffer.from(localAddress());
    let wrote = true;
    try {
      await this.conn.createEphemeral(path, data);
    } catch (e) {
      if (zkCode(e) !== ZK_NODE_EXISTS) throw e;
      const cur = await this.conn.data(path);
      if (cur && cur.owner === this.conn.session) {
        // Only a change of data worth writing: our own write fires the watch too.
        wrote = !!own && !cur.data.equals(own);
        if (wrote) await this.conn.setData(path, own as Buffer, -1);
      } else {
        await this.conn.remove(path);
        if (!this.registered.has(path)) return false;
        await this.conn.createEphemeral(path, data);
      }
    }
    if (!this.registered.has(path)) return wrote;
    // Deleted again before the watch was armed: write it again.
    if (!(await this.guard(path, () => this.writeNode(path)))) throw new Error(`${path} was deleted as it was written`);
    return wrote;
  }

  /**
   * After a (re)connection: a new session lost every ephemeral node and watch, so write the
   * nodes again; either way list every subscription again (changes may have been missed).
   */
  private recover(fresh: boolean): void {
    if (this.closed) return;
    // Operations queued on a client that was replaced are lost, so a new session replays
    // everything, the first one included (a node this session already wrote is left alone).
    if (fresh) {
      for (const path of this.registered.keys()) void this.attempt(() => this.writeNode(path));
      for (const path of this.reports.keys()) void this.attempt(() => this.writeReport(path));
      for (const [k, path] of this.mappings) void this.attempt(() => this.casMapping(path, k.slice(k.indexOf("\0") + 1)));
    }
    for (const sub of this.subscriptions) {
      void this.attempt(async () => {
        if (fresh && sub.dir) await this.conn.mkdirp(sub.dir);
        await sub.refresh();
      });
    }
  }

  /**
   * Runs a ZooKeeper operation; one that fails is retried every `retryIntervalMs` until it
   * succeeds, the registry closes, or a new session replays everything anyway. Resolves after
   * the first try, whatever its outcome (a registry outage must not stop a server or a client).
   */
  private async attempt(op: () => Promise<unknown>): Promise<void> {
    if (this.closed) return;
    try {
      await op();
      this.failing = false;
    } catch (e) {
      if (this.closed) return;
      if (!this.failing && !reported.has(e as object)) {
        this.failing = true;
        registryLog(this.logger, "warn", `${this.address}: ${(e as Error).message}; retrying every ${this.retryMs} ms`);
      }
      this.pending.add(op);
      this.scheduleRetry();
    }
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      const ops = [...this.pending];
      this.pending.clear();
      for (const op of ops) void this.attempt(op);
    }, this.retryMs);
    this.retryTimer.unref();
  }
}

/** Errors already logged in words where they happened: attempt() retries them without a line of its own. */
const reported = new WeakSet<object>();

/** The least time between two reads of a config-center entry that keeps changing, ms. */
const CONFIG_PACE_MS = 100;

/** How long `register()` waits for its first write before resolving anyway, ms. */
const FIRST_TRY_MS = 3000;

/** `promise`, or undefined once `ms` passed. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The mapping text with `app` appended, refused past ZooKeeper's node limit (the set would end our connection). */
function mappingWithApp(path: string, text: string, app: string): Buffer {
  const next = Buffer.from(appendApp(text, app));
  if (next.length > MAX_MAPPING_BYTES) {
    throw new Error(`${path}: adding ${app} would make it ${next.length} bytes, past ZooKeeper's 1 MiB node limit`);
  }
  return next;
}
