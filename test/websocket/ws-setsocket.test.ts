import * as assert from "node:assert/strict";
import { createRequire } from "node:module";
import { Duplex, PassThrough } from "node:stream";
import { describe, it } from "node:test";
import * as ws from "ws";
import { streamSupportError, webSocketOnStream } from "../../src/protocol-websocket/over-stream.js";

/** Two duplexes crossed: what one writes, the other reads. */
function crossedPair(): [Duplex, Duplex] {
  const make = (peer: () => Duplex) =>
    new Duplex({
      read() {},
      write(c: Buffer, _e, cb) {
        peer().push(c);
        cb();
      },
      final(cb) {
        peer().push(null);
        cb();
      },
    });
  const left: Duplex = make(() => right);
  const right: Duplex = make(() => left);
  return [left, right];
}

/**
 * WebSocket over HTTP/2 (RFC 8441) relies on ws 8's internal `WebSocket.prototype.setSocket`
 * (ws has no public API for a socket it did not handshake). These tests fail loudly when an
 * upgrade of ws changes it, and pin the clear error a server or client gives without it.
 */
describe("ws: the setSocket WebSocket over HTTP/2 relies on", () => {
  it("the installed ws is 8.x and its WebSocket has setSocket(socket, head, options)", () => {
    const version: string = createRequire(__filename)("ws/package.json").version;
    assert.match(version, /^8\./, `ws ${version}: WebSocket over HTTP/2 was built on ws 8's setSocket; check it before moving on`);
    const setSocket = (ws.WebSocket.prototype as unknown as { setSocket?: (...a: unknown[]) => void }).setSocket;
    assert.equal(typeof setSocket, "function");
    assert.equal(setSocket?.length, 3);
    assert.equal(streamSupportError(ws), undefined);
  });

  it("a WebSocket runs over any duplex stream: the server's side unmasked, the client's masked", async () => {
    const [left, right] = crossedPair();
    const server = webSocketOnStream(ws, left, { server: true, maxPayload: 1024, protocol: "triple" });
    const client = webSocketOnStream(ws, right, { server: false, maxPayload: 1024 });
    assert.equal(server.protocol, "triple");
    const got = new Promise<string>((r) => server.once("message", (d) => r(String(d))));
    client.send("hello");
    assert.equal(await got, "hello");
    client.on("error", () => {});
    const closed = new Promise<number>((r) => server.once("close", (code) => r(code)));
    server.send(Buffer.alloc(2048));
    // Over the client's maxPayload: the client closes 1009, as over HTTP/1.1.
    assert.equal(await closed, 1009);
  });

  it("without setSocket: 501 / unimplemented naming ws 8, from the check and from webSocketOnStream", () => {
    class Old {}
    const pkg = { WebSocket: Old as unknown as typeof ws.WebSocket };
    const err = streamSupportError(pkg);
    assert.equal(err?.httpStatus, 501);
    assert.match(err?.message ?? "", /WebSocket over HTTP\/2 \(RFC 8441\) needs ws 8, whose WebSocket has setSocket; the installed ws has none: install ws@8/);
    assert.throws(() => webSocketOnStream(pkg, new PassThrough(), { server: true, maxPayload: 0 }), /needs ws 8/);
  });
});
