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
import { fetchMetadataV2 } from "./metadata-client.js";
import { type InstanceDiscovery, type Registry, registryLog } from "./registry.js";
import { type DubboUrl, matchesService, type ServiceKey } from "./url.js";

/** How many application revisions a consumer keeps the metadata of. */
const CACHED_REVISIONS = 256;
/** First and longest wait before asking again for metadata that could not be had, ms (doubling in between). */
const METADATA_RETRY_MS = 1000;
const METADATA_RETRY_MAX_MS = 30_000;

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
export class InstanceSubscription {
  private readonly apps = new Map<string, AppState>();
  private readonly metadata: Map<string, Promise<MetadataInfo>>;
  private readonly logged = new Set<string>();
  private readonly stopMapping: (() => void) | undefined;
  private closed = false;

  constructor(private readonly o: InstanceSubscriptionOptions) {
    this.metadata = metadataCache(o.registry);
    if (o.providedBy && o.providedBy.length > 0) this.setApps(o.providedBy);
    else this.stopMapping = o.registry.subscribeMapping(o.key.interface, (apps) => this.setApps(apps));
  }

  close(): void {
    this.closed = true;
    this.stopMapping?.();
    for (const a of this.apps.values()) {
      a.stop();
      clearTimeout(a.retry);
    }
    this.apps.clear();
  }

  private setApps(apps: readonly string[]): void {
    if (this.closed) return;
    const wanted = new Set(apps);
    let changed = false;
    for (const [app, state] of this.apps) {
      if (wanted.has(app)) continue;
      state.stop();
      clearTimeout(state.retry);
      this.apps.delete(app);
      changed = true;
    }
    for (const app of wanted) {
      if (this.apps.has(app)) continue;
      const state: AppState = { urls: [], generation: 0, stop: () => {}, raw: [], retry: undefined, retryMs: METADATA_RETRY_MS };
      this.apps.set(app, state);
      state.stop = this.o.registry.subscribeInstances(app, (raw) => this.update(app, state, raw));
    }
    if (changed) this.emit();
  }

  /**
   * Applies a notification. Whatever it throws (data no one foresaw) is logged once per
   * application and message, never an unhandled rejection: that would end the process.
   */
  private update(app: string, state: AppState, raw: readonly Buffer[]): void {
    this.onInstances(app, state, raw).catch((e: unknown) => {
      const message = e instanceof Error ? e.message : String(e);
      const cause = `${app}\0update\0${message}`;
      if (this.logged.has(cause)) return;
      this.logged.add(cause);
      registryLog(this.o.logger, "warn", `the instances of ${app} could not be applied: ${message}`);
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
    state.urls = lists.flatMap((l) => l ?? []);
    this.emit();
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

  private emit(): void {
    if (this.closed) return;
    this.o.listener([...this.apps.values()].flatMap((a) => a.urls));
  }

  /**
   * The matching `tri://` providers of one instance: none when its metadata is of a kind we cannot
   * read, undefined when it could not be had this time (worth asking again). Logged once.
   */
  private async urlsOf(app: string, inst: ServiceInstance): Promise<DubboUrl[] | undefined> {
    const revision = inst.metadata[META.revision];
    if (!revision || revision === EMPTY_REVISION) return [];
    try {
      const info = await this.metadataOf(app, inst, revision);
      return instanceUrls(inst, info).filter((u) => u.protocol === "tri" && matchesService(this.o.key, u));
    } catch (e) {
      const cause = `${app}\0${revision}`;
      if (!this.logged.has(cause)) {
        this.logged.add(cause);
        const again = e instanceof UnsupportedMetadata ? "" : "; asking again later";
        registryLog(this.o.logger, "warn", `instance ${inst.host}:${inst.port} of ${app} skipped: no metadata for revision ${revision}: ${(e as Error).message}${again}`);
      }
      return e instanceof UnsupportedMetadata ? [] : undefined;
    }
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

  private async fetch(app: string, inst: ServiceInstance, revision: string): Promise<MetadataInfo> {
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
