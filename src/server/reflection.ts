// Owns `REFLECTION_V1`, `REFLECTION_V1ALPHA`, `ServerReflectionV1`, `ServerReflectionV1Alpha`. The
// two names gRPC server reflection is served under (the schemas are identical). Must not change:
// limits before reading, authorization before decoding (docs/security.md).
import * as protobuf from "protobufjs";
import { Code } from "../protocol/code.js";
import { buildDescriptorIndex, type DescriptorIndex, type DescriptorSource, nameFile } from "../schema/descriptor.js";
import { ProtoSchemaBuilder } from "../schema/derive.js";
import { toProtobufRoot } from "../schema/protobufjs.js";
import { Service } from "../service/decorators.js";
import type { ServiceDescriptor } from "../service/descriptors.js";

/** The two names gRPC server reflection is served under (the schemas are identical). */
export const REFLECTION_V1 = "grpc.reflection.v1.ServerReflection";
export const REFLECTION_V1ALPHA = "grpc.reflection.v1alpha.ServerReflection";

/** grpc/reflection/v1/reflection.proto as a protobufjs JSON descriptor, for a package. */
function reflectionProto(pkg: "v1" | "v1alpha"): protobuf.Root {
  const messages = {
    ServerReflectionRequest: {
      oneofs: {
        message_request: {
          oneof: ["file_by_filename", "file_containing_symbol", "file_containing_extension", "all_extension_numbers_of_type", "list_services"],
        },
      },
      fields: {
        host: { type: "string", id: 1 },
        file_by_filename: { type: "string", id: 3 },
        file_containing_symbol: { type: "string", id: 4 },
        file_containing_extension: { type: "ExtensionRequest", id: 5 },
        all_extension_numbers_of_type: { type: "string", id: 6 },
        list_services: { type: "string", id: 7 },
      },
    },
    ExtensionRequest: { fields: { containing_type: { type: "string", id: 1 }, extension_number: { type: "int32", id: 2 } } },
    ServerReflectionResponse: {
      oneofs: {
        message_response: {
          oneof: ["file_descriptor_response", "all_extension_numbers_response", "list_services_response", "error_response"],
        },
      },
      fields: {
        valid_host: { type: "string", id: 1 },
        original_request: { type: "ServerReflectionRequest", id: 2 },
        file_descriptor_response: { type: "FileDescriptorResponse", id: 4 },
        all_extension_numbers_response: { type: "ExtensionNumberResponse", id: 5 },
        list_services_response: { type: "ListServiceResponse", id: 6 },
        error_response: { type: "ErrorResponse", id: 7 },
      },
    },
    FileDescriptorResponse: { fields: { file_descriptor_proto: { rule: "repeated", type: "bytes", id: 1 } } },
    ExtensionNumberResponse: {
      fields: { base_type_name: { type: "string", id: 1 }, extension_number: { rule: "repeated", type: "int32", id: 2 } },
    },
    ListServiceResponse: { fields: { service: { rule: "repeated", type: "ServiceResponse", id: 1 } } },
    ServiceResponse: { fields: { name: { type: "string", id: 1 } } },
    ErrorResponse: { fields: { error_code: { type: "int32", id: 1 }, error_message: { type: "string", id: 2 } } },
    ServerReflection: {
      methods: {
        ServerReflectionInfo: {
          requestType: "ServerReflectionRequest",
          responseType: "ServerReflectionResponse",
          requestStream: true,
          responseStream: true,
        },
      },
    },
  };
  const root = protobuf.Root.fromJSON({ nested: { grpc: { nested: { reflection: { nested: { [pkg]: { nested: messages } } } } } } });
  root.resolveAll();
  nameFile(root, `grpc/reflection/${pkg}/reflection.proto`);
  return root;
}

interface ReflectionRequest {
  host?: string;
  file_by_filename?: string;
  file_containing_symbol?: string;
  file_containing_extension?: { containing_type?: string };
  all_extension_numbers_of_type?: string;
  list_services?: string;
  /** Which of the request's oneof fields is set (protobufjs's virtual oneof property). */
  message_request?: string;
}

/** What reflection reads from its server: the services registered now. */
interface ReflectionSource {
  readonly registeredServices: readonly ServiceDescriptor[];
}

/** The descriptors of every registered service: .proto-bound ones from their files, IDL-less ones derived. */
function indexOf(services: readonly ServiceDescriptor[]): DescriptorIndex {
  const sources: DescriptorSource[] = [];
  const derived = new ProtoSchemaBuilder();
  let idlLess = false;
  const roots = new Set<protobuf.Root>();
  for (const s of services) {
    if (s.proto) roots.add(s.proto.root);
    if (s.methods.some((m) => !m.requestType)) {
      derived.add(s);
      idlLess = true;
    }
  }
  if (idlLess) {
    const { files } = derived.build();
    const fileOf = new Map<string, string>();
    for (const f of files) for (const m of [...f.messages, ...f.services]) fileOf.set(m.fullName, f.name);
    sources.push({ root: toProtobufRoot(files), fileOf: (name) => fileOf.get(name), comments: true });
  }
  for (const root of roots) sources.push({ root });
  return buildDescriptorIndex(sources);
}

/**
 * gRPC server reflection (`grpc.reflection.v1` and `v1alpha`, one implementation): lists the
 * services, and answers `file_by_filename` and `file_containing_symbol` with the file and its
 * transitive dependencies (those not sent earlier on the same stream). Unknown names are
 * answered in-band with NOT_FOUND, as grpc-go does; extensions are not supported (proto3 has
 * none). Many requests may share one stream.
 */
abstract class ServerReflectionBase {
  private index: DescriptorIndex | undefined = undefined;
  private indexedCount = -1;

  constructor(private readonly source: ReflectionSource) {}

  private descriptors(): DescriptorIndex {
    const services = this.source.registeredServices;
    if (!this.index || this.indexedCount !== services.length) {
      this.index = indexOf(services);
      this.indexedCount = services.length;
    }
    return this.index;
  }

  async *serverReflectionInfo(requests: AsyncIterable<ReflectionRequest>): AsyncGenerator<Record<string, unknown>> {
    const sent = new Set<string>();
    for await (const req of requests) yield { valid_host: req.host ?? "", original_request: req, ...this.answer(req, sent) };
  }

  private answer(req: ReflectionRequest, sent: Set<string>): Record<string, unknown> {
    if (req.message_request === "list_services") {
      const names = [...new Set(this.source.registeredServices.map((s) => s.name))].sort();
      return { list_services_response: { service: names.map((name) => ({ name })) } };
    }
    if (req.file_by_filename) return this.files(req.file_by_filename, sent, `file not found: ${req.file_by_filename}`);
    if (req.file_containing_symbol) {
      const file = this.fileOfSymbol(req.file_containing_symbol);
      return this.files(file, sent, `symbol not found: ${req.file_containing_symbol}`);
    }
    if (req.file_containing_extension || req.all_extension_numbers_of_type) {
      return notFound("extensions are not supported: this server's schemas are proto3, which has none");
    }
    return { error_response: { error_code: Code.InvalidArgument, error_message: "empty reflection request" } };
  }

  /** The file of a symbol: a service, method, message or enum; a field's message counts too. */
  private fileOfSymbol(symbol: string): string | undefined {
    const { symbols } = this.descriptors();
    const name = symbol.startsWith(".") ? symbol.slice(1) : symbol;
    return symbols.get(name) ?? symbols.get(name.slice(0, Math.max(0, name.lastIndexOf("."))));
  }

  private files(first: string | undefined, sent: Set<string>, missing: string): Record<string, unknown> {
    const { files, dependencies } = this.descriptors();
    if (first === undefined || !files.has(first)) return notFound(missing);
    const out: Uint8Array[] = [];
    const queue = [first];
    const seen = new Set<string>();
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (seen.has(name)) continue;
      seen.add(name);
      if (name === first || !sent.has(name)) {
        const bytes = files.get(name);
        if (bytes) out.push(bytes);
        sent.add(name);
      }
      queue.push(...(dependencies.get(name) ?? []));
    }
    return { file_descriptor_response: { file_descriptor_proto: out } };
  }
}

function notFound(message: string): Record<string, unknown> {
  return { error_response: { error_code: Code.NotFound, error_message: message } };
}

/** `grpc.reflection.v1.ServerReflection`. */
@Service(REFLECTION_V1, { proto: reflectionProto("v1") })
export class ServerReflectionV1 extends ServerReflectionBase {}

/** `grpc.reflection.v1alpha.ServerReflection` (what many clients still ask for first). */
@Service(REFLECTION_V1ALPHA, { proto: reflectionProto("v1alpha") })
export class ServerReflectionV1Alpha extends ServerReflectionBase {}
