// Owns `InstanceSubscription`. A consumer's application-level view of one service: the applications
// providing its interface (the mapping `/dubbo/mapping/<interface>`, or `providedBy`), their
// instances … Must not change: the ZooKeeper paths, URL encodings and metadata Apache Dubbo reads
// and writes.
import type * as tls from "node:tls";
import type { Logger } from "../runtime/logger.js";
import {
  EMPTY_REVISION,
  instanceUrls,
  META,
  METADATA_V2_VERSION,
  type MetadataInfo,
  metadataServiceEndpoint,
  parseInstance,
  type ServiceInstance,
  toMetadataInfo,
} from "./instance.js";
import { droppedApps, mappedApps } from "./mapping.js";
import { fetchMetadataV2 } from "./metadata-client.js";
import { Pacer, type Starter } from "./pacer.js";
import { type InstanceDiscovery, type Registry, registryLog } from "./registry.js";
import { type DubboUrl, hostPort, matchesService, type ServiceKey } from "./url.js";

/** How many application revisions a consumer keeps the metadata of. */
const CACHED_REVISIONS = 256;
/** First and longest wait before asking again for metadata that could not be had, ms (doubling in between). */
const METADATA_RETRY_MS = 1000;
const METADATA_RETRY_MAX_MS = 30_000;
/**
 * New application subscriptions a registry starts, at most: {@link START_PER_WINDOW} every
 * {@link START_WINDOW_MS} ms (100 a second), shared by every client following that registry.
 */
const START_PER_WINDOW = 10;
const START_WINDOW_MS = 100;
/** How many causes (instances, applications) a subscription remembers having logged. */
const MAX_LOGGED = 1024;

/** The pace of new application subscriptions, per registry. */
const pacers = new WeakMap<object, Pacer>();

function pacerOf(registry: object): Pacer {
  let pacer = pacers.get(registry);
  if (!pacer) pacers.set(registry, (pacer = new Pacer(START_PER_WINDOW, START_WINDOW_MS)));
  return pacer;
}

/**
 * The metadata fetched so far, per registry (so per process, as Java caches it per application):
 * clients of several interfaces of one application ask for a revision once between them.
 */
const metadataCaches = new WeakMap<object, Map<string, Promise<MetadataInfo>>>();

function metadataCache(registry: object): Map<string, Promise<MetadataInfo>> {
  let cache = metadataCaches.get(registry);
  if (!cache) metadataCaches.set(registry, (cache = new Map()));
  return cache;
}

/** Metadata this client cannot read at all (MetadataService v1, a dubbo:// endpoint): not asked again. */
class UnsupportedMetadata extends Error {}

/**
 * Metadata that does not describe the instance that answered it (another application or
 * revision than its instance node names): that instance is rejected for that revision. `from`
 * names the instance asked (`host:port`); others sharing the fetch ask for themselves later.
 */
class MetadataMismatch extends UnsupportedMetadata {
  constructor(
    message: string,
    readonly from: string,
  ) {
    super(message);
  }
}

/** Settings of an {@link InstanceSubscription}. */
export interface InstanceSubscriptionOptions {
  readonly registry: Registry & InstanceDiscovery;
  readonly key: ServiceKey;
  /** The applications providing the interface (Dubbo's `provided-by`); else the mapping is read and followed. */
  readonly providedBy: readonly string[] | undefined;
  /** Gets every matching `tri://` provider found at application level, on every change. */
  readonly listener: (urls: readonly DubboUrl[]) => void;
  readonly logger: Logger;
  /** TLS options: providers (and so their MetadataServiceV2) are `https://`; undefined for cleartext. */
  readonly tls?: tls.ConnectionOptions;
}

interface AppState {
  stop: () => void;
  urls: readonly DubboUrl[];
  /** Bumped on every notification: an older one finishing late is dropped. */
  generation: number;
  /** The instances last notified, read again when some metadata could not be had. */
  raw: readonly Buffer[];
  retry: NodeJS.Timeout | undefined;
  retryMs: number;
}

/**
 * A consumer's application-level view of one service: the applications providing its interface
 * (the mapping `/dubbo/mapping/<interface>`, or `providedBy`), their instances
 * (`/services/<application>`), and for each revision of an application's metadata, fetched once
 * (MetadataServiceV2, or the metadata report for `storage-type=remote`), the services the
 * instances offer. Keeps the `tri://` ones matching the key (interface, version, group, enabled).
 */
export class InstanceSubscription implements Starter {
  /** The applications followed (started), each with its instances' providers. */
  private readonly apps = new Map<string, AppState>();
  /** The applications to follow, in the mapping's order (at most MAX_MAPPED_APPS); some may wait to be started. */
  private wanted: readonly string[] = [];
  private readonly metadata: Map<string, Promise<MetadataInfo>>;
  private readonly logged = new Set<string>();
  /** Instances (`host:port` and revision) whose metadata named another application or revision: not asked again. */
  private readonly rejected = new Set<string>();
  private readonly stopMapping: (() => void) | undefined;
  private readonly pacer: Pacer;
  private emitting: NodeJS.Immediate | undefined;
  private closed = false;

  constructor(private readonly o: InstanceSubscriptionOptions) {
    this.metadata = metadataCache(o.registry);
    this.pacer = pacerOf(o.registry);
    if (o.providedBy && o.providedBy.length > 0) this.setApps(o.providedBy);
    else this.stopMapping = o.registry.subscribeMapping(o.key.interface, (apps) => this.setApps(apps));
  }

  close(): void {
    this.closed = true;
    this.pacer.cancel(this);
    clearImmediate(this.emitting);
    this.stopMapping?.();
    for (const a of this.apps.values()) {
      a.stop();
      clearTimeout(a.retry);
    }
    this.apps.clear();
  }

  /**
   * The applications providing the interface changed: those no longer listed are dropped at once,
   * new ones are started through the registry's pacer (a few every 100 ms), at most
   * MAX_MAPPED_APPS of them, valid names only (the rest logged once).
   */
  private setApps(list: readonly string[]): void {
    if (this.closed) return;
    const mapped = mappedApps(list);
    if (mapped.ignored + mapped.invalid > 0) this.logOnce("apps", `the applications of ${this.o.key.interface}: ${droppedApps(mapped)}`);
    const apps = mapped.apps;
    this.wanted = apps;
    const wanted = new Set(apps);
    let changed = false;
    for (const [app, state] of this.apps) {
      if (wanted.has(app)) continue;
      state.stop();
      clearTimeout(state.retry);
      this.apps.delete(app);
      changed = true;
    }
    if (apps.some((a) => !this.apps.has(a))) this.pacer.request(this);
    if (changed) this.emitSoon();
  }

  /** Starts following the next wanted application (called by the pacer); false when none waits. */
  startNext(): boolean {
    if (this.closed) return false;
    const app = this.wanted.find((a) => !this.apps.has(a));
    if (app === undefined) return false;
    const state: AppState = { urls: [], generation: 0, stop: () => {}, raw: [], retry: undefined, retryMs: METADATA_RETRY_MS };
    this.apps.set(app, state);
    state.stop = this.o.registry.subscribeInstances(app, (raw) => this.update(app, state, raw));
    return true;
  }

  /** Logs `message` once per `cause` (at most MAX_LOGGED causes remembered). */
  private logOnce(cause: string, message: string): void {
    if (this.logged.has(cause)) return;
    if (this.logged.size >= MAX_LOGGED) this.logged.clear();
    this.logged.add(cause);
    registryLog(this.o.logger, "warn", message);
  }

  /**
   * Applies a notification. Whatever it throws (data no one foresaw) is logged once per
   * application and message, never an unhandled rejection: that would end the process.
   */
  private update(app: string, state: AppState, raw: readonly Buffer[]): void {
    this.onInstances(app, state, raw).catch((e: unknown) => {
      const message = e instanceof Error ? e.message : String(e);
      this.logOnce(`${app}\0update\0${message}`, `the instances of ${app} could not be applied: ${message}`);
    });
  }

  private async onInstances(app: string, state: AppState, raw: readonly Buffer[]): Promise<void> {
    const generation = ++state.generation;
    state.raw = raw;
    clearTimeout(state.retry);
    state.retry = undefined;
    const instances = raw.map((d) => parseInstance(d)).filter((i): i is ServiceInstance => i !== undefined);
    const lists = await Promise.all(instances.map((inst) => this.urlsOf(app, inst)));
    if (this.closed || state.generation !== generation || this.apps.get(app) !== state) return;
    const urls = lists.flatMap((l) => l ?? []);
    if (urls.length > 0 || state.urls.length > 0) this.emitSoon();
    state.urls = urls;
    this.retryLater(app, state, lists.includes(undefined));
  }

  /**
   * Metadata that could not be had (an instance not answering yet, a timeout) is asked for again
   * after 1 s, then 2, 4… up to 30 s, until it comes or the instances change; Dubbo retries too.
   */
  private retryLater(app: string, state: AppState, failed: boolean): void {
    if (!failed) {
      state.retryMs = METADATA_RETRY_MS;
      return;
    }
    const wait = state.retryMs;
    state.retryMs = Math.min(wait * 2, METADATA_RETRY_MAX_MS);
    state.retry = setTimeout(() => this.update(app, state, state.raw), wait);
    state.retry.unref();
  }

  /**
   * Tells the listener the whole list once the notifications at hand are applied: one list per
   * turn of the event loop, not one per application (hundreds of applications notified at once
   * would each rebuild the whole list).
   */
  private emitSoon(): void {
    if (this.emitting || this.closed) return;
    this.emitting = setImmediate(() => {
      this.emitting = undefined;
      if (!this.closed) this.o.listener([...this.apps.values()].flatMap((a) => a.urls));
    });
  }

  /**
   * The matching `tri://` providers of one instance: none when its metadata is of a kind we cannot
   * read or does not describe it, undefined when it could not be had this time (worth asking
   * again). Logged once per cause.
   */
  private async urlsOf(app: string, inst: ServiceInstance): Promise<DubboUrl[] | undefined> {
    const revision = inst.metadata[META.revision];
    if (!revision || revision === EMPTY_REVISION) return [];
    const at = hostPort(inst.host, inst.port);
    if (inst.app !== app) {
      this.logOnce(`${at}\0${app}\0name`, `instance ${at} under ${app} rejected: its node names application ${JSON.stringify(clip(inst.app))}`);
      return [];
    }
    if (this.rejected.has(`${at}\0${app}\0${revision}`)) return [];
    try {
      const info = await this.metadataOf(app, inst, revision);
      return instanceUrls(inst, info).filter((u) => u.protocol === "tri" && matchesService(this.o.key, u));
    } catch (e) {
      return this.fetchFailed(app, at, revision, e as Error);
    }
  }

  /** What an instance gets when the metadata of its revision could not be had (see {@link urlsOf}). */
  private fetchFailed(app: string, at: string, revision: string, e: Error): DubboUrl[] | undefined {
    if (e instanceof MetadataMismatch) {
      // Another instance's answer (a shared fetch): this one asks for itself next time.
      if (e.from !== at) return undefined;
      if (this.rejected.size >= MAX_LOGGED) this.rejected.clear();
      this.rejected.add(`${at}\0${app}\0${revision}`);
      this.logOnce(`${at}\0${app}\0${revision}`, `instance ${at} of ${app} rejected: ${e.message}`);
      return [];
    }
    const again = e instanceof UnsupportedMetadata ? "" : "; asking again later";
    this.logOnce(`${app}\0${revision}`, `instance ${at} of ${app} skipped: no metadata for revision ${clip(revision)}: ${e.message}${again}`);
    return e instanceof UnsupportedMetadata ? [] : undefined;
  }

  /** The metadata of `app` at `revision`, fetched once (a failure is forgotten, so the next notification tries again). */
  private metadataOf(app: string, inst: ServiceInstance, revision: string): Promise<MetadataInfo> {
    const key = `${app}\0${revision}`;
    let p = this.metadata.get(key);
    if (!p) {
      p = this.fetch(app, inst, revision);
      const cached = p;
      // A failure is forgotten (unless a newer attempt took its place), so the next notification or retry asks again.
      p.catch(() => {
        if (this.metadata.get(key) === cached) this.metadata.delete(key);
      });
      this.metadata.set(key, p);
      if (this.metadata.size > CACHED_REVISIONS) this.metadata.delete(this.metadata.keys().next().value as string);
    }
    return p;
  }

  /** The metadata of `inst` at `revision`, checked against its instance node (application and revision). */
  private async fetch(app: string, inst: ServiceInstance, revision: string): Promise<MetadataInfo> {
    const info = await this.fetchUnchecked(app, inst, revision);
    if (info.app !== app || info.revision !== revision) {
      const named = `application ${JSON.stringify(clip(info.app))} revision ${JSON.stringify(clip(info.revision))}`;
      throw new MetadataMismatch(
        `its metadata names ${named}, not ${app} revision ${clip(revision)} as its instance node does`,
        hostPort(inst.host, inst.port),
      );
    }
    return info;
  }

  private async fetchUnchecked(app: string, inst: ServiceInstance, revision: string): Promise<MetadataInfo> {
    if (inst.metadata[META.storageType] === "remote") {
      const json = await this.o.registry.getMetadata(app, revision);
      if (!json) throw new Error(`the metadata report has no ${app}/${revision}`);
      return toMetadataInfo(json, revision);
    }
    const endpoint = metadataServiceEndpoint(inst);
    if (endpoint.protocol !== "tri" || inst.metadata[META.version] !== METADATA_V2_VERSION) {
      throw new UnsupportedMetadata(
        `its MetadataService is ${endpoint.protocol}:// version ${inst.metadata[META.version] ?? "1"}; only MetadataServiceV2 over Triple (meta-v=${METADATA_V2_VERSION}) is supported`,
      );
    }
    // A port no socket can have ("NaN", 0, 70000) would dial the host's port 80.
    if (!Number.isInteger(endpoint.port) || endpoint.port < 1 || endpoint.port > 65535) {
      throw new UnsupportedMetadata(`its MetadataService port ${String(endpoint.port)} is not a port (1-65535)`);
    }
    return fetchMetadataV2(inst.host, endpoint.port, app, revision, this.o.tls);
  }
}

/** Registry text (a revision, a name) as a log line quotes it: at most 200 characters. */
function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
