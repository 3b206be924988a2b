// Connect-protocol pieces shared by every simulated route (sessions here, log aggregations in
// logs/): the error a handler throws, and the request-timestamp parser, so that all routes
// reject bad input with the same code and the same kind of message. The codes and their HTTP
// statuses are the protocol's, defined once in src/api/connect-codes.ts.

import { HTTP_STATUS_OF_CODE, type ConnectCode } from "../api/connect-codes.js";
import { parseRfc3339 } from "./time.js";

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
