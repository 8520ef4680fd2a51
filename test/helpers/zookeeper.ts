import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

/** Debian's ZooKeeper (`apt-get install zookeeper`): the server jar, whose manifest pulls in the rest. */
const ZK_JAR = "/usr/share/java/zookeeper.jar";
const ZK_CONF_DIR = "/etc/zookeeper/conf";

/** Why a ZooKeeper server cannot be started here, or undefined when it can. */
export function zookeeperMissing(): string | undefined {
  if (!fs.existsSync(ZK_JAR)) return `ZooKeeper is not installed (${ZK_JAR} is missing): apt-get install -y zookeeper`;
  try {
    execFileSync("java", ["-version"], { stdio: "ignore" });
  } catch {
    return "java is not on the PATH (Debian's zookeeper package depends on default-jre)";
  }
  return undefined;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Sends a four-letter command; resolves with the answer ("" when nothing answered). */
function fourLetter(port: number, cmd: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    let out = "";
    s.setTimeout(1000, () => s.destroy());
    s.on("connect", () => s.write(cmd));
    s.on("data", (d) => {
      out += d.toString();
    });
    s.on("close", () => resolve(out));
    s.on("error", () => resolve(""));
  });
}

/**
 * A standalone ZooKeeper server in a child process (its own process group), on a free port of
 * 127.0.0.1, with its data in a temp directory. A short `tickTime` bounds sessions to
 * 2–20 ticks, so session expiry in tests takes a second or two.
 */
export class ZooKeeperServer {
  private proc: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string,
    readonly tickTime: number,
  ) {}

  /** `zookeeper://127.0.0.1:<port>`, plus `?session=<ms>` when given. */
  address(sessionMs?: number): string {
    return `zookeeper://127.0.0.1:${this.port}${sessionMs ? `?session=${sessionMs}` : ""}`;
  }

  /** `127.0.0.1:<port>` for other clients (kazoo, zkCli). */
  get hostPort(): string {
    return `127.0.0.1:${this.port}`;
  }

  static async start(opts: { tickTime?: number; port?: number } = {}): Promise<ZooKeeperServer> {
    const missing = zookeeperMissing();
    if (missing) throw new Error(missing);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "triple-rpc-zk-"));
    const zk = new ZooKeeperServer(opts.port ?? (await freePort()), dir, opts.tickTime ?? 500);
    await zk.resume();
    return zk;
  }

  /** Starts (again, after `stop`) on the same port and data directory. */
  async resume(): Promise<void> {
    fs.mkdirSync(path.join(this.dir, "data"), { recursive: true });
    const cfg = path.join(this.dir, "zoo.cfg");
    fs.writeFileSync(
      cfg,
      [
        `tickTime=${this.tickTime}`,
        `dataDir=${path.join(this.dir, "data")}`,
        `clientPort=${this.port}`,
        "clientPortAddress=127.0.0.1",
        "admin.enableServer=false",
        "4lw.commands.whitelist=ruok,srvr",
        "forceSync=no",
        "maxClientCnxns=0",
      ].join("\n"),
    );
    const args = ["-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", `${ZK_CONF_DIR}:${ZK_JAR}`];
    this.proc = spawn("java", [...args, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg], {
      detached: true,
      stdio: "ignore",
    });
    this.proc.unref();
    const deadline = Date.now() + 20_000;
    while ((await fourLetter(this.port, "ruok")) !== "imok") {
      if (this.proc.exitCode !== null || Date.now() > deadline) {
        this.kill("SIGKILL");
        throw new Error(`ZooKeeper did not start on port ${this.port}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private kill(signal: NodeJS.Signals): void {
    const pid = this.proc?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal); // the whole process group: no orphan java survives
    } catch {
      // already gone
    }
  }

  /** Stops the server (SIGTERM, then SIGKILL after 3 s); the data stays for `resume`. */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.proc = undefined;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => proc.once("exit", () => r()));
    process.kill(-proc.pid!, "SIGTERM");
    const timer = setTimeout(() => {
      try {
        process.kill(-proc.pid!, "SIGKILL");
      } catch {
        // gone
      }
    }, 3000);
    await exited;
    clearTimeout(timer);
  }

  /** Throws away the data (sessions and nodes), as a replaced ZooKeeper would have none. */
  wipe(): void {
    fs.rmSync(path.join(this.dir, "data"), { recursive: true, force: true });
  }

  /** Stops the server and removes its directory. */
  async destroy(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One node as an independent reader (python3-kazoo) sees it. */
export interface KazooNode {
  readonly name: string;
  /** The node name decoded with Python's `unquote_plus`. */
  readonly url: string;
  /** Query parameters parsed by Python's `parse_qsl`. */
  readonly params: Record<string, string>;
  /** The owning session (0 for persistent nodes). */
  readonly ephemeralOwner: number;
}

const KAZOO_SCRIPT = `
import json, sys
from urllib.parse import unquote_plus, urlsplit, parse_qsl
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start(timeout=10)
out = {"dirs": {}, "children": []}
for d in sys.argv[3:]:
    st = zk.exists(d)
    out["dirs"][d] = None if st is None else st.ephemeralOwner
if zk.exists(sys.argv[2]):
    for name in zk.get_children(sys.argv[2]):
        url = unquote_plus(name)
        st = zk.exists(sys.argv[2] + "/" + name)
        out["children"].append({"name": name, "url": url, "params": dict(parse_qsl(urlsplit(url).query)),
                                "ephemeralOwner": st.ephemeralOwner if st else -1})
zk.stop()
print(json.dumps(out))
`;

/** Debian's python3 with kazoo (the PATH's python3 may be another one). */
const PYTHON = fs.existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

/**
 * Reads `dir`'s children with python3-kazoo, ZooKeeper's Python client: an independent reader
 * of what we write. `stat` lists other paths whose ephemeralOwner to report (null: missing).
 */
export function kazooRead(hostPort: string, dir: string, stat: readonly string[] = []): { children: KazooNode[]; dirs: Record<string, number | null> } {
  const out = execFileSync(PYTHON, ["-c", KAZOO_SCRIPT, hostPort, dir, ...stat], { encoding: "utf8", timeout: 20_000 });
  return JSON.parse(out);
}

/** True when python3-kazoo can be used. */
export function kazooMissing(): string | undefined {
  try {
    execFileSync(PYTHON, ["-c", "import kazoo"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "python3-kazoo is not installed: apt-get install -y python3-kazoo";
  }
}

/** One operation of {@link kazoo}. */
export type KazooOp =
  | { op: "get"; path: string }
  | { op: "children"; path: string }
  | { op: "create"; path: string; data: string }
  | { op: "delete"; path: string }
  /** Sets the data of an existing node (any version). */
  | { op: "set"; path: string; data: string }
  /** Sets a node's data, creating it when missing (one write, whoever else writes the node). */
  | { op: "put"; path: string; data: string }
  /** Sets a node's ACL: world:anyone may do anything, or anything but create children (`create: false`). */
  | { op: "acl"; path: string; create: boolean };

/** What a `get` returns: the data as text and the stat fields the tests check (null: no node). */
export interface KazooGet {
  data: string;
  ephemeralOwner: number;
  version: number;
  /** The transaction that created the node: ZooKeeper's zxids count every write of the ensemble. */
  czxid: number;
}

const KAZOO_OPS = `
import json, sys
from kazoo.client import KazooClient
from kazoo.security import make_acl
from kazoo.exceptions import NodeExistsError
zk = KazooClient(hosts=sys.argv[1]); zk.start(timeout=10)
out = []
for o in json.load(sys.stdin):
    p = o["path"]
    if o["op"] == "get":
        if zk.exists(p) is None:
            out.append(None)
        else:
            data, st = zk.get(p)
            out.append({"data": data.decode("utf-8"), "ephemeralOwner": st.ephemeralOwner, "version": st.version, "czxid": st.czxid})
    elif o["op"] == "children":
        out.append(sorted(zk.get_children(p)) if zk.exists(p) else None)
    elif o["op"] == "create":
        out.append(zk.create(p, o["data"].encode("utf-8"), makepath=True))
    elif o["op"] == "delete":
        zk.delete(p, recursive=True) if zk.exists(p) else None
        out.append(None)
    elif o["op"] == "set":
        zk.set(p, o["data"].encode("utf-8"))
        out.append(None)
    elif o["op"] == "put":
        try:
            zk.create(p, o["data"].encode("utf-8"), makepath=True)
        except NodeExistsError:
            zk.set(p, o["data"].encode("utf-8"))
        out.append(None)
    elif o["op"] == "acl":
        acl = make_acl("world", "anyone", all=True) if o["create"] else make_acl("world", "anyone", read=True, write=True, delete=True, admin=True)
        zk.set_acls(p, [acl])
        out.append(None)
zk.stop()
print(json.dumps(out))
`;

/**
 * Runs operations with python3-kazoo in another process without blocking this one (a blocked
 * event loop would let this process's own ZooKeeper sessions time out). Nodes it creates are
 * persistent (its session ends with the script).
 */
export async function kazoo(hostPort: string, ops: readonly KazooOp[]): Promise<unknown[]> {
  const { execFile } = await import("node:child_process");
  // The operations go through stdin: one argument holds at most 128 KiB (a 10,000-name mapping is more).
  const out = await new Promise<string>((resolve, reject) => {
    const child = execFile(PYTHON, ["-c", KAZOO_OPS, hostPort], { encoding: "utf8", timeout: 20_000, maxBuffer: 64 << 20 }, (e, stdout, stderr) =>
      e ? reject(new Error(`${e.message}: ${stderr}`)) : resolve(stdout),
    );
    child.stdin?.end(JSON.stringify(ops));
  });
  return JSON.parse(out);
}
