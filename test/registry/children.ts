import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { waitForListening } from "../helpers/child.js";

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
    return waitForListening(proc, `provider ${id}`, 20_000).then((port) => new ProviderProcess(proc, id, port));
  }

  /** Sends `signal` and waits for the exit. */
  async stop(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.proc.once("exit", () => r()));
    this.proc.kill(signal);
    await exited;
  }
}
