// Owns `FailoverError`, `failoverError`. The error of a failover call whose every attempt failed.
// Must not change: the documented retry and failure semantics of the policy.
import { localAddress } from "../../transport/local-address.js";
import { codeName } from "../../protocol/code.js";
import { RpcError } from "../../protocol/rpc-error.js";
import type { Provider } from "../../transport/client/provider.js";
import { VERSION } from "../../protocol/version.js";

/** The error of a failover call whose every attempt failed. */
export class FailoverError extends RpcError {
  /** Attempts made (retries + 1 when all were used). */
  readonly attempts: number;
  /** The distinct providers tried, in order. */
  readonly providers: readonly string[];

  constructor(message: string, last: RpcError, attempts: number, providers: readonly string[]) {
    super(last.code, message, {
      cause: last,
      metadata: last.metadata,
      details: last.details,
      httpStatus: last.httpStatus,
      legacyStatus: last.legacyStatus,
      rawMessage: last.rawMessage,
    });
    this.attempts = attempts;
    this.providers = providers;
  }
}

/**
 * The consumer address failover messages quote. Rule: 127.0.0.1 when every provider tried is on
 * the loopback interface (the address the server saw); otherwise {@link localAddress}.
 */
function consumerAddress(tried: readonly Provider[]): string {
  const loopback = tried.every((p) => p.host === "localhost" || p.host.startsWith("127.") || p.host === "[::1]");
  if (loopback) return "127.0.0.1";
  return localAddress();
}

/**
 * The failover message, as Dubbo words it (callers and log scrapers match on it), with the
 * attempts really made beside the `retries` option:
 * `Failed to invoke the method <method> in the service <interface>. Tried <retries> times
 * (<attempts> attempts) of the providers [<addr>, ...] (<n>/<m>) from the registry <registry> on
 * the consumer <ip> using the triple-rpc version <version>. Last error is <code>: <last error text>`
 */
export function failoverError(
  method: string,
  service: string,
  retries: number,
  tried: readonly Provider[],
  total: number,
  registry: string,
  last: RpcError,
  attempts: number,
): FailoverError {
  const addrs = tried.map((p) => p.address);
  const message =
    `Failed to invoke the method ${method} in the service ${service}. ` +
    `Tried ${retries} times (${attempts} attempts) of the providers [${addrs.join(", ")}] (${addrs.length}/${total}) ` +
    `from the registry ${registry} on the consumer ${consumerAddress(tried)} ` +
    `using the triple-rpc version ${VERSION}. Last error is ${codeName(last.code)}: ${last.message}`;
  return new FailoverError(message, last, attempts, addrs);
}
