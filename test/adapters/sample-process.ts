import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";

/** Starts a compiled sample (`node dist/samples/<name>/server.js`, PORT=0) and resolves its URL once it says where it listens. */
export function startSample(name: string, env: Record<string, string> = {}): Promise<{ url: string; proc: ChildProcess }> {
  const file = path.resolve(__dirname, `../../samples/${name}/server.js`);
  const proc = spawn(process.execPath, [file], { env: { ...process.env, PORT: "0", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`sample ${name} did not start: ${err}`));
    }, 15_000);
    proc.stderr?.on("data", (c: Buffer) => (err += c.toString()));
    proc.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1].replace(/\/$/, ""), proc });
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`sample ${name} exited with ${code}: ${err}`));
    });
  });
}

/** Stops a sample with SIGTERM (it drains and exits), SIGKILL after 5 s. */
export async function stopSample(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGTERM");
  const t = setTimeout(() => proc.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(t);
}
