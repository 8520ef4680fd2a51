import type { ChildProcess } from "node:child_process";

/**
 * Waits until a test's child process prints `LISTENING <port>` on stdout, and resolves the port.
 * Rejects, with what the child wrote to stderr, when it exits first or says nothing within
 * `timeoutMs` (the child is then killed). Stdout keeps flowing afterwards.
 */
export function waitForListening(proc: ChildProcess, what: string, timeoutMs = 15_000): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`${what} did not start: ${err}`));
    }, timeoutMs);
    proc.stderr?.on("data", (c: Buffer) => {
      err += c.toString();
    });
    proc.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        proc.stdout?.removeAllListeners("data");
        proc.stdout?.resume();
        resolve(Number(m[1]));
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}: ${err}`));
    });
  });
}
