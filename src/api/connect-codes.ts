// Connect protocol error codes and their current HTTP status mapping
// (https://connectrpc.com/docs/protocol/#error-codes). Clients classify by code, never by
// status: the mapping changed between Connect versions (docs/control-plane-wire.md, "Errors").
// The simulator answers with the same table: both follow the protocol.

export const CONNECT_CODES = [
  "canceled",
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
] as const;

export type ConnectCode = (typeof CONNECT_CODES)[number];

export const HTTP_STATUS_OF_CODE: Readonly<Record<ConnectCode, number>> =
  Object.freeze({
    canceled: 499,
    unknown: 500,
    invalid_argument: 400,
    deadline_exceeded: 504,
    not_found: 404,
    already_exists: 409,
    permission_denied: 403,
    resource_exhausted: 429,
    failed_precondition: 400,
    aborted: 409,
    out_of_range: 400,
    unimplemented: 501,
    internal: 500,
    unavailable: 503,
    data_loss: 500,
    unauthenticated: 401,
  });

export function isConnectCode(value: unknown): value is ConnectCode {
  return (
    typeof value === "string" &&
    (CONNECT_CODES as readonly string[]).includes(value)
  );
}
