/**
 * The logger triple-rpc writes to: pino's shape (an object of fields first, the message second),
 * which `console` also accepts. Pass `logger` to the server or client to use your own.
 */
export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

type Level = "info" | "warn" | "error";

/** How long the default logger stays quiet about one cause after printing it, ms. */
export const REPEAT_WINDOW_MS = 60_000;
/** Causes the default logger remembers; beyond that it forgets them all and starts over. */
const MAX_CAUSES = 1000;

/** The cause a line is about: its level and message (messages name the method and the error). */
function causeOf(level: Level, obj: object, msg: string): string {
  const err = (obj as { err?: unknown }).err;
  const kind = err instanceof Error ? err.name : "";
  return `${level}\0${kind}\0${msg}`;
}

/** The fields as the console shows them: without `stack` when `err` prints its own. */
function printable(obj: object, suppressed: number): object {
  const { stack, ...rest } = obj as { stack?: unknown };
  const fields = stack !== undefined && (obj as { err?: unknown }).err instanceof Error ? rest : obj;
  return suppressed > 0 ? { ...fields, suppressed } : fields;
}

/**
 * The default logger: `console.warn` / `console.error` (info lines are dropped), at most one line
 * per cause (level, error class and message) per minute. The first occurrence is printed at once;
 * repeats within the minute are counted, and the next line printed for that cause says how many
 * were left out (`suppressed`). A handler that fails in a loop prints one line a minute, not one
 * per call.
 */
export class ConsoleLogger implements Logger {
  private readonly causes = new Map<string, { until: number; suppressed: number }>();

  constructor(
    private readonly sink: Pick<Console, "warn" | "error"> = console,
    private readonly windowMs = REPEAT_WINDOW_MS,
  ) {}

  info(_obj: object, _msg: string): void {}

  warn(obj: object, msg: string): void {
    this.write("warn", obj, msg);
  }

  error(obj: object, msg: string): void {
    this.write("error", obj, msg);
  }

  private write(level: "warn" | "error", obj: object, msg: string): void {
    const key = causeOf(level, obj, msg);
    const now = Date.now();
    const seen = this.causes.get(key);
    if (seen && now < seen.until) {
      seen.suppressed++;
      return;
    }
    if (!seen && this.causes.size >= MAX_CAUSES) this.causes.clear();
    const suppressed = seen?.suppressed ?? 0;
    this.causes.set(key, { until: now + this.windowMs, suppressed: 0 });
    this.sink[level](`[triple-rpc] ${msg}`, printable(obj, suppressed));
  }
}

/** The process-wide default logger (one memory of causes for every server and client). */
export const defaultLogger: Logger = new ConsoleLogger();

/** Checks a `logger` option: an object with `info`, `warn` and `error` functions. */
export function checkedLogger(logger: Logger | undefined, where: string): Logger {
  if (logger === undefined) return defaultLogger;
  for (const m of ["info", "warn", "error"] as const) {
    if (typeof (logger as Partial<Logger> | null)?.[m] !== "function") {
      throw new TypeError(`${where}: logger must have info, warn and error methods (pino's or console's shape)`);
    }
  }
  return logger;
}
