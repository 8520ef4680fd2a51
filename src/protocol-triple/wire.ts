// Triple's header-level wire rules: `tri-service-timeout` / `rest-service-timeout` read as Dubbo
// Java writes them. Must not change: whole milliseconds, at most 10 digits; anything else is a
// 400 invalid_argument naming the header.
import { badTimeout } from "../protocol/errors.js";

/**
 * Parses `tri-service-timeout` / `rest-service-timeout`: integer milliseconds, at most 10
 * digits. Undefined when absent or empty; anything else is `invalid_argument` (400).
 */
export function parseTriTimeout(header: string, value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^\d{1,10}$/.test(value)) throw badTimeout(header, value);
  return Number(value);
}
