// Owns `negotiateResponse`. Picks the response codec from `Accept`: the request's own type
// (`fallback`) unless another supported type is strictly preferred. Must not change: Triple's wire
// rules as Dubbo Java speaks them (tri-* headers, the HTTP unary and stream forms).
import type { ResponseCodec } from "../codec/codec.js";
import { responseCodecFor } from "../codec/codec-table.js";

/**
 * Picks the response codec from `Accept`: the request's own type (`fallback`) unless another
 * supported type is strictly preferred. A browser's `text/html,…,application/xml;q=0.9,*\/*;q=0.8`
 * must not turn a JSON call into XML, so `*\/*` and the fallback's own family count for it.
 */
export function negotiateResponse(accept: string | undefined, fallback: ResponseCodec): ResponseCodec {
  if (accept === undefined || accept === "*/*" || accept === fallback.mediaType) return fallback;
  const family = `${fallback.mediaType.slice(0, fallback.mediaType.indexOf("/"))}/*`;
  let fallbackQ = 0;
  let best: ResponseCodec | undefined;
  let bestQ = 0;
  for (const part of accept.split(",")) {
    const [type, ...params] = part.split(";");
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split("=");
      if (k.trim() === "q") q = Number(v);
    }
    if (!(q > 0)) continue;
    const t = type.trim().toLowerCase();
    if (t === fallback.mediaType || t === "*/*" || t === family) {
      if (q > fallbackQ) fallbackQ = q;
      continue;
    }
    const c = responseCodecFor(t);
    if (c && q > bestQ) {
      best = c;
      bestQ = q;
    }
  }
  return best && bestQ > fallbackQ ? best : fallback;
}
