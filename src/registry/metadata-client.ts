// Owns `fetchMetadataV2`. Asks an instance's MetadataServiceV2 for its metadata at `revision`: one
// unary gRPC call (`application/grpc+proto` over HTTP/2 cleartext, which Dubbo 3.3 Triple, … Must
// not change: the ZooKeeper paths, URL encodings and metadata Apache Dubbo reads and writes.
import * as http2 from "node:http2";
import type * as tls from "node:tls";
import type * as protobuf from "protobufjs";
import { decodeComponent, hostPort } from "./url.js";
import { METADATA_V2_VERSION, type MetadataInfo, toMetadataInfo } from "./instance.js";
import { METADATA_SERVICE_V2, metadataProtoRoot } from "./metadata-proto.js";

/** How long one metadata call may take, ms (Dubbo's default metadata timeout is 5 s). */
const METADATA_TIMEOUT_MS = 5000;
/** The largest metadata reply read, bytes (Dubbo's default payload limit, 8 MiB). */
const METADATA_MAX_BYTES = 8 << 20;

/**
 * Asks an instance's MetadataServiceV2 for its metadata at `revision`: one unary gRPC call
 * (`application/grpc+proto` over HTTP/2 cleartext, which Dubbo 3.3 Triple, dubbo-go and any
 * gRPC server accept) with `tri-service-version: 2.0.0` and `tri-service-group: <app>`, as
 * Dubbo's consumers send them. Self-contained on purpose: it runs rarely (once per revision)
 * and needs none of the client's machinery. With `tls` (the client's TLS options) it connects
 * over TLS, as the client's calls to that provider do.
 */
export function fetchMetadataV2(host: string, port: number, app: string, revision: string, tls?: tls.ConnectionOptions): Promise<MetadataInfo> {
  const res = metadataProtoRoot().lookupType("org.apache.dubbo.metadata.MetadataInfoV2");
  const frame = requestFrame(revision);
  return new Promise<MetadataInfo>((resolve, reject) => {
    const session = tls ? http2.connect(`https://${hostPort(host, port)}`, { ...tls }) : http2.connect(`http://${hostPort(host, port)}`);
    const fail = (e: Error) => {
      clearTimeout(deadline);
      session.destroy();
      reject(e);
    };
    session.on("error", fail);
    // A deadline for the whole call, not an idle timeout: an answer trickling in byte by byte
    // would otherwise hold every notification of the application for as long as it lasts.
    const deadline = setTimeout(
      () => fail(new Error(`MetadataServiceV2 at ${hostPort(host, port)}: no answer in ${METADATA_TIMEOUT_MS} ms`)),
      METADATA_TIMEOUT_MS,
    );
    deadline.unref();
    const stream = session.request({
      ":method": "POST",
      ":path": `/${METADATA_SERVICE_V2}/GetMetadataInfo`,
      "content-type": "application/grpc+proto",
      te: "trailers",
      "tri-service-version": METADATA_V2_VERSION,
      "tri-service-group": app,
    });
    const chunks: Buffer[] = [];
    let status: string | undefined;
    let message = "";
    const readStatus = (h: http2.IncomingHttpHeaders) => {
      if (h["grpc-status"] !== undefined) status = String(h["grpc-status"]);
      if (h["grpc-message"] !== undefined) message = decodeComponent(String(h["grpc-message"]).replace(/\+/g, "%2B"));
    };
    stream.on("response", readStatus);
    stream.on("trailers", readStatus);
    let received = 0;
    stream.on("data", (c: Buffer) => {
      received += c.length;
      chunks.push(c);
      // A hostile or broken instance could stream without end: no metadata is that large.
      if (received > METADATA_MAX_BYTES) {
        chunks.length = 0;
        stream.destroy();
        fail(new Error(`MetadataServiceV2 at ${hostPort(host, port)}: reply over ${METADATA_MAX_BYTES} bytes`));
      }
    });
    stream.on("error", fail);
    stream.on("end", () => {
      clearTimeout(deadline);
      session.close();
      if (status !== "0") return reject(new Error(`MetadataServiceV2 at ${hostPort(host, port)}: grpc-status ${status ?? "missing"} ${message}`));
      try {
        resolve(decodeReply(res, Buffer.concat(chunks), revision));
      } catch (e) {
        reject(e as Error);
      }
    });
    stream.end(frame);
  });
}

/** The gRPC message of `MetadataRequest{revision}`: a 5-byte prefix, then the protobuf bytes. */
function requestFrame(revision: string): Buffer {
  const req = metadataProtoRoot().lookupType("org.apache.dubbo.metadata.MetadataRequest");
  const body = req.encode(req.create({ revision })).finish();
  const frame = Buffer.alloc(5 + body.length);
  frame.writeUInt32BE(body.length, 1);
  Buffer.from(body).copy(frame, 5);
  return frame;
}

function decodeReply(type: protobuf.Type, data: Buffer, revision: string): MetadataInfo {
  if (data.length < 5) throw new Error("MetadataServiceV2: empty reply");
  if (data[0] !== 0) throw new Error("MetadataServiceV2: compressed replies are not expected");
  const len = data.readUInt32BE(1);
  const msg = type.toObject(type.decode(data.subarray(5, 5 + len)), { longs: Number, defaults: true });
  // The revision is the one the answer names (empty when it names none): the caller checks it.
  return toMetadataInfo({ ...msg, revision: msg.version }, revision);
}
