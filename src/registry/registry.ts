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
  /** Where the registry, and the clients using it, write their log lines; default `console`. */
  readonly logger?: RegistryLogger;
  /**
   * Publishes a URL (a provider, or a consumer's own node) for as long as this process lives:
   * kept across reconnects and re-created after the registry lost it. Resolves once it is
   * written, or once the first attempt failed (it is retried in the background).
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

/** Where registry log lines go; each function is optional. Default: `console`. */
export interface RegistryLogger {
  info?(message: string): void;
  warn?(message: string): void;
  error?(message: string): void;
}

/** True for an object implementing {@link Registry}. */
export function isRegistry(x: unknown): x is Registry {
  return (
    typeof x === "object" &&
    x !== null &&
    typeof (x as Registry).register === "function" &&
    typeof (x as Registry).subscribe === "function" &&
    typeof (x as Registry).close === "function"
  );
}

const consoleLogger: RegistryLogger = {
  info: (m) => console.info(m),
  warn: (m) => console.warn(m),
  error: (m) => console.error(m),
};

/**
 * The one way registry code logs: `logger` (default `console`) at `level`, prefixed with
 * `triple-rpc registry:`. Callers log once per cause (a lost connection, an empty list), never
 * per call.
 */
export function registryLog(logger: RegistryLogger | undefined, level: "info" | "warn" | "error", message: string): void {
  const target = logger ?? consoleLogger;
  target[level]?.(`triple-rpc registry: ${message}`);
}
