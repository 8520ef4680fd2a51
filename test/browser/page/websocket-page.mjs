// Bundled by esbuild for Chromium: drives triple-rpc/web's WebSocket transport (no Node module).
import { webSocketTransport } from "../../../dist/src/web.js";

const enc = new TextEncoder();
const dec = new TextDecoder();

function init(url, path, extra = {}) {
  return {
    method: { path },
    url: url + path,
    headers: extra.headers ?? {},
    contentType: "application/json",
    signal: extra.signal ?? new AbortController().signal,
    deadline: undefined,
    maxBytes: 4 * 1024 * 1024,
  };
}

async function outcome(call, onMessage) {
  const got = [];
  try {
    for await (const m of call.responses) {
      got.push(JSON.parse(dec.decode(m)));
      onMessage?.();
    }
    return { value: got };
  } catch (e) {
    return { value: got, error: { code: e.code, message: e.message } };
  }
}

/** Bidi with `n` messages each way: all sent (send awaited: the back-pressure), read concurrently. */
async function bidi(url, n) {
  const t = performance.now();
  const call = webSocketTransport().open(init(url, "/greet.GreetService/GreetStream"));
  const reading = outcome(call);
  for (let i = 0; i < n; i++) await call.send(enc.encode(JSON.stringify({ name: `m${i}` })));
  call.end();
  const r = await reading;
  const last = r.value[r.value.length - 1];
  return { count: r.value.length, last, error: r.error, ms: Math.round(performance.now() - t) };
}

globalThis.runWebSocket = async (url) => {
  const out = {};
  out.bidi = await bidi(url, 10_000);
  const cs = webSocketTransport().open(init(url, "/greet.GreetService/GreetClientStream"));
  const csOut = outcome(cs);
  for (const name of ["a", "b", "c"]) await cs.send(enc.encode(JSON.stringify({ name })));
  cs.end();
  out.clientStream = await csOut;
  // The deadline travels as ?tri-service-timeout (a browser's WebSocket sends no headers).
  const dl = webSocketTransport().open(init(url, "/greet.GreetService/GreetStream", { headers: { "tri-service-timeout": "300" } }));
  out.deadline = await outcome(dl);
  const ac = new AbortController();
  const cancelled = webSocketTransport().open(init(url, "/greet.GreetService/GreetStream", { signal: ac.signal }));
  await cancelled.send(enc.encode(JSON.stringify({ name: "x" })));
  // Aborted once the echo is in (a fixed 50 ms timer lost the race on a loaded machine).
  out.cancel = await outcome(cancelled, () => ac.abort());
  out.unknown = await outcome(webSocketTransport().open(init(url, "/greet.GreetService/Nope")));
  return out;
};

globalThis.runWebSocketBench = (url, n) => bidi(url, n);
