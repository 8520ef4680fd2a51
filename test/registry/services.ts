import { Method, Param, Service } from "../../src/index.js";

/** The interface the registry tests register and call. */
export const ECHO_SERVICE = "org.example.registry.EchoService";

/**
 * A provider that says who it is: `whoami` answers the name it was given (the tests count calls
 * per provider with it; a read, so idempotent: failover may send it again when a provider dies
 * with it in flight); `fail` always throws a plain Error (failover retries it).
 */
@Service(ECHO_SERVICE)
export class EchoService {
  constructor(readonly id = "provider") {}

  @Method({ idempotent: true })
  async whoami(): Promise<string> {
    return this.id;
  }

  @Method("SayHello")
  async sayHello(@Param("name") name: string): Promise<string> {
    return `hello ${name} from ${this.id}`;
  }

  @Method()
  async fail(): Promise<string> {
    throw new Error(`failed on ${this.id}`);
  }
}

const running = new Set<{ stop(): Promise<void> }>();

/** Stops every load loop still running (a test that failed half-way leaves its loop on). */
export async function stopAllLoads(): Promise<void> {
  await Promise.all([...running].map((l) => l.stop()));
}

/** Runs `call` back to back on `concurrency` lanes until `stop()`; counts successes per answer and collects failures. */
export function loadLoop(call: () => Promise<string>, concurrency = 4) {
  const loop = loadLanes(call, concurrency);
  running.add(loop);
  const stop = loop.stop;
  loop.stop = async () => {
    running.delete(loop);
    await stop();
  };
  return loop;
}

function loadLanes(call: () => Promise<string>, concurrency: number) {
  const counts = new Map<string, number>();
  const failures: unknown[] = [];
  let running = true;
  const lanes = Array.from({ length: concurrency }, async () => {
    while (running) {
      try {
        const who = await call();
        counts.set(who, (counts.get(who) ?? 0) + 1);
      } catch (e) {
        failures.push(e);
      }
      await new Promise((r) => setImmediate(r));
    }
  });
  return {
    counts,
    failures,
    /** Counts since the last reset. */
    reset(): void {
      counts.clear();
    },
    async stop(): Promise<void> {
      running = false;
      await Promise.all(lanes);
    },
  };
}

export { waitFor } from "../helpers/wait.js";

/** Log lines a registry writes, kept instead of printed. */
export function recordingLogger() {
  const lines: string[] = [];
  const push = (_fields: object, m: string) => {
    lines.push(m);
  };
  return { lines, logger: { info: push, warn: push, error: push } };
}
