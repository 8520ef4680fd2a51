// Owns `addressInSet`. Dubbo's `checkAddressMatch`: any expression matching, or `0.0.0.0:<port>`; a
// malformed one matches nothing. Must not change: Dubbo 3.3's rule semantics (the oracle tests
// compare with Dubbo Java).
import { javaSplit } from "./java-text.js";

/**
 * Dubbo's address expressions for tag rules (`NetUtils.matchIpExpression`), without DNS: IPv4
 * `a.b.c.d`, `*` and `n-m` per segment, `:port`, CIDR `a.b.c.d/n`, `*` or `*.*.*.*` for any
 * host; IPv6 in full form with `*` and ranges, or exact (`[addr]:port` too). As in Java, a
 * loopback provider (127.*) is matched only by `*`, a CIDR or `0.0.0.0:<port>`. Java resolves a
 * host name with `InetAddress.getByName`; a router on the call path must not do DNS, so here a
 * name matches only itself (docs/governance.md says so).
 */

function ipv4(host: string): number[] | undefined {
  const parts = host.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    out.push(Number(p));
  }
  return out;
}

/** An IPv6 address as its 8 groups, or undefined (an IPv4 tail `::ffff:1.2.3.4` is not read). */
function ipv6Groups(text: string): number[] | undefined {
  const t = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (!/^[0-9a-fA-F:]+$/.test(t) || t.split("::").length > 2) return undefined;
  const [head, tail] = t.includes("::") ? t.split("::") : [t, undefined];
  const part = (x: string | undefined) => (x ? x.split(":") : []);
  const h = part(head);
  const tl = part(tail);
  const missing = 8 - h.length - tl.length;
  if (tail === undefined ? h.length !== 8 : missing < 1) return undefined;
  const all = [...h, ...Array(tail === undefined ? 0 : missing).fill("0"), ...tl];
  if (all.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  return all.map((g) => Number.parseInt(g, 16));
}

/** Java's `Inet6Address.getHostAddress()`: 8 groups in lower-case hex, no compression. */
function ipv6Text(groups: number[]): string {
  return groups.map((g) => g.toString(16)).join(":");
}

function toBig(groups: number[], width: number): bigint {
  return groups.reduce((acc, g) => (acc << BigInt(width)) | BigInt(g), 0n);
}

/** Java's `CIDRUtils.isInRange`: IPv4 or IPv6 network / prefix length. */
function cidrMatches(pattern: string, host: string): boolean {
  const [net, bitsText] = pattern.split("/");
  const bits = Number(bitsText);
  if (!/^\d+$/.test(bitsText ?? "")) return false;
  const a4 = ipv4(net);
  const h4 = ipv4(host);
  if (a4 && h4) {
    if (bits > 32) return false;
    const shift = BigInt(32 - bits);
    return toBig(a4, 8) >> shift === toBig(h4, 8) >> shift;
  }
  const a6 = ipv6Groups(net);
  const h6 = ipv6Groups(host);
  if (!a6 || !h6 || bits > 128) return false;
  const shift = BigInt(128 - bits);
  return toBig(a6, 16) >> shift === toBig(h6, 16) >> shift;
}

function hostAndPort(pattern: string, v4: boolean): [string, string | undefined] {
  if (pattern.startsWith("[") && pattern.includes("]:")) {
    const end = pattern.indexOf("]:");
    return [pattern.slice(1, end), pattern.slice(end + 2)];
  }
  if (pattern.startsWith("[") && pattern.endsWith("]")) return [pattern.slice(1, -1), undefined];
  if (v4 && pattern.includes(":")) {
    const end = pattern.indexOf(":");
    return [pattern.slice(0, end), pattern.slice(end + 1)];
  }
  return [pattern, undefined];
}

function segment(text: string, v4: boolean): number {
  const n = v4 ? Number.parseInt(text, 10) : Number.parseInt(text, 16);
  if (Number.isNaN(n) || !(v4 ? /^\d+$/ : /^[0-9a-fA-F]+$/).test(text)) throw new Error(`bad segment ${text}`);
  return n;
}

function segmentsMatch(mask: string[], address: string[], v4: boolean): boolean {
  for (let i = 0; i < mask.length; i++) {
    const m = mask[i];
    const a = address[i] ?? "";
    if (m === "*" || m === a) continue;
    if (m.includes("-")) {
      const r = m.split("-").filter((x) => x !== "");
      if (r.length !== 2) throw new Error(`There is wrong format of ip Address: ${m}`);
      const ip = segment(a, v4);
      if (ip < segment(r[0], v4) || ip > segment(r[1], v4)) return false;
    } else if (a === "0" && /^0{1,4}$/.test(m)) {
    } else return false;
  }
  return true;
}

/** Whether `host:port` is in the expression; a malformed expression throws (the caller treats it as no match). */
function matchIpExpression(patternText: string, host: string, port: number): boolean {
  if (patternText.includes("/")) return cidrMatches(patternText, host);
  const pattern = patternText.trim();
  if (pattern === "*.*.*.*" || pattern === "*") return true;
  // Java's isValidV4Address: a loopback (127.*) or 0.0.0.0 host is not "IPv4", and takes the IPv6
  // path, where an IPv4 pattern is malformed: such a provider matches only `*`, a CIDR or 0.0.0.0:<port>.
  const literal = ipv4(host);
  const v4 = literal !== undefined ? literal[0] !== 127 && host !== "0.0.0.0" : !host.includes(":");
  const [p, patternPort] = hostAndPort(pattern, v4);
  if (patternPort !== undefined && patternPort !== String(port)) return false;
  const mask = javaSplit(p, v4 ? "." : ":");
  const expression = p.includes("*") || p.includes("-");
  if (v4 && mask.length !== 4) throw new Error(`The host is ipv4, but the pattern is not ipv4 pattern : ${p}`);
  if (!v4 && mask.length !== 8 && (expression || !p.includes("::"))) throw new Error(`not an ipv6 pattern: ${p}`);
  const groups = v4 ? undefined : ipv6Groups(host);
  const address = groups ? ipv6Text(groups) : host; // Java compares with getHostAddress(): IPv6 uncompressed
  if (p === address) return true;
  if (!expression) {
    const pg = v4 ? undefined : ipv6Groups(p);
    return pg !== undefined && ipv6Text(pg) === address;
  }
  return segmentsMatch(mask, address.split(v4 ? "." : ":"), v4);
}

/** Dubbo's `checkAddressMatch`: any expression matching, or `0.0.0.0:<port>`; a malformed one matches nothing. */
export function addressInSet(addresses: Iterable<string>, host: string, port: number): boolean {
  for (const a of addresses) {
    try {
      if (matchIpExpression(a, host, port)) return true;
      if (`0.0.0.0:${port}` === a) return true;
    } catch {
      // Java logs and goes on with the next address
    }
  }
  return false;
}
