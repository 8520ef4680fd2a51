// Owns `isRegistry`, `registryLog`, `hasInstanceDiscovery`. True for an object implementing
// Registry. Must not change: the ZooKeeper paths, URL encodings and metadata Apache Dubbo reads and
// writes.
import type { Logger } from "../runtime/logger.js";
import type { DubboUrl, ServiceKey } from "./url.js";

/** Receives the current providers of a subscription: every matching provider, each time the list changes. */
export type ProvidersListener = (providers: readonly DubboUrl[]) => void;

/**
 * A service registry, in Dubbo's terms: providers register their URL, consumers subscribe to
 * an interface and are told its providers whenever they change. `ZookeeperRegistry` is the
 * built-in one; etcd, Nacos or Kubernetes registries implement the same four methods.
 *
 * A registry given to `createServer` / `createClient` as an object is shared and never closed by
 * them; one they create from an address (`"zookeeper://…"`) is theirs and closed with them.
 */
export interface Registry {
  /** The registry's address, as failover messages and logs name it (`zookeeper://127.0.0.1:2181`). */
  readonly address: string;
  /**
   * Where the registry's log lines, and those of the clients following it, go. Optional: a
   * registry built from an address logs through the server's or client's `logger`.
   */
  readonly logger?: Logger;
  /**
   * Publishes a URL (a provider, or a consumer's own node) for as long as this process lives:
   * kept across reconnects and re-created after the registry lost it. Resolves once it is
   * written, or once the first attempt failed or took too long (ZookeeperRegistry: 3 s); it is
   * then retried in the background.
   */
  register(url: DubboUrl): Promise<void>;
  /** Removes a URL registered before. */
  unregister(url: DubboUrl): Promise<void>;
  /**
   * Follows the providers of a service; `listener` gets the whole matching list on every change.
   * Returns the function that stops following.
   */
  subscribe(key: ServiceKey, listener: ProvidersListener): () => void;
  /** Unregisters everything, stops every subscription and disconnects. */
  close(): Promise<void>;
}

/** True for an object implementing {@link Registry}. */
export function isRegistry(x: unknown): x is Registry {
  return (
    typeof x === "object" &&
    x !== null &&
    typeof (x as Registry).address === "string" &&
    typeof (x as Registry).register === "function" &&
    typeof (x as Registry).unregister === "function" &&
    typeof (x as Registry).subscribe === "function" &&
    typeof (x as Registry).close === "function"
  );
}

/**
 * The one way registry code logs: through the server's or client's `logger` (the console by
 * default, each cause at most once a minute), prefixed with `triple-rpc registry:`. Callers log
 * once per cause (a lost connection, an empty list), never per call.
 */
export function registryLog(logger: Logger, level: "info" | "warn" | "error", message: string): void {
  logger[level]({ component: "registry" }, `triple-rpc registry: ${message}`);
}

/**
 * What application-level ("instance") service discovery needs of a registry, besides
 * {@link Registry}: instance nodes, the interface → application mapping and the metadata report.
 * `ZookeeperRegistry` implements it; a registry without it is used at interface level only.
 */
export interface InstanceDiscovery {
  /** Publishes (or updates) an application instance's node for as long as this process lives. */
  registerInstance(app: string, id: string, data: string): Promise<void>;
  /** Removes an instance node registered before. */
  unregisterInstance(app: string, id: string): Promise<void>;
  /** Adds `app` to the applications providing `iface` (never dropping another). */
  addMapping(iface: string, app: string): Promise<void>;
  /** Follows the applications providing `iface`; returns the function that stops following. */
  subscribeMapping(iface: string, listener: (apps: readonly string[]) => void): () => void;
  /** Follows an application's instances (each node's raw data); returns the function that stops following. */
  subscribeInstances(app: string, listener: (instances: readonly Buffer[]) => void): () => void;
  /** Writes an application's metadata at one revision in the metadata report. */
  putMetadata(app: string, revision: string, json: string): Promise<void>;
  /** Reads an application's metadata at one revision from the metadata report (undefined: none). */
  getMetadata(app: string, revision: string): Promise<string | undefined>;
}

/** True for a registry that supports application-level discovery. */
export function hasInstanceDiscovery(r: Registry): r is Registry & InstanceDiscovery {
  const x = r as Partial<InstanceDiscovery>;
  return typeof x.registerInstance === "function" && typeof x.subscribeInstances === "function" && typeof x.subscribeMapping === "function";
}
