/** The part of node-zookeeper-client (untyped) the writer uses. */
interface ZkError extends Error {
  getCode(): number;
}
interface ZkClient {
  once(event: "connected", cb: () => void): void;
  connect(): void;
  close(): void;
  mkdirp(path: string, cb: (e: ZkError | null) => void): void;
  setData(path: string, data: Buffer, version: number, cb: (e: ZkError | null) => void): void;
  create(path: string, data: Buffer, cb: (e: ZkError | null) => void): void;
  remove(path: string, version: number, cb: (e: ZkError | null) => void): void;
}
const zookeeper = require("node-zookeeper-client") as {
  createClient(hosts: string, o: { sessionTimeout: number; spinDelay: number; retries: number }): ZkClient;
  Exception: { NO_NODE: number };
};

/**
 * Writes governance rules into ZooKeeper as Dubbo Admin does (`/dubbo/config/<group>/<key>`,
 * persistent, parents created), through a session of its own, so a test can write, rewrite and
 * delete rules as fast as it likes.
 */
export class RuleWriter {
  private readonly made = new Set<string>();

  private constructor(private readonly client: ZkClient) {}

  static connect(hostPort: string): Promise<RuleWriter> {
    const client = zookeeper.createClient(hostPort, { sessionTimeout: 10_000, spinDelay: 100, retries: 3 });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ZooKeeper session at ${hostPort}`)), 10_000);
      client.once("connected", () => {
        clearTimeout(timer);
        resolve(new RuleWriter(client));
      });
      client.connect();
    });
  }

  /** Writes (creates or replaces) a rule: `/dubbo/config/<group>/<key>`. */
  async write(key: string, text: string, group = "dubbo"): Promise<void> {
    const path = `/dubbo/config/${group}/${key}`;
    const data = Buffer.from(text);
    if (!this.made.has(group)) {
      await new Promise<void>((resolve, reject) => this.client.mkdirp(`/dubbo/config/${group}`, (e) => (e ? reject(e) : resolve())));
      this.made.add(group);
    }
    await new Promise<void>((resolve, reject) =>
      this.client.setData(path, data, -1, (e) => {
        if (!e) return resolve();
        if (e.getCode() !== zookeeper.Exception.NO_NODE) return reject(e);
        this.client.create(path, data, (e2) => (e2 ? reject(e2) : resolve()));
      }),
    );
  }

  /** Deletes a rule (no error when there is none). */
  delete(key: string, group = "dubbo"): Promise<void> {
    const path = `/dubbo/config/${group}/${key}`;
    return new Promise((resolve, reject) => this.client.remove(path, -1, (e) => (e && e.getCode() !== zookeeper.Exception.NO_NODE ? reject(e) : resolve())));
  }

  close(): void {
    this.client.close();
  }
}
