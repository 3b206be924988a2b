// One error type for every failed call to the control plane. `code` is the Connect code when
// the service answered with one, or a transport code of ours (NETWORK, TIMEOUT, BAD_RESPONSE,
// HTTP_<status> for a non-JSON error body such as a proxy's HTML page).
import { SessionhouseError } from "../util/errors.js";
import type { ConnectCode } from "./connect-codes.js";

export type TransportCode =
  | "NETWORK"
  | "TIMEOUT"
  | "BODY_CUT"
  | "BAD_RESPONSE"
  | "ABORTED"
  | `HTTP_${number}`;

export class ApiError extends SessionhouseError {
  readonly code: ConnectCode | TransportCode;
  /** HTTP status, 0 when no response arrived. */
  readonly httpStatus: number;
  /** `Service/Method` of the call. */
  readonly procedure: string;
  /** Milliseconds the service (or a proxy) asked us to wait, from Retry-After / X-Ratelimit-Reset. */
  readonly retryAfterMs: number | undefined;

  constructor(
    init: {
      code: ConnectCode | TransportCode;
      httpStatus: number;
      procedure: string;
      message: string;
      retryAfterMs?: number | undefined;
      hint?: string;
    },
    options?: { cause?: unknown },
  ) {
    super(
      `${init.procedure}: ${init.code}${init.httpStatus ? ` (HTTP ${init.httpStatus})` : ""}: ${init.message}`,
      {
        cause: options?.cause,
        hint: init.hint ?? hintFor(init.code),
      },
    );
    this.code = init.code;
    this.httpStatus = init.httpStatus;
    this.procedure = init.procedure;
    this.retryAfterMs = init.retryAfterMs;
  }
}

function hintFor(code: string): string | undefined {
  switch (code) {
    case "unauthenticated":
      return "the API key was refused: check SESSIONHOUSE_API_KEY (or the file in SESSIONHOUSE_API_KEY_FILE)";
    case "permission_denied":
      return "the API key lacks the permission for this call: ask the control-plane admin for a key that may read sessions and logs";
    case "not_found":
    case "unimplemented":
    case "HTTP_404":
      return "check SESSIONHOUSE_API_URL: it must be the control plane's API base URL";
    case "NETWORK":
      return "the API cannot be reached: check SESSIONHOUSE_API_URL and the network";
    default:
      return undefined;
  }
}
