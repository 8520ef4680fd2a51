// Owns `boundProtoFiles`. The .proto files of the services bound to a .proto of their own
// (`@Service(name, { proto })`): the service's file and every file it imports (protobufjs's own
// google/protobuf files aside), as they are on disk. Must not change: the commands, their output
// and exit codes, which scripts depend on.
import { readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, relative } from "node:path";
import { describeService } from "../service/describe.js";

type ServiceClass = abstract new (...args: never[]) => unknown;

/** A .proto file a service is bound to, as `triple-rpc proto` prints or writes it. */
export interface BoundProtoFile {
  /** Its name relative to the service's own file's folder (its imports keep their paths). */
  name: string;
  package: string;
  text: string;
  /** Where it was read from. */
  source: string;
}

/**
 * The .proto files of the services bound to a .proto of their own (`@Service(name, { proto })`):
 * the service's file and every file it imports (protobufjs's own google/protobuf files aside), as
 * they are on disk. `inMemory` names the services bound to a protobufjs object with no file.
 */
export function boundProtoFiles(classes: readonly ServiceClass[]): { files: BoundProtoFile[]; bound: string[]; inMemory: string[] } {
  const files = new Map<string, BoundProtoFile>();
  const bound: string[] = [];
  const inMemory: string[] = [];
  for (const c of classes) {
    const desc = describeService(c);
    if (!desc.proto) continue;
    const main = desc.proto.filename;
    if (!main || !isAbsolute(main)) {
      inMemory.push(desc.name);
      continue;
    }
    bound.push(`${desc.name} (${main})`);
    const pkg = desc.name.includes(".") ? desc.name.slice(0, desc.name.lastIndexOf(".")) : "";
    for (const source of desc.proto.root.files.filter((f) => isAbsolute(f))) {
      if (files.has(source)) continue;
      const rel = relative(dirname(main), source);
      const name = rel.startsWith("..") ? basename(source) : rel;
      files.set(source, { name, package: source === main ? pkg : "", text: readFileSync(source, "utf8"), source });
    }
  }
  return { files: [...files.values()], bound, inMemory };
}
