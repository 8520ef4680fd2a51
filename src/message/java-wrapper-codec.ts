// Owns `javaWrapperCodec`, `checkMethodJavaTypes`. The wrapper codec of one method in one Java
// serialization. `serializeType` is what the reply carries (the request's: `hessian4` from Java,
// `hessian2` from dubbo-go). Must not change: gRPC's wire rules (5-byte message prefix, grpc-status
// in trailers) that grpc-js and other peers rely on.
import { bindError } from "../codec/bind-error.js";
import { compileConverter, type Converter, paramConverters, paramLabel } from "../codec/binder.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { type MethodDescriptor, requestStreams } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import type { MessageCodec } from "./codec-types.js";
import { fillDefaults, javaException, type JavaSerialization, javaSerialization, SerializationError } from "./java-serialization.js";
import { checkJavaTypes, javaTypeName } from "../serialization/java-types.js";
import { decodeRequestWrapper, decodeResponseWrapper, encodeRequestWrapper, encodeResponseWrapper } from "./wrapper.js";

/**
 * Dubbo's wrapper with a Java serialization (hessian2, fastjson2): each argument serialized on
 * its own, Java class names in `argTypes` and the response `type`, the reply in the request's
 * `serializeType`. Built per method and serializeType, on the first call that needs it.
 */
const ANY: TypeDesc = { kind: "any" };

function badArg(ser: JavaSerialization, label: string, e: unknown): RpcError {
  if (e instanceof SerializationError) return new RpcError(Code.InvalidArgument, `invalid ${ser.name} ${label}: ${e.message}`, { cause: e, legacyStatus: 40 });
  if (e instanceof RpcError) return e;
  return new RpcError(Code.InvalidArgument, `invalid ${ser.name} ${label}: ${(e as Error).message}`, { cause: e });
}

/** What Dubbo Java names a server-streaming method's last parameter in `argTypes`. */
const STREAM_OBSERVER = "org.apache.dubbo.common.stream.StreamObserver";

/**
 * The Java types of a method as Dubbo Java writes them, computed on first use (a class without
 * `@JavaClass` throws, naming it). A unary method's are its parameters' and return type's
 * `Class.getName()`; a server stream adds its `StreamObserver` parameter; the stream elements of
 * the other kinds are type arguments of `StreamObserver<T>`, so boxed (`java.lang.Integer`).
 */
function javaNames(md: MethodDescriptor): () => { argTypes: string[]; resultType: string } {
  let names: { argTypes: string[]; resultType: string } | undefined;
  return () => {
    if (names) return names;
    checkJavaTypes([...md.params.map((p) => p.type), md.returns ?? ANY]);
    const boxedArgs = requestStreams(md.kind);
    const argTypes = md.params.map((p) => javaTypeName(p.type, p.optional || boxedArgs, true));
    if (md.kind === "server_streaming") argTypes.push(STREAM_OBSERVER);
    names = {
      argTypes,
      resultType: md.returns ? javaTypeName(md.returns, md.kind !== "unary", true) : "java.lang.Object",
    };
    return names;
  };
}

/**
 * Server: refuses a call whose method has a class without a Java name before its handler runs
 * (the reply could not be written), `internal` naming the class.
 */
function checkedNames(names: ReturnType<typeof javaNames>): void {
  try {
    names();
  } catch (e) {
    throw new RpcError(Code.Internal, (e as Error).message, { cause: e });
  }
}

function leastArgs(md: MethodDescriptor): number {
  let k = md.params.length;
  while (k > 0 && md.params[k - 1].optional) k--;
  return k;
}

function argsDecoder(md: MethodDescriptor, ser: JavaSerialization, names: ReturnType<typeof javaNames>): (bytes: Uint8Array) => unknown[] {
  const n = md.params.length;
  const least = leastArgs(md);
  const convs = paramConverters(md.params);
  const labels = md.params.map((p, i) => paramLabel(p, i));
  return (bytes) => {
    checkedNames(names);
    let w: ReturnType<typeof decodeRequestWrapper>;
    try {
      w = decodeRequestWrapper(bytes);
    } catch (e) {
      throw new RpcError(Code.Internal, `cannot decode the request message (TripleRequestWrapper): ${(e as Error).message}`, { cause: e });
    }
    if (w.args.length > n || w.args.length < least) {
      throw bindError(`expected ${n} argument${n === 1 ? "" : "s"} in the TripleRequestWrapper, got ${w.args.length}`);
    }
    const out = new Array(n);
    for (let i = 0; i < w.args.length; i++) {
      let v: unknown;
      try {
        v = fillDefaults(ser.decode(w.args[i]), md.params[i].type);
      } catch (e) {
        throw badArg(ser, labels[i], e);
      }
      out[i] = convs[i](v, labels[i]);
    }
    return out;
  };
}

/**
 * An answer's value, read in the serialization its wrapper names (as Dubbo's consumer does; the
 * request's when it names none we read), else in the other Java serialization. A Dubbo 3.3.1
 * Java provider keeps the serialization to answer in on the method object all calls share:
 * answering hessian2 and fastjson2 calls of one method at once, it can answer one in the other's
 * serialization, and even name one serialization while writing the other (it reads that field
 * twice). The first one's error is thrown when neither reads.
 */
function decodeAnswer(serializeType: string, data: Uint8Array, ser: JavaSerialization): unknown {
  const first = javaSerialization(serializeType) ?? ser;
  try {
    return first.decode(data);
  } catch (e) {
    const other = javaSerialization(first.name === "hessian2" ? "fastjson2" : "hessian2")!;
    try {
      return other.decode(data);
    } catch {
      throw e;
    }
  }
}

function resultDecoder(md: MethodDescriptor, ser: JavaSerialization): (bytes: Uint8Array, flagged?: boolean) => unknown {
  const conv: Converter | undefined = md.returns ? compileConverter(md.returns) : undefined;
  return (bytes, flagged) => {
    let w: ReturnType<typeof decodeResponseWrapper>;
    let v: unknown;
    try {
      w = decodeResponseWrapper(bytes);
      v = w.data.length === 0 ? null : decodeAnswer(w.serializeType, w.data, ser);
    } catch (e) {
      throw new RpcError(Code.Internal, `invalid TripleResponseWrapper (${ser.name}) response: ${(e as Error).message}`, { cause: e });
    }
    const ex = javaException(v, flagged);
    if (ex) throw new RpcError(Code.Unknown, `${ex.javaClass}: ${ex.message}`, { rawMessage: ex.message, cause: ex });
    if (v === null || v === undefined || !conv) return v ?? undefined;
    try {
      return conv(fillDefaults(v, md.returns!), "the result");
    } catch (e) {
      throw new RpcError(Code.Internal, `the response does not match the declared result of ${md.path}: ${(e as Error).message}`, { cause: e });
    }
  };
}

/**
 * The wrapper codec of one method in one Java serialization. `serializeType` is what the reply
 * carries (the request's: `hessian4` from Java, `hessian2` from dubbo-go); our client sends the
 * serialization's own wire name.
 */
export function javaWrapperCodec(md: MethodDescriptor, ser: JavaSerialization, serializeType: string = ser.wire): MessageCodec {
  const names = javaNames(md);
  const result = md.returns ?? ANY;
  const element = md.params[0]?.type ?? ANY;
  const encodeArg = (v: unknown, t: TypeDesc, label: string): Buffer => {
    try {
      return ser.encode(v, t);
    } catch (e) {
      throw new RpcError(Code.InvalidArgument, `cannot send ${label} in ${ser.name}: ${(e as Error).message}`, { cause: e });
    }
  };
  return {
    decodeRequest: argsDecoder(md, ser, names),
    encodeResponse: (value) => encodeResponseWrapper({ serializeType, data: ser.encode(value, result), type: names().resultType }),
    encodeArgs: (args) =>
      encodeRequestWrapper({
        serializeType: ser.wire,
        args: md.params.map((p, i) => encodeArg(args[i], p.type, paramLabel(p, i))),
        argTypes: names().argTypes,
      }),
    encodeRequest: (value) => encodeRequestWrapper({ serializeType: ser.wire, args: [encodeArg(value, element, "the request")], argTypes: names().argTypes }),
    decodeResponse: resultDecoder(md, ser),
  };
}

/** Client: checks a method's Java types once, when a client that sends Java serializations prepares it. */
export function checkMethodJavaTypes(md: MethodDescriptor): void {
  javaNames(md)();
}
