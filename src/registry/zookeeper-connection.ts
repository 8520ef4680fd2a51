// Owns `ZK_NODE_EXISTS`, `ZK_BAD_VERSION`, `ZK_NO_AUTH`, `zkCode`, … The ZooKeeper error code of an
// error, or undefined when it is not a ZooKeeper error. Must not change: the ZooKeeper paths, URL
// encodings and metadata Apache Dubbo reads and writes.
import type { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { runtimePackage } from "../codec/runtime-package.js";
import type { Logger } from "../runtime/logger.js";
import { registryLog } from "./registry.js";

/** The part of node-zookeeper-client's `Client` this module uses. */
interface ZkClient extends EventEmitter {
  connect(): void;
  close(): void;
  getSessionId(): Buffer;
  create(path: string, data: Buffer, mode: number, cb: (e: ZkError | null, path?: string) => void): void;
  remove(path: string, version: number, cb: (e: ZkError | null) => void): void;
  mkdirp(path: string, cb: (e: ZkError | null, path?: string) => void): void;
  getChildren(path: string, watcher: (event: unknown) => void, cb: (e: ZkError | null, children?: string[]) => void): void;
  exists(path: string, cb: (e: ZkError | null, stat?: { ephemeralOwner: Buffer }) => void): void;
  exists(path: string, watcher: (event: unknown) => void, cb: (e: ZkError | null, stat?: unknown) => void): void;
  getData(
    path: string,
    watcher: ((event: unknown) => void) | undefined,
    cb: (e: ZkError | null, data?: Buffer, stat?: { version: number; ephemeralOwner?: Buffer }) => void,
  ): void;
  setData(path: string, data: Buffer, version: number, cb: (e: ZkError | null) => void): void;
  connectionManager?: { socket?: Socket };
}

interface ZkError extends Error {
  getCode(): number;
}

interface ZkModule {
  createClient(connectionString: string, options: { sessionTimeout: number; spinDelay: number; retries: number }): ZkClient;
  CreateMode: { EPHEMERAL: number; PERSISTENT: number };
}

/**
 * node-zookeeper-client (with its async and underscore: ~400 KB), loaded on first use: a process
 * without a registry never loads it. Its name is not a literal, so bundlers (esbuild, webpack,
 * Rollup) leave it out of a client-only bundle: an app that bundles itself and uses a ZooKeeper
 * registry keeps node-zookeeper-client installed beside the bundle (it is loaded from there).
 */
const ZK_PACKAGE = ["node", "zookeeper", "client"].join("-");
const zk = runtimePackage<ZkModule>(ZK_PACKAGE, "ZooKeeper registry");

/** ZooKeeper error codes this module reacts to. */
const ZK_NO_NODE = -101;
export const ZK_NODE_EXISTS = -110;
export const ZK_BAD_VERSION = -103;
export const ZK_NO_AUTH = -102;

/** The ZooKeeper error code of an error, or undefined when it is not a ZooKeeper error. */
export function zkCode(e: unknown): number | undefined {
  return typeof (e as ZkError)?.getCode === "function" ? (e as ZkError).getCode() : undefined;
}

/** The connection manager's fields the replacement of `findNextServer` uses. */
interface ZkConnectionManager {
  socket?: Socket;
  servers?: unknown[];
  nextServerIndex: number;
  serverAttempts: number;
  spinDelay: number;
  findNextServer?: (cb: (server: unknown) => void) => void;
  /** Set when the client is thrown away: no further connection attempt. */
  discarded?: boolean;
  onSocketData?: (buffer: Buffer) => void;
}

/** The largest reply frame read from ZooKeeper, bytes: its own limit (jute.maxbuffer) is 1 MiB by default. */
const MAX_REPLY_FRAME = 16 << 20;

/**
 * Feeds the client's reply parser one whole frame at a time. Given a chunk holding many replies,
 * the client copies the rest of the chunk once per reply and recurses once per reply: hundreds of
 * replies in one read (a consumer listing hundreds of applications at once) cost quadratic time
 * and a deep stack. Here frames are cut out of the chunks in linear time (no copy unless a frame
 * spans reads), so the client never keeps a remainder of its own.
 *
 * A reply the client cannot parse throws inside its socket's 'data' listener, which would take
 * the whole process down: that connection is dropped instead (the client reconnects, or the
 * session is renewed); so is a frame announcing more than {@link MAX_REPLY_FRAME} bytes.
 */
function frameReplies(cm: ZkConnectionManager): void {
  const onData = cm.onSocketData;
  if (typeof onData !== "function") return;
  const chunks: Buffer[] = [];
  let have = 0;
  let socket: Socket | undefined;
  cm.onSocketData = function (this: ZkConnectionManager, chunk: Buffer) {
    // Bytes left by a connection that ended mid-frame are not the start of the next one's.
    if (this.socket !== socket) {
      socket = this.socket;
      chunks.length = 0;
      have = 0;
    }
    if (chunk.length === 0) return;
    chunks.push(chunk);
    have += chunk.length;
    try {
      for (let frame = nextFrame(chunks, have); frame; frame = nextFrame(chunks, have)) {
        have -= frame.length;
        onData.call(this, frame);
      }
    } catch {
      chunks.length = 0;
      have = 0;
      this.socket?.destroy();
    }
  };
}

/** The first whole frame (4-byte length, then the reply) taken off `chunks` (`have` bytes in all), if there is one. */
function nextFrame(chunks: Buffer[], have: number): Buffer | undefined {
  if (have < 4) return undefined;
  if (chunks[0].length < 4) chunks.splice(0, chunks.length, Buffer.concat(chunks, have));
  const size = chunks[0].readInt32BE(0);
  if (size < 0 || size > MAX_REPLY_FRAME) throw new Error(`a ZooKeeper reply of ${size} bytes`);
  const need = size + 4;
  if (have < need) return undefined;
  if (chunks[0].length < need) chunks.splice(0, chunks.length, Buffer.concat(chunks, have));
  const head = chunks[0];
  if (head.length === need) chunks.shift();
  else chunks[0] = head.subarray(need);
  return head.subarray(0, need);
}

/**
 * Leaves the process free to exit while only a registry connection is open, connecting or not:
 * the client opens a socket per connection attempt, and after trying every server it waits a
 * random part of `spinDelay` before the next round. Its method that picks the next server (and
 * then connects) is replaced by the same logic with an unref'd wait, and every socket it opens is
 * unref'd. The replacement also stops a discarded client from connecting again.
 */
function unrefSockets(client: ZkClient): void {
  const cm = client.connectionManager as ZkConnectionManager | undefined;
  if (!cm || typeof cm.findNextServer !== "function" || !Array.isArray(cm.servers)) return;
  const servers = cm.servers;
  frameReplies(cm);
  cm.findNextServer = (cb) => {
    cm.nextServerIndex %= servers.length;
    const pick = () => {
      // A client closed while it waited to reconnect must not connect again: in its closing
      // state it would read the server's connect response as a reply and throw.
      if (cm.discarded) return;
      const server = servers[cm.nextServerIndex];
      cm.nextServerIndex += 1;
      cb(server);
      cm.socket?.unref();
    };
    if (cm.serverAttempts === servers.length) {
      cm.serverAttempts = 0; // every server tried: wait a little before the next round
      setTimeout(pick, Math.random() * cm.spinDelay).unref();
    } else {
      cm.serverAttempts += 1;
      process.nextTick(pick);
    }
  };
}

/** Settings of a {@link ZookeeperConnection}. */
export interface ZookeeperConnectionOptions {
  /** `host:port[,host:port…]`. */
  readonly servers: string;
  /** How failover messages and logs name the registry. */
  readonly address: string;
  /** The session timeout asked of the server, ms (the server bounds it by its tickTime). */
  readonly sessionTimeoutMs: number;
  readonly logger: Logger;
  /** Called on every (re)connection; `fresh` when the session is new (ephemeral nodes and watches are gone). */
  readonly onConnected: (fresh: boolean) => void;
}

/**
 * One ZooKeeper session that keeps itself alive. node-zookeeper-client reconnects within a
 * session by itself, but it never starts a new session: after an expiry it stays closed, and
 * against a server that lost its data it retries forever without reporting the expiry. So: on
 * `expired`, or when disconnected for longer than the session timeout, the client is thrown away
 * and a new one connects; `onConnected(true)` then tells the owner to re-create its ephemeral
 * nodes and watches. Its sockets do not keep the process alive.
 */
export class ZookeeperConnection {
  private client: ZkClient | undefined;
  private sessionId: string | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private lostLogged = false;
  private closed = false;
  /** True while a session is connected. */
  connected = false;

  constructor(private readonly o: ZookeeperConnectionOptions) {}

  /** Connects (in the background; operations queue until the session is up). */
  start(): void {
    if (this.closed || this.client) return;
    const client = zk().createClient(this.o.servers, { sessionTimeout: this.o.sessionTimeoutMs, spinDelay: 500, retries: 0 });
    this.client = client;
    unrefSockets(client);
    client.on("connected", () => this.onConnected(client));
    client.on("disconnected", () => this.onDisconnected(client));
    client.on("expired", () => {
      if (client !== this.client) return;
      registryLog(this.o.logger, "warn", `the ZooKeeper session with ${this.o.address} expired; starting a new one`);
      this.renew();
    });
    client.connect();
    this.armWatchdog();
  }

  /**
   * While no session is up, a client that has not connected within the session timeout is
   * replaced: it may be stuck on a server that lost its data (it is refused forever) or on a
   * connection that never answers.
   */
  private armWatchdog(): void {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      this.watchdog = undefined;
      if (this.connected || this.closed) return;
      // Unreachable from the start: no 'disconnected' ever comes, so the outage is told here (once).
      if (!this.lostLogged) {
        this.lostLogged = true;
        registryLog(
          this.o.logger,
          "warn",
          `cannot reach ZooKeeper at ${this.o.address}: no session within ${this.o.sessionTimeoutMs} ms; registrations and subscriptions wait, retrying`,
        );
      }
      this.renew();
    }, this.o.sessionTimeoutMs);
    this.watchdog.unref();
  }

  private onConnected(client: ZkClient): void {
    if (client !== this.client) return;
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    const id = client.getSessionId().toString("hex");
    const fresh = id !== this.sessionId;
    this.sessionId = id;
    this.connected = true;
    // The end of an outage is as visible as its start (the default logger drops info lines).
    if (this.lostLogged) registryLog(this.o.logger, "warn", `connected to ${this.o.address} again${fresh ? " (new session)" : ""}`);
    this.lostLogged = false;
    this.o.onConnected(fresh);
  }

  private onDisconnected(client: ZkClient): void {
    if (client !== this.client || this.closed) return;
    this.connected = false;
    if (!this.lostLogged) {
      this.lostLogged = true;
      registryLog(this.o.logger, "warn", `lost the connection to ${this.o.address}; keeping the registrations and the last known providers, reconnecting`);
    }
    // A session cannot outlive its timeout: past it, reconnecting to the same one is pointless.
    if (!this.watchdog) this.armWatchdog();
  }

  /** Drops the current client and starts a new session. */
  private renew(): void {
    this.discard();
    this.sessionId = undefined;
    if (!this.closed) this.start();
  }

  private discard(): void {
    const old = this.client;
    this.client = undefined;
    this.connected = false;
    if (!old) return;
    old.removeAllListeners();
    old.on("error", () => {});
    const cm = old.connectionManager as ZkConnectionManager | undefined;
    if (cm) cm.discarded = true;
    try {
      old.close();
    } catch {
      // closing a dead client may throw; it is gone either way
    }
    old.connectionManager?.socket?.destroy();
  }

  /** Closes the session: its ephemeral nodes disappear at once. Waits at most `waitMs` for the goodbye. */
  async close(waitMs = 1000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.watchdog);
    const client = this.client;
    if (client && this.connected) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        client.once("disconnected", () => {
          clearTimeout(timer);
          resolve();
        });
        client.close();
      });
    }
    this.discard();
  }

  private current(): ZkClient {
    if (!this.client) throw Object.assign(new Error(`the registry ${this.o.address} is closed`), { getCode: () => -4 });
    return this.client;
  }

  /** Creates `path` and its missing parents as persistent nodes. */
  mkdirp(path: string): Promise<void> {
    return new Promise((resolve, reject) => this.current().mkdirp(path, (e) => (e ? reject(e) : resolve())));
  }

  /** Creates an ephemeral node (its parent must exist); rejects with NODE_EXISTS if it is there. */
  createEphemeral(path: string, data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.current().create(path, data, zk().CreateMode.EPHEMERAL, (e) => (e ? reject(e) : resolve())));
  }

  /** The current session's id (hex), once connected. */
  get session(): string | undefined {
    return this.connected ? this.sessionId : undefined;
  }

  /** Deletes a node; a node already gone is fine. */
  remove(path: string): Promise<void> {
    return new Promise((resolve, reject) => this.current().remove(path, -1, (e) => (e && zkCode(e) !== ZK_NO_NODE ? reject(e) : resolve())));
  }

  /** The children of `path`, arming a one-shot child watch (the same watcher function is armed once). */
  children(path: string, watcher: (event: unknown) => void): Promise<string[]> {
    return new Promise((resolve, reject) => this.current().getChildren(path, watcher, (e, children) => (e ? reject(e) : resolve(children ?? []))));
  }

  /** Creates a persistent node with data (its parent must exist); rejects with NODE_EXISTS if it is there. */
  createPersistent(path: string, data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.current().create(path, data, zk().CreateMode.PERSISTENT, (e) => (e ? reject(e) : resolve())));
  }

  /**
   * A node's data, version and owning session (hex; "" for a persistent node), undefined when
   * there is none, optionally arming a one-shot data watch.
   */
  data(path: string, watcher?: (event: unknown) => void): Promise<{ data: Buffer; version: number; owner: string } | undefined> {
    return new Promise((resolve, reject) =>
      this.current().getData(path, watcher, (e, data, stat) => {
        if (e && zkCode(e) === ZK_NO_NODE) resolve(undefined);
        else if (e) reject(e);
        else resolve({ data: data ?? Buffer.alloc(0), version: stat?.version ?? 0, owner: sessionHex(stat?.ephemeralOwner) });
      }),
    );
  }

  /** Sets a node's data if its version is still `version` (-1: any); rejects with BAD_VERSION otherwise. */
  setData(path: string, data: Buffer, version: number): Promise<void> {
    return new Promise((resolve, reject) => this.current().setData(path, data, version, (e) => (e ? reject(e) : resolve())));
  }

  /** True when `path` exists; arms a one-shot watch on its creation, deletion or change. */
  watchExists(path: string, watcher: (event: unknown) => void): Promise<boolean> {
    return new Promise((resolve, reject) => this.current().exists(path, watcher, (e, stat) => (e ? reject(e) : resolve(!!stat))));
  }
}

/** A session id as hex ("" for none: a persistent node's owner is 0). */
function sessionHex(id: Buffer | undefined): string {
  return id ? id.toString("hex").replace(/^0+$/, "") : "";
}
