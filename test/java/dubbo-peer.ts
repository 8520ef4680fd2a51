import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { waitForListening } from "../helpers/child.js";

/**
 * The real Apache Dubbo 3.3.1 Java peer of the test/java/dubbo-*.test.ts files: the jars of
 * test/fixtures/dubbo-java (built from Dubbo's sources, see its README) with Debian's jars, and
 * the test programs of test/java/dubbo (JavaProvider, JavaConsumer), compiled with javac into a
 * temp directory named by the sources' hash, so one compile serves every test file and run.
 */
const ROOT = join(__dirname, "../../..");
const FIXTURE = join(ROOT, "test/fixtures/dubbo-java/jars");
const SRC = join(ROOT, "test/java/dubbo");

/** The fixture's jars, in class path order; the overrides jar goes before everything else. */
const OVERRIDES = "dubbo-3.3.1-zk-overrides.jar";
/**
 * Dubbo's unreleased Triple-over-WebSocket transport (branch 3.3-websocket-support, see the
 * fixture's README), put first on a provider's class path by `JavaProvider.start`'s `websocket`.
 */
const WEBSOCKET_OVERLAY = "dubbo-3.3-websocket-overlay.jar";
const FIXTURE_JARS = [
  "dubbo-3.3.1-javapeer.jar",
  "dubbo-3.3.1-zk-javapeer.jar",
  "curator-5.7.0.jar",
  "fastjson2-2.0.53.jar",
  "hessian-lite-4.0.3.jar",
  "t-digest-3.3.jar",
];

/** Debian's jars (/usr/share/java/NAME.jar) Dubbo runs on; the packages are in the fixture's README. */
const DEBIAN_JARS = [
  "netty-buffer",
  "netty-codec",
  "netty-codec-http",
  "netty-codec-http2",
  "netty-common",
  "netty-handler",
  "netty-handler-proxy",
  "netty-resolver",
  "netty-transport",
  "netty-transport-native-epoll",
  "netty-transport-native-unix-common",
  "netty-codec-socks",
  "protobuf",
  "protobuf-util",
  "javassist",
  "slf4j-api",
  "log4j-api",
  "log4j-core",
  "commons-logging",
  "commons-lang3",
  "commons-io",
  "gson",
  "snakeyaml",
  "commons-compress",
  "snappy-java",
  "jaxb-api",
  "guava",
  "geronimo-annotation-1.3-spec",
  "hdrhistogram",
  "zookeeper",
  "zookeeper-jute",
  "jackson-databind",
  "jackson-core",
  "jackson-annotations",
].map((n) => `/usr/share/java/${n}.jar`);

/**
 * JVM flags: keep Dubbo on loopback (it dials a 127.* provider at the LAN address unless every
 * interface is ignored, and binds 0.0.0.0 for a 127.* address unless the overrides jar's
 * javapeer.bind.ip says otherwise), log through java.util.logging (errors only, from the
 * logging.properties copied beside the classes), and start fast (a test JVM lives seconds).
 */
const JVM_FLAGS = [
  "-Ddubbo.network.interface.ignored=.*",
  "-Djavapeer.bind.ip=127.0.0.1",
  "-Ddubbo.application.logger=jdk",
  "-XX:+UseSerialGC",
  "-XX:TieredStopAtLevel=1",
  "-Xss512k",
  "-Xmx256m",
];

/** Why the Dubbo Java peer cannot run here, or undefined when it can. */
export function dubboJavaMissing(): string | undefined {
  if (spawnSync("javac", ["-version"]).status !== 0) return "javac is not installed (apt-get install default-jdk-headless)";
  for (const j of [OVERRIDES, WEBSOCKET_OVERLAY, ...FIXTURE_JARS]) {
    if (!existsSync(join(FIXTURE, j))) return `the fixture jar test/fixtures/dubbo-java/jars/${j} is missing`;
  }
  const absent = DEBIAN_JARS.filter((j) => !existsSync(j));
  if (absent.length > 0) return `${absent.join(", ")} not installed (scripts/install-test-deps.sh installs the Debian packages)`;
  return undefined;
}

/**
 * The `skip` option of a describe of Dubbo Java tests: the reason when the peer cannot run here,
 * except under CI, where the suite must not pass without them (`requireDubboJava` then fails).
 */
export function dubboJavaSkip(): string | false {
  const missing = dubboJavaMissing();
  return missing !== undefined && !process.env.CI ? `Dubbo Java peer unavailable: ${missing}` : false;
}

/** Throws (fails the tests) when the peer cannot run: called first in the tests' `before`. */
export function requireDubboJava(): void {
  const missing = dubboJavaMissing();
  if (missing !== undefined) throw new Error(`the Dubbo Java tests cannot run (and CI is set, so they fail rather than skip): ${missing}`);
}

function sources(dir = SRC): string[] {
  return readdirSync(dir)
    .flatMap((n) => (statSync(join(dir, n)).isDirectory() ? sources(join(dir, n)) : [join(dir, n)]))
    .sort();
}

let compiling: Promise<string> | undefined;

/** The directory of the compiled programs (compiled once per content of test/java/dubbo). */
function compiledPrograms(): Promise<string> {
  compiling ??= compile();
  return compiling;
}

async function compile(): Promise<string> {
  const files = sources();
  const h = createHash("sha256");
  for (const f of files) h.update(relative(SRC, f)).update(readFileSync(f));
  const dir = join(tmpdir(), `triple-rpc-dubbo-java-${h.digest("hex").slice(0, 16)}`);
  const ready = () => existsSync(join(dir, "logging.properties"));
  if (ready()) return dir;
  // One test process compiles (javac takes seconds of CPU); the others wait for its directory.
  const lock = `${dir}.lock`;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (ready()) return dir;
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true }); // its process died
      await sleep(200);
    }
  }
  try {
    if (!ready())
      await javac(
        files.filter((f) => f.endsWith(".java")),
        dir,
      );
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  return dir;
}

/** Compiles beside `dir`, then renames into place (a reader never sees half a directory). */
async function javac(java: readonly string[], dir: string): Promise<void> {
  const work = `${dir}.${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const cp = [...FIXTURE_JARS.map((j) => join(FIXTURE, j)), ...DEBIAN_JARS].join(":");
  await new Promise<void>((resolve, reject) =>
    execFile("javac", ["-nowarn", "-parameters", "-encoding", "UTF-8", "-cp", cp, "-d", work, ...java], (err, _out, stderr) =>
      err ? reject(new Error(`javac failed: ${stderr}`)) : resolve(),
    ),
  );
  copyFileSync(join(SRC, "logging.properties"), join(work, "logging.properties"));
  renameSync(work, dir);
}

/** The class path of the compiled programs with the fixture's and Debian's jars (the overrides jar first, then `first`). */
export async function classpath(first: readonly string[] = []): Promise<string> {
  const fixture = [OVERRIDES, ...first].map((j) => join(FIXTURE, j));
  return [...fixture, await compiledPrograms(), ...FIXTURE_JARS.map((j) => join(FIXTURE, j)), ...DEBIAN_JARS].join(":");
}

/** Starts a JVM running `main` of the programs (fixture jars `first` ahead of Dubbo's); it exits when its stdin closes. */
async function startJava(main: string, args: readonly string[], extraFlags: readonly string[], first: readonly string[] = []): Promise<ChildProcess> {
  const cp = await classpath(first);
  return spawn("java", [...JVM_FLAGS, ...extraFlags, "-cp", cp, main, ...args], { stdio: ["pipe", "pipe", "pipe"] });
}

/** Closes a JVM's stdin (it exits by itself), then kills it if it has not within `graceMs`. */
async function stopJava(proc: ChildProcess, graceMs = 3000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  proc.stdin?.end();
  const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * A Dubbo Java provider of org.triplerpc.interop.Interop on 127.0.0.1:`port`: three registrations,
 * "default" (no version, no group), "v2" (version 2.0.0), "blue" (group blue); hessian2 and fastjson2.
 */
export class JavaProvider {
  private constructor(
    private readonly proc: ChildProcess,
    readonly port: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * `opts`: registry (zookeeper://…), app, mode (register-mode); `flags`: more JVM flags;
   * `peer.websocket`: with Dubbo's Triple-over-WebSocket transport (the overlay jar first).
   */
  static async start(
    port: number,
    opts: Record<string, string> = {},
    flags: readonly string[] = [],
    peer: { websocket?: boolean } = {},
  ): Promise<JavaProvider> {
    const args = [`port=${port}`, ...Object.entries(opts).map(([k, v]) => `${k}=${v}`)];
    const proc = await startJava("org.triplerpc.interop.JavaProvider", args, flags, peer.websocket ? [WEBSOCKET_OVERLAY] : []);
    const listening = await waitForListening(proc, "the Dubbo Java provider", 60_000);
    proc.stderr?.resume();
    return new JavaProvider(proc, listening);
  }

  stop(): Promise<void> {
    return stopJava(this.proc);
  }

  kill(): void {
    this.proc.kill("SIGKILL");
  }
}

/** What JavaConsumer answers for a command. */
export interface JavaAnswer {
  id: number;
  ok?: unknown;
  error?: {
    class: string;
    message?: string;
    /** RpcException.getCode() of the exception thrown. */
    code?: number;
    /** The gRPC status of the StatusRpcException in the cause chain, its description and its Dubbo code. */
    status?: string;
    description?: string;
    statusCode?: number;
    causes: string[];
  };
  /** How long the call took in Java, ms. */
  ms: number;
}

/** A Dubbo Java consumer of org.triplerpc.interop.Interop, driven by JSON commands (see JavaConsumer.java). */
export class JavaConsumer {
  private nextId = 1;
  private readonly pending = new Map<number, (a: JavaAnswer) => void>();
  private stderr = "";

  private constructor(private readonly proc: ChildProcess) {
    let buf = "";
    proc.stdout?.on("data", (c: Buffer) => {
      buf += c.toString("utf8");
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        const a = JSON.parse(line) as JavaAnswer;
        this.pending.get(a.id)?.(a);
        this.pending.delete(a.id);
      }
    });
    proc.stderr?.on("data", (c: Buffer) => {
      this.stderr = (this.stderr + c.toString("utf8")).slice(-20_000);
    });
    proc.once("exit", (code) => {
      for (const [id, done] of this.pending)
        done({ id, ms: 0, error: { class: "exit", message: `the Java consumer exited (${code}): ${this.stderr}`, causes: [] } });
      this.pending.clear();
    });
  }

  /**
   * `app` is the consumer's application name, `registry` (zookeeper://…) its application's
   * registry (where Dubbo reads the interface-application mapping), `flags` more JVM flags.
   */
  static async start(app = "java-consumer", registry?: string, flags: readonly string[] = []): Promise<JavaConsumer> {
    const proc = await startJava("org.triplerpc.interop.JavaConsumer", registry ? [app, registry] : [app], flags);
    await new Promise<void>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error("the Dubbo Java consumer did not start in 60 s")), 60_000);
      const onData = (c: Buffer) => {
        out += c.toString("utf8");
        if (out.includes("READY")) {
          clearTimeout(timer);
          proc.stdout?.off("data", onData);
          resolve();
        }
      };
      proc.stdout?.on("data", onData);
      proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the Dubbo Java consumer exited with ${code}`));
      });
    });
    return new JavaConsumer(proc);
  }

  /** Runs one command (`op`, its arguments, and url/registry, serialization, version, group, timeout). */
  call(cmd: Record<string, unknown>): Promise<JavaAnswer> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.proc.stdin?.write(`${JSON.stringify({ ...cmd, id })}\n`);
    });
  }

  /** The command's result; an error answer throws with Java's exception. */
  async ok(cmd: Record<string, unknown>): Promise<unknown> {
    const a = await this.call(cmd);
    if (a.error) throw new Error(`Java ${cmd.op} failed: ${a.error.class}: ${a.error.message} ${a.error.causes.join(" / ")}`);
    return a.ok;
  }

  stop(): Promise<void> {
    return stopJava(this.proc);
  }
}

/**
 * The `java` arguments that run `main` of the programs with the peer's -D flags (loopback,
 * logging) but not its fast-start ones (C1 only, serial GC, 256 MiB heap), then `flags`: for
 * bench/dubbo-java.mjs, whose JVMs run long enough for the JIT to matter.
 */
export async function javaBenchArgs(main: string, args: readonly string[], flags: readonly string[] = []): Promise<string[]> {
  return [...JVM_FLAGS.filter((f) => f.startsWith("-D")), ...flags, "-cp", await classpath(), main, ...args];
}

/**
 * The peer's class path (the fixture's jars, the compiled programs, Debian's jars) and JVM flags,
 * for programs compiled elsewhere (test/java/dubbo-protobuf.test.ts): `javac -cp` takes the
 * class path, and `javaTestArgs` starts `main` with `extra` entries added to it (and with Dubbo's
 * Triple-over-WebSocket transport when `peer.websocket`).
 */
export function dubboClasspath(): Promise<string> {
  return classpath();
}

export async function javaTestArgs(main: string, args: readonly string[], extra: readonly string[], peer: { websocket?: boolean } = {}): Promise<string[]> {
  return [...JVM_FLAGS, "-cp", [await classpath(peer.websocket ? [WEBSOCKET_OVERLAY] : []), ...extra].join(":"), main, ...args];
}
