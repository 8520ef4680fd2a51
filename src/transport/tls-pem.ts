/** The TLS options that take PEM text (node's `tls.createSecureContext`), and not a file path. */
const PEM_OPTIONS = ["key", "cert", "ca"] as const;

/** The text of one value of a PEM option (a string, a Buffer, or `{ pem }` for `key`), or undefined. */
function pemText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (Buffer.isBuffer(v)) return v.subarray(0, 64 * 1024).toString("latin1");
  if (v && typeof v === "object" && "pem" in v) return pemText((v as { pem: unknown }).pem);
  return undefined;
}

/**
 * Refuses a `key`, `cert` or `ca` that is not PEM text, naming the option and the fix: node's
 * own error for a file path given there is `error:0480006C:PEM routines::no start line`, which
 * says neither. `where` prefixes the message (`createServer`, `createClient`).
 */
export function checkTlsPem(tls: object | undefined, where: string): void {
  if (!tls) return;
  for (const name of PEM_OPTIONS) {
    const value = (tls as Record<string, unknown>)[name];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      const text = pemText(v);
      if (text === undefined || text.includes("-----BEGIN ")) continue;
      const shown = text.length <= 80 && !/[\r\n]/.test(text) ? ` (${JSON.stringify(text)} looks like a file path)` : "";
      throw new TypeError(
        `${where}: tls.${name} is not PEM text${shown}: key, cert and ca take the PEM contents ("-----BEGIN …"), not a path; read the file: tls: { ${name}: fs.readFileSync(path) }`,
      );
    }
  }
}
