// Connect-protocol pieces shared by every simulated route (sessions here, log aggregations in
// logs/): the error a handler throws, and the request-timestamp parser, so that all routes
// reject bad input with the same code and the same kind of message.

import { parseRfc3339 } from "./time.js";

export type ConnectCode =
  | "canceled"
  | "unknown"
  | "invalid_argument"
  | "deadline_exceeded"
  | "not_found"
  | "already_exists"
  | "permission_denied"
  | "resource_exhausted"
  | "failed_precondition"
  | "aborted"
  | "out_of_range"
  | "unimplemented"
  | "internal"
  | "unavailable"
  | "data_loss"
  | "unauthenticated";

/**
 * Connect error codes and the HTTP status the protocol maps each to
 * (https://connectrpc.com/docs/protocol/#error-codes). The simulator stands for a foreign
 * service, so it keeps its own table instead of importing the exporter's.
 */
export const HTTP_STATUS_OF_CODE: Readonly<Record<ConnectCode, number>> = {
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
};

export class SimConnectError extends Error {
  constructor(
    readonly code: ConnectCode,
    message: string,
  ) {
    super(message);
    this.name = "SimConnectError";
  }

  get httpStatus(): number {
    return HTTP_STATUS_OF_CODE[this.code];
  }

  /** Connect error JSON body. */
  toJSON(): { code: ConnectCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

const UNIX_SECONDS = /^(\d{1,12})(?:\.(\d{1,9}))?$/;

/**
 * Epoch milliseconds of a request timestamp. Accepts Unix seconds as a string ("1730000000",
 * "1730000000.25": what the real service documents) and RFC 3339 (the configurable
 * alternative of the exporter). Anything else is `invalid_argument` naming the field.
 */
export function parseRequestTimestamp(
  value: unknown,
  field = "timestamp",
): number {
  if (typeof value !== "string") {
    throw new SimConnectError(
      "invalid_argument",
      `${field}: expected a string (Unix seconds or RFC 3339), got ${typeof value}`,
    );
  }
  const unix = UNIX_SECONDS.exec(value);
  if (unix) {
    const seconds = Number(unix[1]);
    const millis = Number((unix[2] ?? "").padEnd(3, "0").slice(0, 3));
    return seconds * 1000 + millis;
  }
  const ms = parseRfc3339(value);
  if (ms === undefined) {
    throw new SimConnectError(
      "invalid_argument",
      `${field}: "${truncateForMessage(value)}" is neither Unix seconds nor an RFC 3339 time`,
    );
  }
  return ms;
}

/** Keeps client-supplied text in error messages short. */
export function truncateForMessage(text: string, max = 64): string {
  return text.length <= max ? text : text.slice(0, max) + "…";
}
