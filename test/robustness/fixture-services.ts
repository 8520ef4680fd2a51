import { type CallContext, Ctx, Field, Method, Param, Service, T, InMemoryFile } from "../../src/index.js";

/** Names Object.prototype had when the process started: anything added later is pollution. */
const PRISTINE_OBJECT_KEYS = new Set(Reflect.ownKeys(Object.prototype).map(String));
const PRISTINE_ARRAY_KEYS = new Set(Reflect.ownKeys(Array.prototype).map(String));

/** What the probe reports about the server process. */
export interface ProbeReport {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** True when a full GC ran before measuring (the child was started with --expose-gc). */
  gcRan: boolean;
  /** Keys added to Object.prototype / Array.prototype since start (empty when clean). */
  pollution: string[];
}

function pollution(): string[] {
  const extra: string[] = [];
  for (const k of Reflect.ownKeys(Object.prototype)) if (!PRISTINE_OBJECT_KEYS.has(String(k))) extra.push(`Object.prototype.${String(k)}`);
  for (const k of Reflect.ownKeys(Array.prototype)) if (!PRISTINE_ARRAY_KEYS.has(String(k))) extra.push(`Array.prototype.${String(k)}`);
  // A setter-free check too: a polluted key shows up on a fresh object literal.
  const fresh: Record<string, unknown> = {};
  for (const k of ["polluted", "isAdmin", "role"]) if (fresh[k] !== undefined) extra.push(`({}).${k}`);
  return extra;
}

/**
 * Test-only introspection of the server process, so a test in another process can check what a
 * hostile request did to it: memory after a full GC and prototype pollution.
 */
@Service("robust.Probe")
export class ProbeService {
  @Method()
  report(): ProbeReport {
    const g = (globalThis as { gc?: () => void }).gc;
    if (g) {
      g();
      g();
    }
    const m = process.memoryUsage();
    return {
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      gcRan: g !== undefined,
      pollution: pollution(),
    };
  }
}

/** The user object of the XML / JSON samples: string fields username and location. */
export class UserInfo {
  @Field() username!: string;
  @Field() location!: string;
}

/** Describes a bound value without echoing it (a deep value must not be re-serialized here). */
function shape(v: unknown): { type: string; keys: string[]; plainProto: boolean; inheritedPolluted: boolean } {
  const isObj = typeof v === "object" && v !== null;
  return {
    type: Array.isArray(v) ? "array" : v === null ? "null" : typeof v,
    keys: isObj ? Object.keys(v).slice(0, 32) : [],
    plainProto: isObj ? Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null : true,
    inheritedPolluted: isObj && "polluted" in (v as object) && !Object.hasOwn(v as object, "polluted"),
  };
}

/**
 * IDL-less methods reachable with every body type: JSON, form, multipart, text and XML, used to
 * throw hostile bodies at each binder.
 */
@Service("robust.User")
export class UserService {
  /** Any JSON value; answers its shape. */
  @Method()
  inspect(@Param() value: unknown): ReturnType<typeof shape> {
    return shape(value);
  }

  /** A typed object (JSON or XML). */
  @Method()
  register(@Param() user: UserInfo): { message: string; shape: ReturnType<typeof shape> } {
    return { message: `${user.username}@${user.location}`, shape: shape(user) };
  }

  /** A form as a string map. */
  @Method()
  form(@Param({ type: T.record(T.string) }) fields: Record<string, string>): ReturnType<typeof shape> {
    return shape(fields);
  }

  /** Two named form fields or multipart parts. */
  @Method()
  login(@Param("username") username: string, @Param("location") location: string): { message: string } {
    return { message: `${username}@${location}` };
  }

  /** A multipart upload: a file and a note. */
  @Method()
  upload(@Param("file") file: InMemoryFile, @Param("note") note: string): { size: number; filename: string; note: string } {
    return { size: file.byteLength, filename: file.filename, note };
  }

  /** Sets custom `tri-*` response headers (CORS exposure checks). */
  @Method()
  traced(@Param() text: string, @Ctx() ctx: CallContext): { message: string } {
    ctx.responseHeaders.set("tri-trace-id", `trace-${text}`);
    ctx.responseHeaders.set("tri-request-id", `req-${text}`);
    return { message: text };
  }

  /** text/plain. */
  @Method()
  shout(@Param() text: string): { message: string } {
    return { message: text.toUpperCase() };
  }
}
