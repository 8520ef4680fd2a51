import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import { Code, codeName, createServer, toProto, type TripleServer } from "../../src/index.js";
import { post1 } from "../helpers/http.js";
import { frame, frames, fromJsonDetails, fromStatusBin, h2Call, type Outcome } from "./peer.js";
import { ShopService } from "./shop.js";

/** Arguments by parameter name, in their JSON form (dates as ISO text, bigints as decimal text). */
type Args = Record<string, unknown>;
type MethodName = "place" | "resize";

const CODE_BY_NAME = new Map(Array.from({ length: 17 }, (_, c) => [codeName(c as Code), c]));

/** One protocol and body format, asked the same question. */
interface Way {
  readonly name: string;
  call(method: MethodName, args: Args): Promise<Outcome>;
}

function tripleOutcome(status: number, text: string): Outcome {
  if (status === 200) return { code: 0, message: text, http: status, detailTypes: [], violations: [] };
  const e = JSON.parse(text);
  return { code: CODE_BY_NAME.get(e.code) ?? -1, message: e.message, http: status, ...fromJsonDetails(e.details) };
}

function connectOutcome(status: number, body: Buffer, proto: boolean): Outcome {
  if (status === 200) return { code: 0, message: proto ? body.toString("hex") : body.toString(), http: status, detailTypes: [], violations: [] };
  const e = JSON.parse(body.toString());
  return { code: CODE_BY_NAME.get(e.code) ?? -1, message: e.message, http: status, ...fromJsonDetails(e.details) };
}

/** grpc-status from the trailers (or a trailers-only response's headers). */
function grpcOutcome(http: number, fields: Record<string, unknown>): Outcome {
  const get = (k: string) => (fields[k] === undefined ? undefined : String(fields[k]));
  const code = Number(get("grpc-status"));
  return { code, message: decodeURIComponent(get("grpc-message") ?? ""), http, ...fromStatusBin(get("grpc-status-details-bin")) };
}

function xmlOf(name: string, v: unknown): string {
  if (Array.isArray(v)) return v.map((x) => xmlOf(name, x)).join("");
  if (typeof v === "object" && v !== null)
    return `<${name}>${Object.entries(v)
      .map(([k, x]) => xmlOf(k, x))
      .join("")}</${name}>`;
  const text = String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;");
  return `<${name}>${text}</${name}>`;
}

function multipartOf(args: Args, boundary: string): string {
  const parts = Object.entries(args).map(([k, v]) => {
    const json = typeof v === "object";
    const head = `Content-Disposition: form-data; name="${k}"${json ? "\r\nContent-Type: application/json" : ""}`;
    return `--${boundary}\r\n${head}\r\n\r\n${json ? JSON.stringify(v) : String(v)}\r\n`;
  });
  return `${parts.join("")}--${boundary}--\r\n`;
}

/** The JSON-form arguments as the derived protobuf message takes them (a Date as a Timestamp). */
function protoArgs(args: Args): Args {
  const item = args.item as Record<string, unknown> | undefined;
  if (!item || typeof item.due !== "string") return args;
  const ms = Date.parse(item.due);
  return { ...args, item: { ...item, due: { seconds: String(Math.floor(ms / 1000)), nanos: 0 } } };
}

const PROTO_OPTIONS: loader.Options = { keepCase: true, longs: String, defaults: false };

describe("validation: each constraint × each protocol gives the same error, and the handler never runs", () => {
  let server: TripleServer;
  let url: string;
  let session: http2.ClientHttp2Session;
  let shop: ShopService;
  let dir: string;
  let serialize: Record<MethodName, (v: Args) => Buffer>;
  let grpcClient: grpc.Client & Record<MethodName, (req: Args, cb: (e: grpc.ServiceError | null, r?: unknown) => void) => void>;

  before(async () => {
    shop = new ShopService();
    server = createServer({ services: [shop] });
    await server.listen({ port: 0, host: "127.0.0.1" });
    url = server.url;
    const port = new URL(url).port;
    session = http2.connect(url);
    dir = mkdtempSync(join(tmpdir(), "validation-"));
    const file = join(dir, "shop.proto");
    writeFileSync(file, toProto(ShopService));
    const def = loader.loadSync(file, PROTO_OPTIONS);
    const svc = def["validation.Shop"] as Record<string, loader.MethodDefinition<Args, unknown>>;
    serialize = { place: (v) => svc.place.requestSerialize(v), resize: (v) => svc.resize.requestSerialize(v) };
    const Ctor = grpc.makeGenericClientConstructor(svc as never, "Shop");
    grpcClient = new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as never;
  });

  after(async () => {
    grpcClient.close();
    session.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const path = (m: MethodName) => `/validation.Shop/${m}`;

  const ways: Way[] = [
    {
      name: "Triple HTTP/1.1 JSON",
      call: async (m, a) => {
        const r = await post1(url, path(m), { headers: { "content-type": "application/json" }, body: JSON.stringify(a) });
        return tripleOutcome(r.status, r.text());
      },
    },
    {
      name: "Triple HTTP/2 JSON",
      call: async (m, a) => {
        const r = await h2Call(session, path(m), { "content-type": "application/json" }, Buffer.from(JSON.stringify(a)));
        return tripleOutcome(r.status, r.body.toString());
      },
    },
    {
      name: "Triple form",
      call: async (m, a) => {
        const body = Object.entries(a)
          .map(([k, v]) => `${k}=${encodeURIComponent(typeof v === "object" ? JSON.stringify(v) : String(v))}`)
          .join("&");
        const r = await post1(url, path(m), { headers: { "content-type": "application/x-www-form-urlencoded" }, body });
        return tripleOutcome(r.status, r.text());
      },
    },
    {
      name: "Triple multipart",
      call: async (m, a) => {
        const boundary = "xYzZy";
        const r = await post1(url, path(m), { headers: { "content-type": `multipart/form-data; boundary=${boundary}` }, body: multipartOf(a, boundary) });
        return tripleOutcome(r.status, r.text());
      },
    },
    {
      name: "Triple XML",
      call: async (m, a) => {
        const r = await post1(url, path(m), { headers: { "content-type": "application/xml", accept: "application/json" }, body: xmlOf(m, a) });
        return tripleOutcome(r.status, r.text());
      },
    },
    {
      name: "REST JSON (POST /shop/{region}/orders, POST /sizes/{id})",
      call: async (m, a) => {
        const target = m === "place" ? `/shop/${encodeURIComponent(String(a.region))}/orders` : `/sizes/${encodeURIComponent(String(a.id))}`;
        const body = m === "place" ? (a.item === undefined ? "" : JSON.stringify(a.item)) : JSON.stringify(a.width === undefined ? {} : { width: a.width });
        const r = await post1(url, target, { headers: { "content-type": "application/json" }, body });
        return tripleOutcome(r.status, r.text());
      },
    },
    {
      name: "gRPC proto (@grpc/grpc-js)",
      call: (m, a) =>
        new Promise((resolve) => {
          grpcClient[m](protoArgs(a), (e, r) => {
            if (!e) return resolve({ code: 0, message: JSON.stringify(r), http: 200, detailTypes: [], violations: [] });
            const bin = e.metadata.get("grpc-status-details-bin")[0] as Buffer | undefined;
            resolve({ code: e.code, message: e.details, http: 200, ...fromStatusBin(bin?.toString("base64")) });
          });
        }),
    },
    {
      name: "gRPC JSON",
      call: async (m, a) => {
        const r = await h2Call(session, path(m), { "content-type": "application/grpc+json", te: "trailers" }, frame(JSON.stringify(a)));
        return grpcOutcome(r.status, { ...r.headers, ...r.trailers });
      },
    },
    {
      name: "Connect JSON",
      call: async (m, a) => {
        const r = await h2Call(session, path(m), { "content-type": "application/json", "connect-protocol-version": "1" }, Buffer.from(JSON.stringify(a)));
        return connectOutcome(r.status, r.body, false);
      },
    },
    {
      name: "Connect proto (HTTP/1.1)",
      call: async (m, a) => {
        const r = await post1(url, path(m), {
          headers: { "content-type": "application/proto", "connect-protocol-version": "1" },
          body: serialize[m](protoArgs(a)),
        });
        return connectOutcome(r.status, r.body, true);
      },
    },
    {
      name: "gRPC-Web proto",
      call: async (m, a) => {
        const r = await h2Call(session, path(m), { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" }, frame(serialize[m](protoArgs(a))));
        if (r.headers["grpc-status"] !== undefined) return grpcOutcome(r.status, r.headers);
        const trailer = frames(r.body).find((f) => f.flags & 0x80);
        const fields: Record<string, string> = {};
        for (const line of (trailer?.data.toString() ?? "").split("\r\n")) {
          const i = line.indexOf(":");
          if (i > 0) fields[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
        }
        return grpcOutcome(r.status, fields);
      },
    },
  ];

  const ok = { sku: "AB-12", qty: 2 };
  /** [what, the item, the region, the violations expected as [field, description]]. */
  const cases: [string, Record<string, unknown>, string, [string, string][]][] = [
    ["pattern (string)", { ...ok, sku: "bad" }, "eu", [["item.sku", "must match ^[A-Z]{2}-\\d+$"]]],
    ["min (number)", { ...ok, qty: 0 }, "eu", [["item.qty", "must be at least 1"]]],
    ["max (number)", { ...ok, qty: 101 }, "eu", [["item.qty", "must be at most 100"]]],
    ["pattern on each array element", { ...ok, tags: ["ok", "B4d"] }, "eu", [["item.tags[1]", "must match ^[a-z]+$"]]],
    ["maxItems", { ...ok, tags: ["a", "b", "c", "d"] }, "eu", [["item.tags", "must have at most 3 elements"]]],
    ["minLength", { ...ok, note: "x" }, "eu", [["item.note", "must be at least 2 characters long"]]],
    ["maxLength", { ...ok, note: "abcdef" }, "eu", [["item.note", "must be at most 5 characters long"]]],
    ["format email", { ...ok, email: "nope" }, "eu", [["item.email", "must be an email address"]]],
    ["format uuid", { ...ok, ref: "123" }, "eu", [["item.ref", "must be a UUID"]]],
    ["format uri", { ...ok, link: "not a uri" }, "eu", [["item.link", "must be an absolute URI (with a scheme)"]]],
    ["min (date)", { ...ok, due: "2019-06-01T00:00:00.000Z" }, "eu", [["item.due", "must be at or after 2020-01-01T00:00:00.000Z"]]],
    ["max (bigint)", { ...ok, cents: "5000" }, "eu", [["item.cents", "must be at most 1000"]]],
    ["minItems (an empty optional array counts as absent)", { ...ok, tags: ["a"] }, "eu", [["item.tags", "must have at least 2 elements"]]],
    ["format date-time", { ...ok, at: "2026-13-01T00:00:00Z" }, "eu", [["item.at", "must be an RFC 3339 date-time"]]],
    ["maxLength (bytes)", { ...ok, blob: Buffer.from([1, 2, 3, 4, 5]).toString("base64") }, "eu", [["item.blob", "must be at most 4 bytes long"]]],
    ["enum (parameter)", ok, "asia", [["region", 'must be one of "eu", "us"']]],
    [
      "every violation at once, in parameter and field order",
      { sku: "bad", qty: 0, tags: ["X", "y"] },
      "asia",
      [
        ["item.sku", "must match ^[A-Z]{2}-\\d+$"],
        ["item.qty", "must be at least 1"],
        ["item.tags[0]", "must match ^[a-z]+$"],
        ["region", 'must be one of "eu", "us"'],
      ],
    ],
  ];

  /** `item.tags[1]` → `parameter #1 (item).tags[1]`: the message names parameters as the binder does. */
  const label = (field: string) => field.replace(/^item/, "parameter #1 (item)").replace(/^region/, "parameter #2 (region)");

  for (const [what, item, region, expected] of cases) {
    it(what, async () => {
      const message = expected.map(([f, d]) => `${label(f)} ${d}`).join("; ");
      const before = shop.calls;
      for (const way of ways) {
        const o = await way.call("place", { item, region });
        assert.deepEqual(
          { code: o.code, message: o.message, violations: o.violations, detailTypes: o.detailTypes.map((t) => t.replace(/^.*\//, "")) },
          { code: Code.InvalidArgument, message, violations: expected, detailTypes: ["google.rpc.BadRequest"] },
          way.name,
        );
        assert.ok(o.http === 400 || (o.http === 200 && way.name.startsWith("gRPC")), `${way.name}: HTTP ${o.http}`);
      }
      assert.equal(shop.calls, before, "the handler never ran");
    });
  }

  it("valid arguments pass on every protocol (the handler runs once per call)", async () => {
    const before = shop.calls;
    const item = {
      ...ok,
      tags: ["a", "b"],
      note: "hi",
      email: "ann@example.com",
      ref: "123e4567-e89b-12d3-a456-426614174000",
      link: "https://example.com/x",
      due: "2026-01-01T00:00:00.000Z",
      cents: "999",
      at: "2026-11-25T10:00:00+01:00",
      blob: Buffer.from([1, 2, 3, 4]).toString("base64"),
    };
    for (const way of ways) {
      const o = await way.call("place", { item, region: "us" });
      assert.equal(o.code, 0, `${way.name}: ${o.message}`);
    }
    assert.equal(shop.calls, before + ways.length);
  });

  const rest = (w: Way) => w.name.startsWith("REST");
  /** Ways whose body is protobuf binary, where proto3 gives plain scalars no presence. */
  const binary = (w: Way) => /proto/.test(w.name);

  it("a required parameter or field left out is the same invalid_argument on every JSON, form, multipart and XML way", async () => {
    const before = shop.calls;
    for (const way of ways.filter((w) => !binary(w))) {
      // REST's one body parameter is the whole body (docs/http-api.md): leaving it out is an empty body.
      if (!rest(way)) {
        const width = await way.call("resize", { id: "x" });
        assert.equal(width.code, Code.InvalidArgument, `${way.name}: ${width.message}`);
        assert.match(width.message, /^parameter #2 \(width\) is missing/, way.name);
      }
      const qty = await way.call("place", { item: { sku: "AB-1" }, region: "eu" });
      assert.equal(qty.code, Code.InvalidArgument, `${way.name}: ${qty.message}`);
      assert.match(qty.message, /^parameter #1 \(item\)\.qty is missing/, way.name);
    }
    assert.equal(shop.calls, before);
  });

  it("a required message-typed parameter left out is invalid_argument on every way, protobuf included", async () => {
    const before = shop.calls;
    for (const way of ways.filter((w) => !rest(w))) {
      const o = await way.call("place", { region: "eu" });
      assert.equal(o.code, Code.InvalidArgument, `${way.name}: ${o.message}`);
      assert.match(o.message, /^parameter #1 \(item\) is missing/, way.name);
    }
    assert.equal(shop.calls, before);
  });

  it("protobuf binary: a plain scalar left out reads as its default (proto3), which constraints then judge", async () => {
    for (const way of ways.filter(binary)) {
      // No constraint on width: 0, as proto3 reads an absent double.
      const width = await way.call("resize", { id: "x" });
      assert.equal(width.code, 0, `${way.name}: ${width.message}`);
      // qty has min: 1, so the default 0 is refused, with the same violation as a 0 sent on purpose.
      const qty = await way.call("place", { item: { sku: "AB-1" }, region: "eu" });
      assert.equal(qty.message, "parameter #1 (item).qty must be at least 1", way.name);
      assert.deepEqual(qty.violations, [["item.qty", "must be at least 1"]], way.name);
    }
  });
});
