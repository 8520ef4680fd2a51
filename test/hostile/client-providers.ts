import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";

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
    return new Promise((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error("provider did not start")), 15_000);
      proc.stdout?.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /LISTENING (\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          proc.stdout?.removeAllListeners("data");
          proc.stdout?.resume();
          resolve(new ProviderChild(proc, `127.0.0.1:${m[1]}`, journal));
        }
      });
      proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`provider exited with ${code}`));
      });
    });
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
