/**
 * The interface → application mapping (`/dubbo/mapping/<interface>`: `app1,app2,…`), read and
 * written in time linear in its text, and bounded: anyone who can write the node can make it as
 * long as ZooKeeper allows (1 MiB by default, some 500 000 names), and each name read is an
 * application a consumer then follows.
 */

/**
 * The most applications a consumer follows for one interface: the first ones the mapping lists
 * (Dubbo appends, so the oldest providers come first). An interface is rarely provided by more
 * than a handful.
 */
export const MAX_MAPPED_APPS = 256;

/** The longest application name followed, characters. */
const MAX_APP_NAME = 255;

/**
 * A name that can be an application: `/services/<name>` must be one ZooKeeper node below
 * `/services`, so no `/`, not `.` or `..`, none of the characters ZooKeeper refuses in a path
 * (controls, U+D800–U+F8FF, U+FFF0–U+FFFF), and at most {@link MAX_APP_NAME} characters.
 */
export function isApplicationName(name: string): boolean {
  return name.length <= MAX_APP_NAME && name !== "." && name !== ".." && APP_NAME.test(name);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const APP_NAME = /^[^/\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]+$/;

/** The applications of a mapping a consumer follows, and what it leaves out. */
export interface MappedApps {
  /** At most {@link MAX_MAPPED_APPS} distinct application names, in the mapping's order. */
  readonly apps: string[];
  /** Entries not read: past the cap. */
  readonly ignored: number;
  /** Entries that are no application name (`a/b`, `..`, control characters, too long). */
  readonly invalid: number;
}

/**
 * The applications of a list (a mapping already split, `providedBy`): names trimmed, empty ones
 * and duplicates skipped, invalid ones counted, at most `cap` kept; the rest is only counted.
 */
export function mappedApps(list: readonly string[], cap = MAX_MAPPED_APPS): MappedApps {
  const apps: string[] = [];
  const seen = new Set<string>();
  let invalid = 0;
  let i = 0;
  for (; i < list.length && apps.length < cap; i++) {
    const name = list[i].trim();
    if (!name || seen.has(name)) continue;
    if (!isApplicationName(name)) invalid++;
    else {
      seen.add(name);
      apps.push(name);
    }
  }
  return { apps, ignored: list.length - i, invalid };
}

/**
 * The applications of a mapping node's text: only the first pieces are cut out (up to `cap`
 * applications found); the separators after them are only counted, so a mapping of a million
 * names costs a scan of its text, not a million strings.
 */
export function parseMapping(text: string, cap = MAX_MAPPED_APPS): MappedApps {
  const pieces: string[] = [];
  let from = 0;
  // Up to 4 × cap pieces (room for empties, duplicates and garbage before the cap is reached).
  while (from <= text.length && pieces.length < cap * 4) {
    const comma = text.indexOf(",", from);
    const end = comma < 0 ? text.length : comma;
    pieces.push(text.slice(from, end));
    from = end + 1;
  }
  const first = mappedApps(pieces, cap);
  // Entries not even cut out: one, plus one per comma after it.
  let rest = 0;
  if (from <= text.length) {
    rest = 1;
    for (let at = text.indexOf(",", from); at >= 0; at = text.indexOf(",", at + 1)) rest++;
  }
  return { apps: first.apps, ignored: first.ignored + rest, invalid: first.invalid };
}

/** True when the mapping text lists `app` (entries trimmed), found without splitting the text. */
export function listsApp(text: string, app: string): boolean {
  if (!app) return false;
  for (let at = text.indexOf(app); at >= 0; at = text.indexOf(app, at + 1)) {
    if (boundary(text, at - 1, -1) && boundary(text, at + app.length, 1)) return true;
  }
  return false;
}

/** True when from `i` going `step`, only spaces come before a comma or the end of the text. */
function boundary(text: string, i: number, step: 1 | -1): boolean {
  for (; i >= 0 && i < text.length; i += step) {
    const c = text.charCodeAt(i);
    if (c === 44) return true; // ","
    if (c > 32) return false;
  }
  return true;
}

/** The mapping text with `app` appended, as Dubbo appends it (`old + "," + app`; `app` alone when empty). */
export function appendApp(text: string, app: string): string {
  const old = text.trim();
  if (!old) return app;
  return old.endsWith(",") ? `${old}${app}` : `${old},${app}`;
}

/** The log text of a mapping cut down: how many applications are followed, what is left out and why. */
export function droppedApps(m: MappedApps): string {
  const parts = [`following ${m.apps.length} applications`];
  if (m.ignored > 0) parts.push(`ignoring ${m.ignored} more entries (at most ${MAX_MAPPED_APPS} applications are followed per interface)`);
  if (m.invalid > 0)
    parts.push(`skipping ${m.invalid} that are no application name (".", "..", with "/" or control characters, or over ${MAX_APP_NAME} characters)`);
  return parts.join(", ");
}
