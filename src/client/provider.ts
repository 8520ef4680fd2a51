/** A load-balancing weight: a finite number >= 0 (Dubbo's default is 100). */
export function isValidWeight(w: unknown): w is number {
  return typeof w === "number" && Number.isFinite(w) && w >= 0;
}

/** A provider given as a URL (`http://h:p`, `https://h:p`), `host:port`, or with a weight. */
export type ProviderInit = string | { readonly url: string; readonly weight?: number };

/**
 * One provider (server address) of a service, with the live state the cluster and load
 * balancers read: calls in flight, a latency estimate and health. A provider that refused a
 * connection is "down" until its back-off expires; then it is tried again.
 */
export class Provider {
  /** `host:port`, as failover messages list it. */
  readonly address: string;
  /** `http://host:port` or `https://host:port`. */
  readonly origin: string;
  readonly host: string;
  readonly port: number;
  readonly secure: boolean;
  /** Relative weight for the weighted balancers (default 100, like Dubbo). */
  readonly weight: number;
  /** Calls in flight. */
  active = 0;
  /** Exponentially weighted average of call latency, ms (0 until the first call). */
  latencyMs = 0;
  /** Consecutive connection failures. */
  failures = 0;
  /** Epoch ms until which the provider is skipped. */
  downUntil = 0;
  /**
   * The provider announced its shutdown (an HTTP/2 GOAWAY without error, or the registry stopped
   * listing it): refused connections from it are expected and not warned about. Cleared when a
   * connection to it succeeds again.
   */
  leaving = false;

  constructor(url: string, weight = 100) {
    if (typeof url !== "string" || url.trim() === "") throw new TypeError(`provider ${JSON.stringify(url)}: expected a URL or host:port`);
    const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url);
    let u: URL;
    try {
      u = new URL(hasScheme ? url : `http://${url}`);
    } catch {
      throw new TypeError(`provider ${JSON.stringify(url)} is not a URL or host:port (e.g. 127.0.0.1:50051 or http://host:50051)`);
    }
    // A bare host would otherwise go to port 80, which is rarely where an RPC server listens.
    if (!hasScheme && !u.port) {
      throw new TypeError(
        `provider "${url}" has no port: write host:port (e.g. ${u.hostname}:50051, where triple-rpc servers listen by default), ` +
          `or a URL (http://${u.hostname} means port 80)`,
      );
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new TypeError(`provider ${url}: only http:// and https:// providers are supported`);
    }
    this.secure = u.protocol === "https:";
    this.host = u.hostname;
    this.port = u.port ? Number(u.port) : this.secure ? 443 : 80;
    // URL keeps IPv6 hosts bracketed, which is what host:port needs too.
    this.address = `${this.host}:${this.port}`;
    this.origin = `${u.protocol}//${this.address}`;
    if (!isValidWeight(weight)) throw new TypeError(`provider ${url}: weight must be a number >= 0`);
    this.weight = weight;
  }

  /** True while a connection failure's back-off lasts. */
  isDown(now = Date.now()): boolean {
    return this.downUntil > now;
  }

  /** Records a refused connection: skip this provider for `base * 2^(failures-1)`, at most 30 s. */
  markDown(baseBackoffMs: number, now = Date.now()): void {
    this.failures++;
    const backoff = Math.min(30_000, baseBackoffMs * 2 ** Math.min(this.failures - 1, 16));
    this.downUntil = now + backoff;
  }

  /** Records a successful exchange: the provider is healthy again. */
  markUp(): void {
    this.failures = 0;
    this.downUntil = 0;
  }

  /** Feeds one call's latency into the moving average. */
  recordLatency(ms: number): void {
    this.latencyMs = this.latencyMs === 0 ? ms : this.latencyMs * 0.8 + ms * 0.2;
  }
}
