// Owns `protobufjs`: the protobufjs package's values (Writer, Reader, Root, common), loaded by a
// require. Must not change: modules the web client's lazily loaded chunks share take them from
// here, not by `import * as` of the CommonJS package: a bundler then wraps the package alone and
// adds no ESM-interop helpers to the runtime code every page loads. Types: `import type`.
import type * as Protobuf from "protobufjs";

export const protobufjs = require("protobufjs") as typeof Protobuf;
