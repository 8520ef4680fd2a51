// The browser side of the Google `grpc-web` test in test/browser/connect-web.test.ts (bundled with
// the connect-web page): grpc-web's own XHR client in text mode (its default:
// application/grpc-web-text, base64 bodies decoded as they stream in) and binary mode, calling
// the greet sample cross-origin. No codegen: MethodDescriptors with hand-written encoders of the
// three small messages. Results are JSON-serialisable.
import { GrpcWebClientBase, MethodDescriptor, MethodType } from "grpc-web";

const utf8 = new TextEncoder();
const text = new TextDecoder();

function varint(n) {
  const out = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** GreetRequest { string name = 1 } and GreetSlowlyRequest { name = 1; uint32 delay_ms = 2 }. */
function encodeRequest(req) {
  const name = utf8.encode(req.name);
  const bytes = [0x0a, ...varint(name.length), ...name];
  if (req.delayMs) bytes.push(0x10, ...varint(req.delayMs));
  return Uint8Array.from(bytes);
}

/** GreetResponse { string greeting = 1 }: the greeting, skipping nothing else (it has no other field). */
function decodeResponse(bytes) {
  if (bytes.length === 0) return { greeting: "" };
  let pos = 1;
  let len = 0;
  for (let shift = 0; ; shift += 7) {
    const b = bytes[pos++];
    len |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  return { greeting: text.decode(bytes.subarray(pos, pos + len)) };
}

class Message {}

const descriptor = (name, kind) => new MethodDescriptor(`/greet.GreetService/${name}`, kind, Message, Message, encodeRequest, decodeResponse);
const GREET = descriptor("Greet", MethodType.UNARY);
const SLOWLY = descriptor("GreetSlowly", MethodType.UNARY);
const STREAM = descriptor("GreetServerStream", MethodType.SERVER_STREAMING);

async function settle(run) {
  try {
    return { value: await run() };
  } catch (e) {
    return { error: { code: e.code, message: e.message } };
  }
}

function collect(stream) {
  return new Promise((resolve, reject) => {
    const got = [];
    stream.on("data", (r) => got.push(r.greeting));
    stream.on("error", reject);
    stream.on("end", () => resolve(got));
  });
}

async function runFormat(baseUrl, format) {
  const client = new GrpcWebClientBase({ format });
  const call = (md, req, metadata = {}) => client.unaryCall(baseUrl + md.getName(), req, metadata, md);
  const out = {};
  out.unary = await settle(async () => (await call(GREET, { name: "triple" })).greeting);
  out.wrongName = await settle(async () => (await call(GREET, { name: "nobody" })).greeting);
  out.serverStream = await settle(() => collect(client.serverStreaming(baseUrl + STREAM.getName(), { name: "web" }, {}, STREAM)));
  const started = performance.now();
  out.deadline = await settle(async () => (await call(SLOWLY, { name: "s", delayMs: 5000 }, { deadline: String(Date.now() + 300) })).greeting);
  out.deadline.ms = Math.round(performance.now() - started);
  return out;
}

/** Calls the sample with Google's grpc-web client in text and binary mode. */
export const runGrpcWebJs = async (baseUrl) => ({
  text: await runFormat(baseUrl, "text"),
  binary: await runFormat(baseUrl, "binary"),
});
