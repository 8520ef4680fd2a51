import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The Java peer of the hessian2 tests (test/java/HessianPeer.java with Caucho Hessian 4 from
 * Debian's libhessian-java and protobuf-java from libprotobuf-java), compiled with javac into a
 * temp directory named by the sources' hash (so one compile serves every test file and run).
 */
const SRC = join(__dirname, "../../../test/java");
const SOURCES = ["HessianPeer.java", "org/example/User.java"];
const JARS = ["/usr/share/java/hessian.jar", "/usr/share/java/protobuf.jar"];

/** Why the Java peer cannot run here, or undefined when it can. */
export function javaMissing(): string | undefined {
  if (spawnSync("javac", ["-version"]).status !== 0) return "javac not installed (default-jdk-headless)";
  for (const j of JARS) if (!existsSync(j)) return `${j} not installed (libhessian-java, libprotobuf-java)`;
  return undefined;
}

let classes: string | undefined;

function compiled(): string {
  if (classes) return classes;
  const h = createHash("sha256");
  for (const s of SOURCES) h.update(readFileSync(join(SRC, s)));
  const dir = join(tmpdir(), `triple-rpc-java-${h.digest("hex").slice(0, 16)}`);
  if (!existsSync(join(dir, "HessianPeer.class"))) {
    mkdirSync(dir, { recursive: true });
    execFileSync("javac", ["-nowarn", "-d", dir, "-cp", JARS.join(":"), ...SOURCES.map((s) => join(SRC, s))], { stdio: "pipe" });
  }
  classes = dir;
  return dir;
}

/** Runs the peer on `commands` (one a line); its answer lines. */
export function javaPeer(commands: readonly string[]): string[] {
  const cp = [compiled(), ...JARS].join(":");
  const out = execFileSync(
    "java",
    ["--add-opens", "java.base/java.lang=ALL-UNNAMED", "--add-opens", "java.base/java.math=ALL-UNNAMED", "-cp", cp, "HessianPeer"],
    {
      input: `${commands.join("\n")}\n`,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const lines = out.toString("utf8").split("\n");
  lines.pop();
  return lines;
}

export const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
export const unhex = (s: string): Buffer => Buffer.from(s, "hex");
