/**
 * gRPC status codes (0–16). The one code space every layer speaks; HTTP statuses and
 * Dubbo's legacy statuses are derived from it in `status-table.ts`.
 */
export enum Code {
  OK = 0,
  Cancelled = 1,
  Unknown = 2,
  InvalidArgument = 3,
  DeadlineExceeded = 4,
  NotFound = 5,
  AlreadyExists = 6,
  PermissionDenied = 7,
  ResourceExhausted = 8,
  FailedPrecondition = 9,
  Aborted = 10,
  OutOfRange = 11,
  Unimplemented = 12,
  Internal = 13,
  Unavailable = 14,
  DataLoss = 15,
  Unauthenticated = 16,
}

const names: readonly string[] = [
  "ok",
  "cancelled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "already_exists",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "out_of_range",
  "unimplemented",
  "internal",
  "unavailable",
  "data_loss",
  "unauthenticated",
];

/** The snake_case name of a code (`invalid_argument`), as used in error bodies and messages. */
export function codeName(code: Code): string {
  return names[code] ?? `code_${code}`;
}

/** Parses a snake_case code name (also accepts `canceled` and upper case); undefined when unknown. */
export function codeFromName(name: string): Code | undefined {
  const n = name.toLowerCase();
  if (n === "canceled") return Code.Cancelled;
  const i = names.indexOf(n);
  return i < 0 ? undefined : (i as Code);
}

/** True when `n` is a valid numeric code. */
export function isCode(n: unknown): n is Code {
  return typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= 16;
}
