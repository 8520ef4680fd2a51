import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type CallContext, Ctx, Method, Param, RpcError, Service } from "../../src/index.js";

/** test/grpc/probe.proto, next to the sources. */
export const PROBE_PROTO = path.resolve(__dirname, "../../../test/grpc/probe.proto");

/** The request message of probe.proto. */
export interface ProbeRequest {
  text: string;
  delay_ms: number;
  count: number;
  payload: Uint8Array;
  code: number;
}

/** The response message of probe.proto. */
export interface ProbeResponse {
  text?: string;
  payload?: Uint8Array;
  seq?: number;
}

/** What the probe saw, for assertions about signals and backpressure. */
export interface ProbeLog {
  aborted: string[];
  /** Messages yielded by Ticks so far. */
  ticksYielded: number;
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, undefined, { signal }).catch(() => {});
}

/** Test service bound to probe.proto; see the comments there. */
@Service("probe.Probe", { proto: PROBE_PROTO })
export class ProbeService {
  readonly log: ProbeLog = { aborted: [], ticksYielded: 0 };

  @Method("Echo")
  echo(@Param() req: ProbeRequest, @Ctx() ctx: CallContext): ProbeResponse {
    for (const [k, v] of ctx.requestHeaders.entries()) {
      if (!k.startsWith("x-echo-")) continue;
      const name = k.slice("x-echo-".length);
      if (name.endsWith("-bin")) {
        ctx.responseHeaders.set(`x-header-${name}`, ctx.requestHeaders.getBinary(k)!);
        ctx.responseTrailers.set(`x-trailer-${name}`, ctx.requestHeaders.getBinary(k)!);
      } else {
        ctx.responseHeaders.set(`x-header-${name}`, v);
        ctx.responseTrailers.set(`x-trailer-${name}`, v);
      }
    }
    return { text: req.text, payload: req.payload };
  }

  @Method("Fail")
  fail(@Param() req: ProbeRequest): ProbeResponse {
    if (req.code > 0) {
      throw new RpcError(req.code, req.text, {
        metadata: { "x-error-meta": "yes" },
        details: [{ type: "probe.ProbeResponse", value: Buffer.from([0x0a, 0x02, 0x68, 0x69]) }],
      });
    }
    throw new Error(req.text);
  }

  @Method("Sleep")
  async sleep(@Param() req: ProbeRequest, @Ctx() ctx: CallContext): Promise<ProbeResponse> {
    await wait(req.delay_ms, ctx.signal);
    if (ctx.signal.aborted) this.log.aborted.push(`${req.text}:${(ctx.signal.reason as RpcError).code}`);
    return { text: req.text };
  }

  @Method("Ticks")
  async *ticks(@Param() req: ProbeRequest, @Ctx() ctx: CallContext): AsyncGenerator<ProbeResponse> {
    try {
      for (let i = 0; i < req.count; i++) {
        if (req.delay_ms > 0) await wait(req.delay_ms, ctx.signal);
        if (ctx.signal.aborted) break;
        this.log.ticksYielded++;
        yield { seq: i, payload: req.payload };
      }
    } finally {
      if (ctx.signal.aborted) this.log.aborted.push(`${req.text}:${(ctx.signal.reason as RpcError).code}`);
    }
  }

  @Method("Sum")
  async sum(@Param() reqs: AsyncIterable<ProbeRequest>): Promise<ProbeResponse> {
    let total = 0;
    let n = 0;
    for await (const r of reqs) {
      total += r.payload.length;
      n++;
      if (r.delay_ms > 0) await sleep(r.delay_ms);
    }
    return { text: `${n} messages`, seq: total };
  }

  @Method("Chat")
  async *chat(@Param() reqs: AsyncIterable<ProbeRequest>): AsyncGenerator<ProbeResponse> {
    let i = 0;
    for await (const r of reqs) {
      if (r.code > 0) throw new RpcError(r.code, r.text);
      yield { text: r.text, seq: i++ };
    }
  }
}
