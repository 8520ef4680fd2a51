import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";

const CHILD = path.join(__dirname, "provider-child.js");

/** A provider process registered in `registry` under `id`. */
export class ProviderProcess {
  private constructor(
    readonly proc: ChildProcess,
    readonly id: string,
    readonly port: number,
  ) {}

  static start(registry: string, id: string, env: Record<string, string> = {}): Promise<ProviderProcess> {
    const proc = spawn(process.execPath, [CHILD], { env: { ...process.env, REGISTRY: registry, ID: id, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    return new Promise((resolve, reject) => {
      let out = "";
      let err = "";
      const timer = setTimeout(() => {
        proc.kill("SIGKILL");
        reject(new Error(`provider ${id} did not start: ${err}`));
      }, 20_000);
      proc.stderr?.on("data", (c: Buffer) => {
        err += c.toString();
      });
      proc.stdout?.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /LISTENING (\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(new ProviderProcess(proc, id, Number(m[1])));
        }
      });
      proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`provider ${id} exited with ${code}: ${err}`));
      });
    });
  }

  /** Sends `signal` and waits for the exit. */
  async stop(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.proc.once("exit", () => r()));
    this.proc.kill(signal);
    await exited;
  }
}
