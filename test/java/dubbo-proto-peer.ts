import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { Method, Param, Service, unimplemented } from "../../src/index.js";
import { dubboClasspath, dubboJavaMissing, javaTestArgs } from "./dubbo-peer.js";

/**
 * The Dubbo Java programs of test/java/dubbo-proto (pbgreet.proto, a plain Java interface whose
 * methods take and return the message classes `protoc --java_out` generates, a provider and a
 * consumer) and our contract of the same service: for test/java/dubbo-protobuf.test.ts and
 * test/java/dubbo-websocket.test.ts.
 */

const SRC = path.resolve(__dirname, "../../../test/java/dubbo-proto");
const PB_PROTO = path.join(SRC, "pbgreet.proto");

export interface HelloRequest {
  name: string;
  id: bigint | string | number;
  tags: string[];
}
export interface HelloReply {
  message: string;
  id: bigint | string | number;
  tags: number;
}

/** pbgreet.proto's service, as our contract (client) and provider. */
@Service("org.triplerpc.pb.PbGreeter", { proto: PB_PROTO })
export class PbGreeter {
  @Method("hello")
  hello(@Param() _req: HelloRequest): Promise<HelloReply> {
    return unimplemented();
  }

  @Method("helloStream")
  helloStream(@Param() _req: HelloRequest): AsyncIterable<HelloReply> {
    return unimplemented();
  }
}

/** Why protoc cannot run (the protobuf-compiler package), or the peer's reason. */
export function protoMissing(): string | undefined {
  if (spawnSync("protoc", ["--version"]).status !== 0) return "protoc is not installed (apt-get install protobuf-compiler)";
  return dubboJavaMissing();
}

function run(cmd: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile(cmd, args, (err, _out, stderr) => (err ? reject(new Error(`${cmd} failed: ${stderr}`)) : resolve())));
}

/** protoc --java_out, then javac of the generated classes and the programs (once per content of test/java/dubbo-proto); the classes' directory. */
export async function compiledProtoPrograms(): Promise<string> {
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

/** Starts `main` of the compiled programs (with Dubbo's Triple-over-WebSocket transport when `peer.websocket`). */
export async function startProtoJava(classes: string, main: string, args: readonly string[], peer: { websocket?: boolean } = {}): Promise<ChildProcess> {
  return spawn("java", await javaTestArgs(main, args, [classes], peer), { stdio: ["pipe", "pipe", "pipe"] });
}

/** Closes a program's stdin (it exits by itself), then kills it if it has not within 3 s. */
export async function stopProtoJava(proc: ChildProcess | undefined): Promise<void> {
  proc?.stdin?.end();
  if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
  const t = setTimeout(() => proc.kill("SIGKILL"), 3000);
  await new Promise((r) => proc.once("exit", r));
  clearTimeout(t);
}
