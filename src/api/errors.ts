// One error type for every failed call to the control plane. `code` is the Connect code when
// the service answered with one, or a transport code of ours (NETWORK, TIMEOUT, BAD_RESPONSE,
// TLS, HTTP_<status> for a non-JSON error body such as a proxy's HTML page, RESPONSE_TOO_LARGE
// for a body past the configured page size limit).
import { SessionhouseError } from "../util/errors.js";
import type { ConnectCode } from "./connect-codes.js";

export type TransportCode =
  | "NETWORK"
  | "TIMEOUT"
  | "BODY_CUT"
  | "BAD_RESPONSE"
  | "RESPONSE_TOO_LARGE"
  | "ABORTED"
  | "TLS"
  | `HTTP_${number}`;

export interface ApiErrorInit {
  code: ConnectCode | TransportCode;
  httpStatus: number;
  procedure: string;
  message: string;
  retryAfterMs?: number | undefined;
  hint?: string | undefined;
}

export class ApiError extends SessionhouseError {
  readonly code: ConnectCode | TransportCode;
  /** HTTP status, 0 when no response arrived. */
  readonly httpStatus: number;
  /** `Service/Method` of the call. */
  readonly procedure: string;
  /** Milliseconds the service (or a proxy) asked us to wait, from Retry-After / X-Ratelimit-Reset. */
  readonly retryAfterMs: number | undefined;
  /** The service's (or our) message alone, without the procedure and code prefix. */
  readonly detail: string;

  constructor(init: ApiErrorInit, options?: { cause?: unknown }) {
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
    this.detail = init.message;
  }

  /**
   * The same failure, saying why the client stopped retrying it: a person reading "unavailable"
   * alone cannot tell a single refusal from the seventh one in a row.
   */
  gaveUp(why: string, hint?: string): ApiError {
    return new ApiError(
      {
        code: this.code,
        httpStatus: this.httpStatus,
        procedure: this.procedure,
        message: `${this.detail} (${why})`,
        retryAfterMs: this.retryAfterMs,
        hint: hint ?? this.hint,
      },
      { cause: this },
    );
  }
}

function hintFor(code: string): string | undefined {
  switch (code) {
    case "unauthenticated":
    case "HTTP_401":
      return "the API key was refused: check SESSIONHOUSE_API_KEY (or the file in SESSIONHOUSE_API_KEY_FILE)";
    case "permission_denied":
    case "HTTP_403":
      return "the API key lacks the permission for this call: ask the control-plane admin for a key that may read sessions and logs";
    case "not_found":
    case "unimplemented":
    case "HTTP_404":
    case "HTTP_405":
      return "check SESSIONHOUSE_API_URL: it must be the control plane's API base URL";
    case "invalid_argument":
    case "out_of_range":
    case "failed_precondition":
      return "the service refused the request itself: check the setting the message names (page size, timestamp format SESSIONHOUSE_TIMESTAMP_FORMAT, an aggregation job's query, interval or group-by fields)";
    case "NETWORK":
      return "the API cannot be reached: check SESSIONHOUSE_API_URL and the network";
    case "TLS":
      return "the API's TLS certificate is not trusted: set SESSIONHOUSE_API_CA_FILE to the PEM file of the CA that signed it, and check that SESSIONHOUSE_API_URL names the host the certificate was issued for";
    case "TIMEOUT":
      return "the API did not answer in time: raise SESSIONHOUSE_REQUEST_TIMEOUT (waiting for the answer) or SESSIONHOUSE_BODY_IDLE_TIMEOUT (a body that stops sending), or lower SESSIONHOUSE_PAGE_SIZE";
    case "BAD_RESPONSE":
      return "the API answered with something that is not this operation's answer, also on retries: nothing past it was checkpointed; the next run tries again. If it persists, report the message to the vendor";
    case "RESPONSE_TOO_LARGE":
      return "raise SESSIONHOUSE_MAX_PAGE_BYTES, or lower SESSIONHOUSE_PAGE_SIZE (sessions) or the window of the job so each answer is smaller";
    case "resource_exhausted":
    case "HTTP_429":
      return "the API kept rate-limiting the exporter: lower SESSIONHOUSE_MAX_RPS; the next run resumes from the checkpoint";
    default:
      return undefined;
  }
}
