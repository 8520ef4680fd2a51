// What the benchmark scripts share: a free loopback port, pinning a command to one CPU, and
// starting and stopping a pinned server process.
import { spawn, spawnSync } from "node:child_process";
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

/** Starts `node <args>` on CPU 0 and resolves with the child once its stdout shows `marker`. */
export function startServer(args, env, marker) {
  const [cmd, argv] = pinned("0", process.execPath, args);
  const child = spawn(cmd, argv, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes(marker)) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
}

/** Stops a server child (SIGTERM) and waits for it. */
export function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", resolve);
    child.kill("SIGTERM");
  });
}
