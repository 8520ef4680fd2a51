// Owns `authenticate`. Authenticates one call: `authorization: Bearer <token>` on HTTP/1.1 and
// HTTP/2 alike. Missing or bad token → unauthenticated (401 / 16). Must not change: the rules every
// protocol relies on (docs/architecture.md).
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { AuthRequirement } from "../service/descriptors.js";
import type { CallContext, Identity } from "./context.js";
import { H } from "../protocol/headers.js";

/**
 * Checks a bearer token. Return the caller's identity, or null/undefined to reject the token
 * (401 / unauthenticated). Throw an RpcError to answer with its own code, e.g.
 * `permission_denied` for a known caller who may not call anything.
 */
export type TokenVerifier = (token: string, ctx: CallContext) => Identity | null | undefined | Promise<Identity | null | undefined>;

/** Bearer authentication options of the server. */
export interface AuthOptions {
  /** Verifies tokens. */
  verify: TokenVerifier;
  /** Require auth on every method unless the method says `auth: false`. Default false. */
  requireByDefault?: boolean;
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

function unauthenticated(message: string): RpcError {
  return new RpcError(Code.Unauthenticated, message, { metadata: { "www-authenticate": 'Bearer realm="triple-rpc"' } });
}

/**
 * Authenticates one call: `authorization: Bearer <token>` on HTTP/1.1
 * and HTTP/2 alike. Missing or bad token → unauthenticated (401 / 16); a verified caller
 * without a required role → permission_denied (403 / 7). The identity lands on `ctx.identity`.
 */
export async function authenticate(ctx: CallContext, requirement: AuthRequirement, options: AuthOptions | undefined): Promise<void> {
  if (!options) {
    throw new RpcError(Code.Internal, `${ctx.method.path} requires authentication but the server has no token verifier`);
  }
  const header = ctx.requestHeaders.get(H.authorization);
  if (header === undefined || header === "") throw unauthenticated("missing bearer token: send authorization: Bearer <token>");
  const m = BEARER.exec(header);
  if (!m) throw unauthenticated("malformed authorization header: expected Bearer <token>");
  let identity: Identity | null | undefined;
  try {
    identity = await options.verify(m[1], ctx);
  } catch (e) {
    if (e instanceof RpcError) throw e;
    throw unauthenticated(`invalid bearer token: ${(e as Error).message}`);
  }
  if (!identity) throw unauthenticated("invalid bearer token");
  ctx.identity = identity;
  if (requirement !== true) {
    const held = identity.roles ?? [];
    if (!requirement.roles.some((r) => held.includes(r))) {
      throw new RpcError(
        Code.PermissionDenied,
        `${identity.subject} may not call ${ctx.method.path}: requires one of the roles ${requirement.roles.join(", ")}`,
      );
    }
  }
}
