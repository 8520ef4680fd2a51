import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { waitForListening } from "../helpers/child.js";

const SCRIPT = path.join(__dirname, "client-provider.js");

/** One provider child process of the client's hostile tests, with its journal. */
export class ProviderChild {
  private constructor(
    readonly proc: ChildProcess,
    readonly address: string,
    readonly journal: string | undefined,
  ) {}

  /** Starts a provider appending its handlers' call ids to `journal` (when given). */
  static start(journal?: string): Promise<ProviderChild> {
    const proc = spawn(process.execPath, [SCRIPT], {
      env: { ...process.env, JOURNAL: journal ?? "" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    return waitForListening(proc, "provider").then((port) => new ProviderChild(proc, `127.0.0.1:${port}`, journal));
  }

  /** The ids in the journal so far. */
  entries(): string[] {
    if (!this.journal) return [];
    try {
      return readFileSync(this.journal, "utf8").split("\n").filter(Boolean);
    } catch {
      return [];
    }
  }

  /** Sends a signal (SIGSTOP, SIGCONT, SIGKILL). */
  signal(sig: NodeJS.Signals): void {
    this.proc.kill(sig);
  }

  /** Ends the process (resumed first, in case it is stopped) and waits for it. */
  async stop(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.proc.once("exit", () => r()));
    this.proc.kill("SIGCONT");
    this.proc.kill("SIGKILL");
    await exited;
  }
}
