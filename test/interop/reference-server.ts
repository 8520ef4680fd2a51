import * as grpc from "@grpc/grpc-js";
import { testing } from "./grpc-js-clients.js";

const ECHO_INITIAL = "x-grpc-test-echo-initial";
const ECHO_TRAILING = "x-grpc-test-echo-trailing-bin";

type AnyCall = grpc.ServerUnaryCall<any, any> | grpc.ServerReadableStream<any, any> | grpc.ServerWritableStream<any, any> | grpc.ServerDuplexStream<any, any>;

interface Status {
  code: number;
  message: string;
}
interface Params {
  size: number;
  interval_us: number;
}

function echoInitial(call: AnyCall): void {
  const v = call.metadata.get(ECHO_INITIAL);
  if (v.length > 0) {
    const md = new grpc.Metadata();
    md.set(ECHO_INITIAL, v[0]);
    call.sendMetadata(md);
  }
}

function echoTrailer(call: AnyCall): grpc.Metadata {
  const md = new grpc.Metadata();
  const v = call.metadata.get(ECHO_TRAILING);
  if (v.length > 0) md.set(ECHO_TRAILING, v[0]);
  return md;
}

function statusError(call: AnyCall, s: Status): grpc.ServerErrorResponse {
  return Object.assign(new Error(s.message), { code: s.code, details: s.message, metadata: echoTrailer(call) });
}

function expectError(call: AnyCall, expect: { value: boolean } | null): grpc.ServerErrorResponse | null {
  void call;
  if (!expect?.value) return null;
  return Object.assign(new Error("expected a compressed request"), {
    code: grpc.status.INVALID_ARGUMENT,
    details: "expected a compressed request",
  });
}

const sleep = (us: number) => new Promise((r) => setTimeout(r, us / 1000));

async function writeAll(call: { write(m: unknown): unknown; cancelled: boolean }, params: Params[]): Promise<void> {
  for (const p of params) {
    if (p.interval_us > 0) await sleep(p.interval_us);
    if (call.cancelled) return;
    call.write({ payload: { type: "COMPRESSABLE", body: Buffer.alloc(p.size) } });
  }
}

/**
 * grpc.testing.TestService on `@grpc/grpc-js`: the reference the interop cases are proven
 * against before they run against our server. Follows the interop server features; grpc-js
 * cannot compress responses and strips `grpc-encoding` from handler metadata, so
 * CompressedResponse and CompressedRequest are not served.
 */
const implementation: grpc.UntypedServiceImplementation = {
  emptyCall(call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) {
    echoInitial(call);
    cb(null, {}, echoTrailer(call));
  },
  unaryCall(call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) {
    echoInitial(call);
    const req = call.request;
    if (req.response_status && req.response_status.code !== 0) return cb(statusError(call, req.response_status));
    const err = expectError(call, req.expect_compressed);
    if (err) return cb(err);
    cb(null, { payload: { type: "COMPRESSABLE", body: Buffer.alloc(req.response_size) } }, echoTrailer(call));
  },
  streamingOutputCall(call: grpc.ServerWritableStream<any, any>) {
    echoInitial(call);
    const req = call.request;
    if (req.response_status && req.response_status.code !== 0) {
      call.destroy(statusError(call, req.response_status));
      return;
    }
    writeAll(call, req.response_parameters).then(() => call.end(echoTrailer(call)));
  },
  streamingInputCall(call: grpc.ServerReadableStream<any, any>, cb: grpc.sendUnaryData<any>) {
    echoInitial(call);
    let total = 0;
    let failed = false;
    call.on("data", (req) => {
      const err = expectError(call, req.expect_compressed);
      if (err && !failed) {
        failed = true;
        cb(err);
      }
      total += req.payload?.body?.length ?? 0;
    });
    call.on("end", () => {
      if (!failed) cb(null, { aggregated_payload_size: total }, echoTrailer(call));
    });
  },
  fullDuplexCall(call: grpc.ServerDuplexStream<any, any>) {
    echoInitial(call);
    let chain = Promise.resolve();
    let failed = false;
    call.on("data", (req) => {
      if (failed) return;
      if (req.response_status && req.response_status.code !== 0) {
        failed = true;
        chain.then(() => call.emit("error", statusError(call, req.response_status)));
        return;
      }
      chain = chain.then(() => writeAll(call, req.response_parameters));
    });
    call.on("end", () => {
      if (!failed) chain.then(() => call.end(echoTrailer(call)));
    });
  },
  halfDuplexCall(call: grpc.ServerDuplexStream<any, any>) {
    echoInitial(call);
    const all: any[] = [];
    call.on("data", (req) => all.push(req));
    call.on("end", async () => {
      for (const req of all) await writeAll(call, req.response_parameters);
      call.end(echoTrailer(call));
    });
  },
};

/** Starts the grpc-js reference TestService on 127.0.0.1 (port 0: any free port). */
export async function startReferenceServer(port = 0): Promise<{ address: string; close(): Promise<void> }> {
  const server = new grpc.Server();
  server.addService(testing.TestService.service, implementation);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return {
    address: `127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        // Streams a test left open must not hold the process.
        setTimeout(() => server.forceShutdown(), 1000).unref();
      }),
  };
}
