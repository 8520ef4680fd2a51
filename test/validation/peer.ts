import * as http2 from "node:http2";
import * as protobuf from "protobufjs";

/**
 * An independent reading of error details: google.rpc.Status, google.protobuf.Any and
 * google.rpc.BadRequest declared here with protobufjs, not decoded by the code under test.
 */
const root = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: { nested: { Any: { fields: { type_url: { type: "string", id: 1 }, value: { type: "bytes", id: 2 } } } } },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: "int32", id: 1 },
                message: { type: "string", id: 2 },
                details: { rule: "repeated", type: "google.protobuf.Any", id: 3 },
              },
            },
            BadRequest: {
              fields: { field_violations: { rule: "repeated", type: "FieldViolation", id: 1 } },
              nested: { FieldViolation: { fields: { field: { type: "string", id: 1 }, description: { type: "string", id: 2 } } } },
            },
          },
        },
      },
    },
  },
});
const Status = root.lookupType("google.rpc.Status");
const BadRequest = root.lookupType("google.rpc.BadRequest");

/** `[field, description]` pairs of a BadRequest message. */
export function violationsOf(bytes: Uint8Array): [string, string][] {
  const m = BadRequest.toObject(BadRequest.decode(bytes), { arrays: true }) as { field_violations: { field: string; description: string }[] };
  return m.field_violations.map((v) => [v.field, v.description]);
}

/** What one call came back with, on any protocol. */
export interface Outcome {
  /** gRPC code (0 for success). */
  code: number;
  message: string;
  /** HTTP status of the response. */
  http: number;
  /** Types of the details, and the BadRequest violations among them. */
  detailTypes: string[];
  violations: [string, string][];
}

/** A google.rpc.Status (grpc-status-details-bin) → its detail types and BadRequest violations. */
export function fromStatusBin(b64: string | undefined): Pick<Outcome, "detailTypes" | "violations"> {
  if (!b64) return { detailTypes: [], violations: [] };
  const st = Status.toObject(Status.decode(Buffer.from(b64, "base64")), { arrays: true }) as { details: { type_url: string; value: Uint8Array }[] };
  const detailTypes = st.details.map((d) => d.type_url);
  const bad = st.details.find((d) => d.type_url.endsWith("/google.rpc.BadRequest"));
  return { detailTypes, violations: bad ? violationsOf(bad.value) : [] };
}

/** JSON details `[{type, value (base64)}]` (Triple HTTP, Connect) → detail types and violations. */
export function fromJsonDetails(details: { type: string; value: string }[] | undefined): Pick<Outcome, "detailTypes" | "violations"> {
  const list = details ?? [];
  const bad = list.find((d) => d.type === "google.rpc.BadRequest");
  return { detailTypes: list.map((d) => d.type), violations: bad ? violationsOf(Buffer.from(bad.value, "base64")) : [] };
}

/** One HTTP/2 exchange with its trailers (gRPC needs them). */
export function h2Call(
  session: http2.ClientHttp2Session,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const s = session.request({ ":method": "POST", ":path": path, ...headers });
    let status = 0;
    let head: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    s.on("response", (h) => {
      status = Number(h[":status"]);
      head = h;
    });
    s.on("trailers", (t) => {
      trailers = t;
    });
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("end", () => resolve({ status, headers: head, trailers, body: Buffer.concat(chunks) }));
    s.on("error", reject);
    s.end(body);
  });
}

/** A gRPC / gRPC-Web / Connect-stream envelope. */
export function frame(data: Buffer | string, flags = 0): Buffer {
  const b = typeof data === "string" ? Buffer.from(data) : data;
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(b.length, 1);
  return Buffer.concat([head, b]);
}

/** The envelopes of a body. */
export function frames(body: Buffer): { flags: number; data: Buffer }[] {
  const out: { flags: number; data: Buffer }[] = [];
  for (let i = 0; i + 5 <= body.length; ) {
    const len = body.readUInt32BE(i + 1);
    out.push({ flags: body[i], data: body.subarray(i + 5, i + 5 + len) });
    i += 5 + len;
  }
  return out;
}
