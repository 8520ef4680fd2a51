import * as assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as http from "node:http";
import * as net from "node:net";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { H2, JSON_HEADERS, post1 } from "../helpers/http.js";

/** The compiled sample server, next to this compiled test (dist/samples/greet/server.js or any other outDir). */
const SERVER_JS = path.resolve(__dirname, "../../samples/greet/server.js");

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exit: Promise<number | null>;
}

async function start(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [SERVER_JS], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const exit = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no address printed: ${out}`)), 10_000);
    child.stdout?.on("data", () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return { child, url, output: () => out, exit };
}

describe("npm start: the greet sample server (issue 2 items 9, 10)", () => {
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  });

  it("boots on PORT/HOST, prints its address, answers Greet over both HTTP versions", async () => {
    const port = await freePort();
    const s = await start({ PORT: String(port), HOST: "127.0.0.1" });
    children.push(s.child);
    assert.equal(s.url, `http://127.0.0.1:${port}`);
    const ok = await post1(s.url, "/greet.GreetService/Greet", { headers: JSON_HEADERS, body: '{"name":"triple"}' });
    assert.deepEqual(ok.json(), { greeting: "triple" });
    const h2 = new H2(s.url);
    const bad = await h2.request("/greet.GreetService/Greet", { headers: JSON_HEADERS, body: '{"name":"dubbo"}' });
    h2.close();
    assert.equal(bad.status, 500);
    assert.deepEqual(bad.json(), { status: 70, message: "name is not right: dubbo", code: "unknown" });
    s.child.kill("SIGINT");
    assert.equal(await s.exit, 0);
  });

  it("GREET_NAME changes the accepted name", async () => {
    const s = await start({ PORT: String(await freePort()), GREET_NAME: "dubbo" });
    children.push(s.child);
    const ok = await post1(s.url, "/greet.GreetService/Greet", { headers: JSON_HEADERS, body: '[{"name":"dubbo"}]' });
    assert.deepEqual(ok.json(), { greeting: "dubbo" });
    s.child.kill("SIGTERM");
    assert.equal(await s.exit, 0);
  });

  it("SIGTERM: stops accepting, lets the in-flight call finish, exits 0", async () => {
    const s = await start({ PORT: String(await freePort()) });
    children.push(s.child);
    const u = new URL(s.url);
    const body = '{"name":"triple"}';
    // An in-flight call: headers and half the body sent, the rest after the signal.
    const reply = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          path: "/greet.GreetService/Greet",
          method: "POST",
          headers: { ...JSON_HEADERS, "content-length": body.length },
          agent: false,
        },
        (res) => {
          let text = "";
          res.on("data", (d) => (text += d));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      req.write(body.slice(0, 5));
      setTimeout(() => {
        s.child.kill("SIGTERM");
        setTimeout(async () => {
          // New connections are refused while the call drains.
          const refused = await post1(s.url, "/greet.GreetService/Greet", { headers: JSON_HEADERS, body }).then(
            () => false,
            () => true,
          );
          assert.ok(refused, "a new connection was accepted during shutdown");
          req.end(body.slice(5));
        }, 200);
      }, 100);
    });
    const r = await reply;
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { greeting: "triple" });
    assert.equal(await s.exit, 0);
    assert.match(s.output(), /SIGTERM/);
  });
});
