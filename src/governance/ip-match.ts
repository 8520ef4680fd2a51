/**
 * Dubbo's address expressions for tag rules (`NetUtils.matchIpExpression`), without DNS: IPv4
 * `a.b.c.d`, `*` and `n-m` per segment, `:port`, CIDR `a.b.c.d/n`, `*` or `*.*.*.*` for any
 * host; IPv6 in full form with `*` and ranges, or exact (`[addr]:port` too). Java resolves a
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

function cidrMatches(pattern: string, host: string): boolean {
  const [net, bitsText] = pattern.split("/");
  const a = ipv4(net);
  const h = ipv4(host);
  const bits = Number(bitsText);
  if (!a || !h || !/^\d+$/.test(bitsText ?? "") || bits > 32) return false;
  const toInt = (x: number[]) => ((x[0] << 24) | (x[1] << 16) | (x[2] << 8) | x[3]) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (toInt(a) & mask) === (toInt(h) & mask);
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
export function matchIpExpression(patternText: string, host: string, port: number): boolean {
  if (patternText.includes("/")) return cidrMatches(patternText, host);
  const pattern = patternText.trim();
  if (pattern === "*.*.*.*" || pattern === "*") return true;
  const v4 = ipv4(host) !== undefined || !host.includes(":");
  const [p, patternPort] = hostAndPort(pattern, v4);
  if (patternPort !== undefined && patternPort !== String(port)) return false;
  const mask = p.split(v4 ? "." : ":");
  const expression = p.includes("*") || p.includes("-");
  if (v4 && mask.length !== 4) throw new Error(`The host is ipv4, but the pattern is not ipv4 pattern : ${p}`);
  if (!v4 && mask.length !== 8 && (expression || !p.includes("::"))) throw new Error(`not an ipv6 pattern: ${p}`);
  if (p === host) return true;
  if (!expression) return false;
  return segmentsMatch(mask, host.split(v4 ? "." : ":"), v4);
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
