// The logger contract (pino's shape, console accepted), the checked user logger, and the default
// console logger that writes one line per cause per window. Must not change: a flood of one cause
// never becomes a flood of log lines; the window's clock is injectable for tests.
import { type Clock, systemClock } from "../transport/clock.js";

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
const REPEAT_WINDOW_MS = 60_000;
/** Causes the default logger remembers; beyond that it forgets them all and starts over. */
const MAX_CAUSES = 1000;

/** The cause a line is about: its level and message (messages name the method and the error). */
function causeOf(level: Level, obj: object, msg: string): string {
  const err = (obj as { err?: unknown }).err;
  const kind = err instanceof Error ? err.name : "";
  return `${level}\0${kind}\0${msg}`;
}

/** A field's value as the console line shows it: strings and numbers as they are, the rest as JSON. */
function fieldText(v: unknown): string {
  if (typeof v === "string") return /[\s"=()]/.test(v) || v === "" ? JSON.stringify(v) : v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint" || v === null) return String(v);
  if (v instanceof Error) return JSON.stringify(`${v.name}: ${v.message}`);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** The fields after the message, `(key=value …)`; `err` and `stack` are left out (the message names the error). */
function fieldsText(obj: object, suppressed: number): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (k === "err" || k === "stack" || v === undefined) continue;
    parts.push(`${k}=${fieldText(v)}`);
  }
  if (suppressed > 0) parts.push(`suppressed=${suppressed}`);
  return parts.length ? ` (${parts.join(" ")})` : "";
}

/** The stack of a line's error without its first line (the message already says it), or "". */
function stackOf(obj: object): string {
  const err = (obj as { err?: unknown }).err;
  const stack = err instanceof Error ? err.stack : (obj as { stack?: unknown }).stack;
  if (typeof stack !== "string") return "";
  const lines = stack.split("\n");
  const frames = lines.findIndex((l) => /^\s+at /.test(l));
  return frames < 0 ? "" : lines.slice(frames).join("\n");
}

/**
 * The default logger: `console.warn` / `console.error` (info lines are dropped), one compact line
 * per event: `[triple-rpc] <message> (key=value …)`. The error's stack follows only the first
 * time a cause (level, error class and message) is printed. At most one line per cause per
 * minute: repeats within the minute are counted, and the next line printed for that cause says
 * how many were left out (`suppressed=<n>`). A handler that fails in a loop prints one line a
 * minute, not one per call.
 */
export class ConsoleLogger implements Logger {
  private readonly causes = new Map<string, { until: number; suppressed: number }>();
  /** Causes whose stack was printed. */
  private readonly stacked = new Set<string>();

  constructor(
    private readonly sink: Pick<Console, "warn" | "error"> = console,
    private readonly windowMs = REPEAT_WINDOW_MS,
    /** What the repeat window is measured on (tests move it by hand). */
    private readonly clock: Clock = systemClock,
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
    const now = this.clock.now();
    const seen = this.causes.get(key);
    if (seen && now < seen.until) {
      seen.suppressed++;
      return;
    }
    if (!seen && this.causes.size >= MAX_CAUSES) {
      this.causes.clear();
      this.stacked.clear();
    }
    const suppressed = seen?.suppressed ?? 0;
    this.causes.set(key, { until: now + this.windowMs, suppressed: 0 });
    const line = `[triple-rpc] ${msg}${fieldsText(obj, suppressed)}`;
    const stack = this.stacked.has(key) ? "" : stackOf(obj);
    if (stack) this.stacked.add(key);
    this.sink[level](stack ? `${line}\n${stack}` : line);
  }
}

/** The process-wide default logger (one memory of causes for every server and client). */
export const defaultLogger: Logger = new ConsoleLogger();

/**
 * Checks a `logger` option: an object with `info`, `warn` and `error` functions. Left out, the
 * default logger; with a `clock` of the caller's (not the system's), a console logger of its own
 * whose repeat window reads that clock.
 */
export function checkedLogger(logger: Logger | undefined, where: string, clock: Clock = systemClock): Logger {
  if (logger === undefined) return clock === systemClock ? defaultLogger : new ConsoleLogger(console, REPEAT_WINDOW_MS, clock);
  for (const m of ["info", "warn", "error"] as const) {
    if (typeof (logger as Partial<Logger> | null)?.[m] !== "function") {
      throw new TypeError(`${where}: logger must have info, warn and error methods (pino's or console's shape)`);
    }
  }
  return logger;
}
