import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { Method, Service, unimplemented } from "../../src/index.js";
import { waitForListening } from "../helpers/child.js";

/** The Java interface's whoami as a read (idempotent): our failover may send it again when a provider goes with it in flight. */
@Service("org.triplerpc.interop.Interop")
export class WhoAmI {
  @Method({ returns: String, idempotent: true })
  whoami(): Promise<string> {
    return unimplemented();
  }
}

/** What JavaConsumer's load op answers (see LoadLoop.java). */
export interface JavaLoad {
  calls: number;
  failures: number;
  counts: Record<string, number>;
  errors: string[];
  ms: number;
}

const CHILD = path.join(__dirname, "dubbo-provider-child.js");

/** Our provider of org.triplerpc.interop.Interop in a process of its own (dubbo-provider-child), registered in `registry`. */
export async function startChildProvider(registry: string, app: string, tag: string): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [CHILD], { env: { ...process.env, REGISTRY: registry, APP: app, TAG: tag }, stdio: ["ignore", "pipe", "pipe"] });
  await waitForListening(proc, `our provider ${tag}`, 30_000);
  return proc;
}

/** SIGKILLs a child process and waits for its exit. */
export function killChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  proc.kill("SIGKILL");
  return exited;
}

/** How long a change may take to reach a consumer: Java throttles its notifications (up to 5 s), ZooKeeper under load. */
const FOLLOW_MS = 25_000;

/** Which providers answer `n` calls at once (answer → calls; failures under their message). */
export async function tally(call: () => Promise<string>, n = 24): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const answers = await Promise.all(Array.from({ length: n }, () => call().catch((e: Error) => `error: ${e.message}`)));
  for (const a of answers) seen.set(a, (seen.get(a) ?? 0) + 1);
  return seen;
}

/** Polls until `tag` answers some of a batch of calls; the time it took, ms. */
export async function until(call: () => Promise<string>, tag: string, what: string): Promise<number> {
  const start = Date.now();
  for (;;) {
    const seen = await tally(call, 12);
    if (seen.has(tag)) return Date.now() - start;
    if (Date.now() - start > FOLLOW_MS) throw new Error(`${what}: ${tag} not called within ${FOLLOW_MS} ms (answers: ${JSON.stringify([...seen])})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
