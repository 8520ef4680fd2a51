// Owns `loadProto`, `lookupService`. Loads a .proto file (and its imports) synchronously, keeping
// field names as written so ProtoJSON accepts both the original and the lowerCamelCase names.
// Cached by path. Must not change: what a decorated class describes (paths, parameter order, tags):
// the wire depends on it.
import * as fs from "node:fs";
import * as path from "node:path";
import * as protobuf from "protobufjs";

const roots = new Map<string, protobuf.Root>();

/**
 * Loads a .proto file (and its imports) synchronously, keeping field names as written so
 * ProtoJSON accepts both the original and the lowerCamelCase names. Cached by path.
 * `includeDirs` are searched for imports besides the file's own folder.
 */
export function loadProto(file: string, includeDirs: readonly string[] = []): protobuf.Root {
  const abs = path.resolve(file);
  const key = `${abs}\0${includeDirs.join("\0")}`;
  const hit = roots.get(key);
  if (hit) return hit;
  const root = new protobuf.Root();
  const dirs = [path.dirname(abs), ...includeDirs.map((d) => path.resolve(d))];
  root.resolvePath = (origin, target) => {
    if (path.isAbsolute(target)) return target;
    for (const d of [origin ? path.dirname(origin) : dirs[0], ...dirs]) {
      const candidate = path.resolve(d, target);
      try {
        fs.accessSync(candidate);
        return candidate;
      } catch {
        // try the next folder
      }
    }
    // protobufjs ships google/protobuf/*.proto as common types; let it resolve those itself.
    return target;
  };
  // protobufjs finds node:fs through an eval'd `require`, which an ESM bundle does not have.
  protobuf.util.fs ??= fs;
  root.loadSync(abs, { keepCase: true });
  root.resolveAll();
  roots.set(key, root);
  return root;
}

/** Finds a service by fully-qualified name in a loaded root, or throws a clear error. */
export function lookupService(root: protobuf.Root, name: string): protobuf.Service {
  const found = root.lookup(name);
  if (!(found instanceof protobuf.Service)) {
    throw new TypeError(`service ${name} is not defined in the given .proto`);
  }
  return found;
}
