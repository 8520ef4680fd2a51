import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import { GREET_PROTO } from "../../samples/greet/greet-service.js";
import { HEALTH_PROTO_JSON } from "../../src/runtime/health.js";
import { PROBE_PROTO } from "./probe-service.js";

const opts = { keepCase: true, longs: Number, enums: String, defaults: true } as const;

type Ctor = new (address: string, creds: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => any;

function ctorOf(def: loader.PackageDefinition, name: string): Ctor {
  let o: any = grpc.loadPackageDefinition(def);
  for (const part of name.split(".")) o = o[part];
  return o as Ctor;
}

/** grpc-js client constructors for the services the tests call. */
export const clients = {
  greet: ctorOf(loader.loadSync(GREET_PROTO, opts), "greet.GreetService"),
  probe: ctorOf(loader.loadSync(PROBE_PROTO, opts), "probe.Probe"),
  health: ctorOf(loader.fromJSON(HEALTH_PROTO_JSON as Parameters<typeof loader.fromJSON>[0], opts), "grpc.health.v1.Health"),
};

/** The outcome of a unary call: the response, or the error's code, details and metadata. */
export interface UnaryOutcome {
  response?: any;
  error?: grpc.ServiceError;
  headers?: grpc.Metadata;
  trailers?: grpc.Metadata;
}

/** Calls a unary (or client-streaming, with `write`) method and collects everything. */
export function unary(
  client: any,
  method: string,
  request: unknown,
  options: { metadata?: grpc.Metadata; deadline?: number; callOptions?: grpc.CallOptions } = {},
): Promise<UnaryOutcome> {
  return new Promise((resolve) => {
    const out: UnaryOutcome = {};
    const call = client[method](
      request,
      options.metadata ?? new grpc.Metadata(),
      { ...(options.deadline ? { deadline: Date.now() + options.deadline } : {}), ...options.callOptions },
      (err: grpc.ServiceError | null, res: unknown) => {
        if (err) out.error = err;
        else out.response = res;
      },
    );
    call.on("metadata", (m: grpc.Metadata) => (out.headers = m));
    call.on("status", (s: grpc.StatusObject) => {
      out.trailers = s.metadata;
      // The callback runs before 'status'; let it land first.
      setImmediate(() => resolve(out));
    });
  });
}

/** Reads a server stream to its end: the messages and the final status. */
export function collect(stream: grpc.ClientReadableStream<any>): Promise<{ messages: any[]; status: grpc.StatusObject; error?: grpc.ServiceError }> {
  return new Promise((resolve) => {
    const messages: any[] = [];
    let error: grpc.ServiceError | undefined;
    stream.on("data", (m) => messages.push(m));
    stream.on("error", (e: grpc.ServiceError) => (error = e));
    stream.on("status", (status: grpc.StatusObject) => setImmediate(() => resolve({ messages, status, error })));
  });
}

export { grpc };
