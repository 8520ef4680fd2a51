import * as assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { closeClient, createClient, createServer, Method, Param, Service, type TripleServer, unimplemented } from "../../src/index.js";
import { waitForListening } from "../helpers/child.js";
import { freePort } from "../helpers/zookeeper.js";
import { QUIET } from "./dubbo-interop.js";
import { dubboClasspath, dubboJavaMissing, dubboJavaSkip, javaTestArgs, requireDubboJava } from "./dubbo-peer.js";

/**
 * A `.proto` service between Dubbo 3.3.1 Java and ours, with Dubbo's protobuf serialization over
 * Triple and no stub generator: test/java/dubbo-proto holds pbgreet.proto, a plain Java interface
 * whose methods take and return the message classes `protoc --java_out` generates (Dubbo sees
 * protobuf classes and sends them bare, as gRPC does), a Java provider and a Java consumer. Our
 * side binds the same .proto. Both directions, unary and server stream.
 */

const SRC = path.resolve(__dirname, "../../../test/java/dubbo-proto");
const PB_PROTO = path.join(SRC, "pbgreet.proto");

interface HelloRequest {
  name: string;
  id: bigint | string | number;
  tags: string[];
}
interface HelloReply {
  message: string;
  id: bigint | string | number;
  tags: number;
}

/** pbgreet.proto's service, as our contract (client) and provider. */
@Service("org.triplerpc.pb.PbGreeter", { proto: PB_PROTO })
class PbGreeter {
  @Method("hello")
  hello(@Param() _req: HelloRequest): Promise<HelloReply> {
    return unimplemented();
  }

  @Method("helloStream")
  helloStream(@Param() _req: HelloRequest): AsyncIterable<HelloReply> {
    return unimplemented();
  }
}

class OurPbGreeter extends PbGreeter {
  override async hello(req: HelloRequest): Promise<HelloReply> {
    return reply(req, "");
  }

  override async *helloStream(req: HelloRequest): AsyncIterable<HelloReply> {
    for (let i = 1; i <= 3; i++) yield reply(req, ` #${i}`);
  }
}

const reply = (req: HelloRequest, suffix: string): HelloReply => ({
  message: `hello ${req.name} from ts${suffix}`,
  id: BigInt(req.id) + 1n,
  tags: req.tags.length,
});

/** Why protoc cannot run (the protobuf-compiler package), or the peer's reason. */
function missing(): string | undefined {
  if (spawnSync("protoc", ["--version"]).status !== 0) return "protoc is not installed (apt-get install protobuf-compiler)";
  return dubboJavaMissing();
}

function run(cmd: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile(cmd, args, (err, _out, stderr) => (err ? reject(new Error(`${cmd} failed: ${stderr}`)) : resolve())));
}

/** protoc --java_out, then javac of the generated classes and the programs (once per content of test/java/dubbo-proto); the classes' directory. */
async function compiled(): Promise<string> {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".java") || f.endsWith(".proto"))
    .sort();
  const h = createHash("sha256");
  for (const f of files) h.update(f).update(readFileSync(path.join(SRC, f)));
  const dir = path.join(tmpdir(), `triple-rpc-dubbo-pb-${h.digest("hex").slice(0, 16)}`);
  if (existsSync(dir)) return path.join(dir, "classes");
  const work = `${dir}.${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(path.join(work, "gen"), { recursive: true });
  await run("protoc", [`--java_out=${path.join(work, "gen")}`, `-I${SRC}`, PB_PROTO]);
  const gen = readdirSync(path.join(work, "gen"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".java"));
  const java = [...gen.map((f) => path.join(work, "gen", f)), ...files.filter((f) => f.endsWith(".java")).map((f) => path.join(SRC, f))];
  await run("javac", ["-nowarn", "-parameters", "-encoding", "UTF-8", "-cp", await dubboClasspath(), "-d", path.join(work, "classes"), ...java]);
  renameSync(work, dir);
  return path.join(dir, "classes");
}

async function java(classes: string, main: string, args: readonly string[]): Promise<ChildProcess> {
  return spawn("java", await javaTestArgs(main, args, [classes]), { stdio: ["pipe", "pipe", "pipe"] });
}

/** Runs PbConsumer against `url`; its output lines (replies "message|id|tags", then DONE, or ERROR …). */
async function javaConsumer(classes: string, url: string, name: string): Promise<string[]> {
  const proc = await java(classes, "org.triplerpc.pb.PbConsumer", [url, name]);
  let out = "";
  proc.stdout?.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  proc.stderr?.resume();
  const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
  await new Promise((r) => proc.once("exit", r));
  clearTimeout(timer);
  return out.split("\n").filter((l) => l.includes("|") || l.startsWith("DONE") || l.startsWith("ERROR"));
}

const skip = dubboJavaSkip() || (missing() !== undefined && !process.env.CI ? `protoc or the Dubbo Java peer unavailable: ${missing()}` : false);

describe("a .proto service between Dubbo Java (protobuf serialization, no stub generator) and ours", { skip }, () => {
  let classes: string;
  let provider: ChildProcess | undefined;
  let port: number;
  let server: TripleServer;

  before(async () => {
    requireDubboJava();
    const why = missing();
    if (why !== undefined) throw new Error(`the Dubbo protobuf tests cannot run (and CI is set, so they fail rather than skip): ${why}`);
    classes = await compiled();
    port = await freePort();
    provider = await java(classes, "org.triplerpc.pb.PbProvider", [String(port)]);
    server = createServer({ logger: QUIET, services: [new OurPbGreeter()] });
    await Promise.all([waitForListening(provider, "the Dubbo Java protobuf provider", 60_000), server.listen({ port: 0, host: "127.0.0.1" })]);
    provider.stderr?.resume();
  });
  after(async () => {
    provider?.stdin?.end();
    if (provider && provider.exitCode === null) {
      const t = setTimeout(() => provider?.kill("SIGKILL"), 3000);
      await new Promise((r) => provider?.once("exit", r));
      clearTimeout(t);
    }
    await server?.close();
  });

  for (const protocol of ["grpc", "triple"] as const) {
    it(`our .proto client (${protocol}) calls the Java provider: unary${protocol === "grpc" ? " and server stream" : ""}, int64, repeated`, async () => {
      const c = createClient(PbGreeter, { providers: [`http://127.0.0.1:${port}`], protocol, retries: 0, timeoutMs: 15_000, logger: QUIET });
      try {
        // A .proto client sends an int64 as a JavaScript integer (within ±2^53) and reads it as a decimal string.
        const req = { name: "ann", id: -(2 ** 53) + 1, tags: ["a", "é"] };
        const r = await c.hello(req);
        assert.deepEqual({ ...r }, { message: "hello ann from java", id: "-9007199254740990", tags: 2 });
        // Streams: gRPC only (Dubbo 3.3.1 answers our Triple-protocol stream with an HTTP 500; docs/registry.md).
        if (protocol === "triple") return;
        const got: string[] = [];
        for await (const m of c.helloStream(req)) got.push(`${m.message}|${m.id}|${m.tags}`);
        assert.deepEqual(
          got,
          [1, 2, 3].map((i) => `hello ann from java #${i}|-9007199254740990|2`),
        );
      } finally {
        await closeClient(c);
      }
    });
  }

  it("the Dubbo Java consumer calls our .proto provider: unary and server stream, int64 at its edge (Long.MIN_VALUE + 1)", async () => {
    const lines = await javaConsumer(classes, `tri://127.0.0.1:${new URL(server.url).port}`, "bob");
    assert.deepEqual(lines, ["hello bob from ts|-9223372036854775806|2", ...[1, 2, 3].map((i) => `hello bob from ts #${i}|-9223372036854775806|2`), "DONE"]);
  });
});
