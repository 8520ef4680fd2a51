// What the benchmark scripts share: a free loopback port, and pinning a command to one CPU.
import { spawnSync } from "node:child_process";
import { createServer } from "node:net";

/** A port nothing listens on right now (127.0.0.1). */
export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
    s.on("error", fail);
  });
}

/** `[cmd, args]` that run `cmd args` on CPU `cpu` through taskset, or as they are without it. */
export function pinned(cpu, cmd, args) {
  return spawnSync("taskset", ["-V"]).status === 0 ? ["taskset", ["-c", cpu, cmd, ...args]] : [cmd, args];
}
