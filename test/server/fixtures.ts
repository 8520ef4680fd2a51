import * as protobuf from "protobufjs";
import { type CallContext, Ctx, Field, Method, Param, Service } from "../../src/index.js";

/** A bindable class for type-checking tests. */
export class Point {
  @Field() x!: number;
  @Field() y!: number;
}

/** What the context probe saw, for assertions. */
export interface ContextSeen {
  custom: string | undefined;
  binary: string | undefined;
  deadline: number | undefined;
  remaining: number | undefined;
  peerAddress: string;
  peerPort: number;
  httpVersion: string;
  signalIsAbortSignal: boolean;
  aborted: boolean;
}

/**
 * An IDL-less service exercising binding, errors, sync and async handlers, timeouts and the call
 * context. `aborts` records the reason each `slow` call's AbortSignal fired with.
 */
@Service("test.Calc")
export class CalcService {
  readonly aborts: unknown[] = [];
  slowStarted = 0;

  @Method()
  async add(@Param("a") a: number, @Param("b") b: number): Promise<number> {
    return a + b;
  }

  @Method()
  echo(@Param("text") text: string): string {
    return text;
  }

  @Method()
  norm(@Param() p: Point): number {
    return Math.hypot(p.x, p.y);
  }

  @Method()
  sum(@Param({ type: [Number] }) values: number[]): number {
    return values.reduce((a, b) => a + b, 0);
  }

  /** Answers `n` repetitions of "x" (compressible responses). */
  @Method()
  repeat(@Param() n: number): string {
    return "x".repeat(n);
  }

  /** Counts the bytes it received (request compression and size tests). */
  @Method()
  size(@Param() text: string): number {
    return text.length;
  }

  @Method()
  nothing(): void {}

  @Method()
  async fail(@Param() text: string): Promise<never> {
    throw new Error(text);
  }

  @Method()
  failSync(@Param() text: string): never {
    throw new TypeError(text);
  }

  /** Resolves after `ms`, or rejects when the call's signal fires (recording the reason). */
  @Method()
  slow(@Param() ms: number, @Ctx() ctx: CallContext): Promise<string> {
    this.slowStarted++;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve("done"), ms);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(t);
        this.aborts.push(ctx.signal.reason);
        reject(ctx.signal.reason);
      });
    });
  }

  /** Reports what the call context holds and sets response headers. */
  @Method()
  probe(@Ctx() ctx: CallContext, @Param() tag: string): ContextSeen {
    ctx.responseHeaders.set("x-reply", `seen-${tag}`);
    ctx.responseHeaders.set("x-data-bin", new Uint8Array([1, 2, 3]));
    return {
      custom: ctx.requestHeaders.get("x-custom"),
      binary: ctx.requestHeaders.getBinary("x-blob-bin")?.toString("utf8"),
      deadline: ctx.deadline,
      remaining: ctx.timeRemaining(),
      peerAddress: ctx.peer.address,
      peerPort: ctx.peer.port,
      httpVersion: ctx.httpVersion,
      signalIsAbortSignal: ctx.signal instanceof AbortSignal,
      aborted: ctx.signal.aborted,
    };
  }
}

/** A service with declared wire names: `@Method("Hello")` overrides the property name. */
@Service("test.Names")
export class NamesService {
  @Method("Hello")
  sayHello(@Param() name: string): string {
    return `hello ${name}`;
  }

  @Method()
  getThing(): string {
    return "thing";
  }
}

/** One interface, several registrations told apart by version and group. */
@Service("test.Versioned")
export class VersionedService {
  constructor(readonly label: string) {}

  @Method()
  who(): string {
    return this.label;
  }
}

const PROFILE_PROTO = `
syntax = "proto3";
package test;
message ProfileRequest { string user_name = 1; int32 age_years = 2; repeated string tags = 3; }
message ProfileReply { string display_name = 1; int32 next_age = 2; int32 tag_count = 3; }
service Profiles { rpc Describe(ProfileRequest) returns (ProfileReply); }
`;

/** A protobufjs root for the IDL tests (snake_case fields exercise ProtoJSON naming). */
export const PROFILE_ROOT: protobuf.Root = protobuf.parse(PROFILE_PROTO, { keepCase: true }).root;
PROFILE_ROOT.resolveAll();

/** Request of test.Profiles/Describe. */
export interface ProfileRequest {
  user_name: string;
  age_years: number;
  tags: string[];
}

/** An IDL service bound to PROFILE_ROOT. */
@Service("test.Profiles", { proto: PROFILE_ROOT })
export class ProfilesService {
  async describe(req: ProfileRequest): Promise<object> {
    return { display_name: `${req.user_name}!`, next_age: req.age_years + 1, tag_count: req.tags.length };
  }
}
