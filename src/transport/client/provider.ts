// One provider address as the client's cluster sees it: weight and Dubbo's warm-up, the peak-EWMA
// latency, back-off and outlier ejection, on an injectable clock. Must not change: Dubbo's warm-up
// formula (the weight ramps up over `warmup` ms counted from `timestamp`).
import { type Clock, systemClock } from "../clock.js";

/** A load-balancing weight: a finite number >= 0 (Dubbo's default is 100). */
export function isValidWeight(w: unknown): w is number {
  return typeof w === "number" && Number.isFinite(w) && w >= 0;
}

/** Time constant of the peak-EWMA latency's decay, ms (an idle provider's cost halves in ~3.5 s). */
const EWMA_DECAY_MS = 5000;

/**
 * Dubbo's warm-up of a provider that announced `warmup` (ms) and `timestamp` (its start, epoch
 * ms): for `ms` after `since` its weight ramps from 1 up to the full weight.
 */
export interface WarmUp {
  /** When the provider started (its registry `timestamp`), epoch ms. */
  readonly since: number;
  /** How long the ramp lasts (its registry `warmup`), ms. */
  readonly ms: number;
}

/**
 * Dubbo's `AbstractLoadBalance.calculateWarmupWeight` (and `getWeight`'s guard for a clock
 * behind the provider's): `uptime / (warmup / weight)` rounded down, at least 1, at most `weight`.
 */
export function warmUpWeight(uptimeMs: number, warmUpMs: number, weight: number): number {
  if (weight <= 0 || uptimeMs >= warmUpMs) return weight;
  const floor = Math.min(1, weight);
  if (uptimeMs < 0) return floor;
  return Math.max(floor, Math.min(Math.floor(uptimeMs / (warmUpMs / weight)), weight));
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
  /** A `memory://<name>` provider: an in-process server, connected through {@link memoryConnection}. */
  readonly memory: boolean;
  /** The weight it was given (default 100, like Dubbo); {@link weight} is lower while it warms up. */
  readonly fullWeight: number;
  /** Its warm-up (Dubbo's `warmup` ramp), if it announced one. */
  readonly warmUp: WarmUp | undefined;
  /** Epoch ms the warm-up ends; 0 once over (or without one), so {@link weight} costs a field read. */
  private warmUntil: number;
  /** Calls in flight. */
  active = 0;
  /** Exponentially weighted average of call latency, ms (0 until the first call). */
  latencyMs = 0;
  /** Consecutive connection failures. */
  failures = 0;
  /** Epoch ms until which the provider is skipped. */
  downUntil = 0;
  /** Sum of the start times (`performance.now()`) of the calls in flight: their mean age. */
  pendingStarts = 0;
  /** Peak EWMA of latency, ms: jumps to a slower answer, decays toward faster ones over time. */
  peakLatencyMs = 0;
  /** When `peakLatencyMs` was last updated (`performance.now()`). */
  private peakStamp = 0;
  /** Consecutive calls that timed out or broke (outlier detection); an answer resets it. */
  consecutiveFailures = 0;
  /** Ejections so far (the next one lasts longer); forgotten after a long healthy spell. */
  ejections = 0;
  /**
   * Epoch ms until which outlier detection keeps the provider out. Once past (and not yet 0),
   * the provider is on probation: one call at a time until one is answered.
   */
  ejectedUntil = 0;
  /** Epoch ms when the provider last left probation (answered after an ejection). */
  lastReadmitted = 0;
  /**
   * The provider announced its shutdown (an HTTP/2 GOAWAY without error, or the registry stopped
   * listing it): refused connections from it are expected and not warned about. Cleared when a
   * connection to it succeeds again.
   */
  leaving = false;

  constructor(
    url: string,
    weight = 100,
    warmUp?: WarmUp,
    /** What warm-up, back-off and ejection read as now (epoch ms): tests move it by hand. */
    readonly clock: Clock = systemClock,
  ) {
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
    if (u.protocol !== "http:" && u.protocol !== "https:" && u.protocol !== "memory:") {
      throw new TypeError(`provider ${url}: only http:// and https:// providers are supported`);
    }
    // memory://<name>: a server in this process (createTestClient), reached without a socket.
    this.memory = u.protocol === "memory:";
    this.secure = u.protocol === "https:";
    this.host = u.hostname;
    this.port = u.port ? Number(u.port) : this.secure ? 443 : 80;
    // URL keeps IPv6 hosts bracketed, which is what host:port needs too.
    this.address = `${this.host}:${this.port}`;
    this.origin = `${this.memory ? "http:" : u.protocol}//${this.address}`;
    if (!isValidWeight(weight)) throw new TypeError(`provider ${url}: weight must be a number >= 0`);
    if (warmUp !== undefined && !(Number.isFinite(warmUp.since) && Number.isFinite(warmUp.ms) && warmUp.ms > 0)) {
      throw new TypeError(`provider ${url}: warmUp needs a finite since (epoch ms) and ms > 0`);
    }
    this.fullWeight = weight;
    this.warmUp = warmUp;
    this.warmUntil = warmUp && clock.now() < warmUp.since + warmUp.ms ? warmUp.since + warmUp.ms : 0;
  }

  /**
   * Relative weight for the weighted balancers: the full weight, or during a warm-up the ramped
   * one Dubbo's balancers use (from 1 at the provider's start up to the full weight).
   */
  get weight(): number {
    return this.warmUntil === 0 ? this.fullWeight : this.warmingWeight();
  }

  private warmingWeight(): number {
    const now = this.clock.now();
    if (now >= this.warmUntil) {
      this.warmUntil = 0;
      return this.fullWeight;
    }
    const w = this.warmUp as WarmUp;
    return warmUpWeight(now - w.since, w.ms, this.fullWeight);
  }

  /** True while a connection failure's back-off lasts. */
  isDown(now = this.clock.now()): boolean {
    return this.downUntil > now;
  }

  /** True while outlier detection keeps the provider out. */
  isEjected(now = this.clock.now()): boolean {
    return this.ejectedUntil > now;
  }

  /**
   * May take a new call: not down, not ejected, and not on probation with its probe still in
   * flight. (`now` is epoch ms.)
   */
  available(now: number): boolean {
    return this.downUntil <= now && (this.ejectedUntil === 0 || (this.ejectedUntil <= now && this.active === 0));
  }

  /** A call starts (`start`: `performance.now()`). */
  begin(start: number): void {
    this.active++;
    this.pendingStarts += start;
  }

  /** A call that began at `start` is over. */
  end(start: number): void {
    if (--this.active === 0) this.pendingStarts = 0;
    else this.pendingStarts -= start;
  }

  /** Mean age of the calls in flight at `now` (`performance.now()`), ms; 0 when idle. */
  pendingAgeMs(now: number): number {
    return this.active > 0 ? now - this.pendingStarts / this.active : 0;
  }

  /** The peak-EWMA latency as decayed to `now` (`performance.now()`). */
  peakLatencyAt(now: number): number {
    const v = this.peakLatencyMs;
    return v === 0 ? 0 : v * Math.exp(-Math.max(0, now - this.peakStamp) / EWMA_DECAY_MS);
  }

  /** Records an answer: healthy, reachable, not an outlier. */
  answered(): void {
    this.failures = 0;
    this.downUntil = 0;
    this.consecutiveFailures = 0;
    if (this.ejectedUntil !== 0) {
      this.ejectedUntil = 0;
      this.lastReadmitted = this.clock.now();
    }
  }

  /**
   * Ejects the provider for `base × ejections` (capped at `max`) from `now` (epoch ms); the count
   * starts again once the provider stayed healthy for `max` after its last readmission.
   */
  eject(baseMs: number, maxMs: number, now = this.clock.now()): number {
    if (this.ejectedUntil === 0 && now - this.lastReadmitted > maxMs) this.ejections = 0;
    this.ejections++;
    const ms = Math.min(maxMs, baseMs * this.ejections);
    this.ejectedUntil = now + ms;
    return ms;
  }

  /** Records a refused connection: skip this provider for `base * 2^(failures-1)`, at most 30 s. */
  markDown(baseBackoffMs: number, now = this.clock.now()): void {
    this.failures++;
    const backoff = Math.min(30_000, baseBackoffMs * 2 ** Math.min(this.failures - 1, 16));
    this.downUntil = now + backoff;
  }

  /** Records a successful exchange: the provider is healthy again. */
  markUp(): void {
    this.answered();
  }

  /** Feeds one call's latency (ended at `now`, `performance.now()`) into the moving averages. */
  recordLatency(ms: number, now = performance.now()): void {
    this.latencyMs = this.latencyMs === 0 ? ms : this.latencyMs * 0.8 + ms * 0.2;
    // Peak EWMA (Finagle's, linkerd's): a slower answer counts at once, faster ones over time.
    const w = Math.exp(-Math.max(0, now - this.peakStamp) / EWMA_DECAY_MS);
    const prev = this.peakLatencyMs;
    this.peakLatencyMs = ms > prev ? ms : prev * w + ms * (1 - w);
    this.peakStamp = now;
  }
}
