// One error type for every failed call to the control plane, and the mapping onto it. `code` is
// the Connect code when the service answered with one, or a transport code of ours (NETWORK,
// TIMEOUT, BAD_RESPONSE, TLS, HTTP_<status> for a non-JSON error body such as a proxy's HTML
// page, RESPONSE_TOO_LARGE for a body past the configured page size limit). Each code has one
// verdict (retry, refused, fatal) and one hint, in one table; classifyFailure is the only
// judge of whether a failure is worth another try.
import { errors as undiciErrors } from "undici";
import { errorMessage, SessionhouseError } from "../util/errors.js";
import { isConnectCode, type ConnectCode } from "./connect-codes.js";
import { JsonShapeError } from "./json-stream.js";
import { serverWaitMs, type ResponseHeaders } from "./pacing.js";

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

/**
 * What a failure means for the run: `retry` (the same request may succeed later; read
 * operations have no side effects), `refused` (about the caller, not the call: a refused or
 * underprivileged key gets the same answer on every request, so the rest of the run must not ask
 * again) or `fatal` (this call fails; `not_found` is per call, a session that is gone).
 */
export type FailureVerdict = "retry" | "refused" | "fatal";

type FixedCode = Exclude<ConnectCode | TransportCode, `HTTP_${number}`>;

const REFUSED_REQUEST_HINT =
  "the service refused the request itself: check the setting the message names (page size, timestamp format SESSIONHOUSE_TIMESTAMP_FORMAT, an aggregation job's query, interval or group-by fields)";

const URL_HINT =
  "check SESSIONHOUSE_API_URL: it must be the control plane's API base URL";

/** Every code's verdict and hint; an HTTP_<status> code is judged as the Connect code it stands for. */
/** A failure of the service (or a proxy) that usually passes: what the operator can do. */
const SERVICE_FAILING_HINT =
  "the control plane (or a proxy before it) kept failing: nothing past the last checkpoint was lost, and running the command again (or the service's next run) resumes from it; if it persists, check the control plane's status page or lower SESSIONHOUSE_MAX_RPS";

const FAILURES: Readonly<
  Record<FixedCode, { verdict: FailureVerdict; hint?: string }>
> = {
  canceled: { verdict: "fatal" },
  unknown: { verdict: "retry" },
  invalid_argument: { verdict: "fatal", hint: REFUSED_REQUEST_HINT },
  deadline_exceeded: { verdict: "retry", hint: SERVICE_FAILING_HINT },
  not_found: { verdict: "fatal", hint: URL_HINT },
  already_exists: { verdict: "fatal" },
  permission_denied: {
    verdict: "refused",
    hint: "the API key lacks the permission for this call: ask the control-plane admin for a key that may read sessions and logs",
  },
  resource_exhausted: {
    verdict: "retry",
    hint: "the API kept rate-limiting the exporter: lower SESSIONHOUSE_MAX_RPS; the next run resumes from the checkpoint",
  },
  failed_precondition: { verdict: "fatal", hint: REFUSED_REQUEST_HINT },
  aborted: { verdict: "retry", hint: SERVICE_FAILING_HINT },
  out_of_range: { verdict: "fatal", hint: REFUSED_REQUEST_HINT },
  unimplemented: { verdict: "fatal", hint: URL_HINT },
  internal: { verdict: "retry", hint: SERVICE_FAILING_HINT },
  unavailable: { verdict: "retry", hint: SERVICE_FAILING_HINT },
  data_loss: { verdict: "fatal" },
  unauthenticated: {
    verdict: "refused",
    hint: "the API key was refused: check SESSIONHOUSE_API_KEY (or the file in SESSIONHOUSE_API_KEY_FILE)",
  },
  NETWORK: {
    verdict: "retry",
    hint: "the API cannot be reached: check SESSIONHOUSE_API_URL and the network",
  },
  TIMEOUT: {
    verdict: "retry",
    hint: "the API did not answer in time: raise SESSIONHOUSE_REQUEST_TIMEOUT (waiting for the answer) or SESSIONHOUSE_BODY_IDLE_TIMEOUT (a body that stops sending), or lower SESSIONHOUSE_PAGE_SIZE",
  },
  BODY_CUT: { verdict: "retry", hint: SERVICE_FAILING_HINT },
  BAD_RESPONSE: {
    verdict: "retry",
    hint: "the API answered with something that is not this operation's answer, also on retries: nothing past it was checkpointed; the next run tries again. If it persists, report the message to the vendor",
  },
  RESPONSE_TOO_LARGE: {
    verdict: "fatal",
    hint: "raise SESSIONHOUSE_MAX_PAGE_BYTES, or lower SESSIONHOUSE_PAGE_SIZE (sessions) or the window of the job so each answer is smaller",
  },
  ABORTED: { verdict: "fatal" },
  TLS: {
    verdict: "fatal",
    hint: "the API's TLS certificate is not trusted: set SESSIONHOUSE_API_CA_FILE to the PEM file of the CA that signed it, and check that SESSIONHOUSE_API_URL names the host the certificate was issued for",
  },
};

/**
 * The Connect code a non-JSON answer's HTTP status stands for (a proxy's page); a status not
 * listed is fatal. Every 5xx is the service or a proxy failing for now.
 */
const CODE_OF_STATUS: Readonly<Record<number, ConnectCode>> = {
  401: "unauthenticated",
  403: "permission_denied",
  404: "not_found",
  405: "unimplemented",
  408: "deadline_exceeded",
  429: "resource_exhausted",
};

function entryOf(
  code: string,
): { verdict: FailureVerdict; hint?: string } | undefined {
  const http = /^HTTP_(\d{3})$/.exec(code);
  if (http) {
    const status = Number(http[1]);
    const like =
      CODE_OF_STATUS[status] ?? (status >= 500 ? "unavailable" : undefined);
    return like === undefined ? undefined : FAILURES[like];
  }
  return Object.hasOwn(FAILURES, code)
    ? FAILURES[code as FixedCode]
    : undefined;
}

function hintFor(code: string): string | undefined {
  return entryOf(code)?.hint;
}

/** The verdict on a failure; anything but an ApiError is fatal (not a failed call). */
export function classifyFailure(err: unknown): FailureVerdict {
  if (!(err instanceof ApiError)) return "fatal";
  return entryOf(err.code)?.verdict ?? "fatal";
}

/**
 * The failure a refused key leaves in a run's recorded error (`runs.error`, an ApiError's message
 * "<procedure>: <code> (HTTP <status>): …"): the codes with the verdict `refused` and the HTTP
 * statuses that stand for them, as a re2/JavaScript regular expression without backslashes (it
 * reads the same inside a SQL string literal). The "API key refused" alert rule of
 * dashboards/provisioning/alerting/sessionhouse.yaml holds a copy; `status` reads runs with it
 * (keyRefusedIn); test/unit/dashboards/health-rules.test.ts holds the copy to this.
 */
export const KEY_REFUSED_REGEX = (() => {
  const refused = (Object.keys(FAILURES) as FixedCode[]).filter(
    (c) => FAILURES[c].verdict === "refused",
  );
  const statuses = Object.entries(CODE_OF_STATUS)
    .filter(([, code]) => (refused as string[]).includes(code))
    .map(([status]) => `HTTP_${status}`);
  return `: (${[...refused, ...statuses].join("|")})( [(]HTTP [0-9]+[)])?: `;
})();

/** True when a run's recorded error is a refusal of the key (KEY_REFUSED_REGEX). */
export function keyRefusedIn(error: string): boolean {
  return new RegExp(KEY_REFUSED_REGEX).test(error);
}

/** True when the same request may succeed later. */
export function isRetryable(err: unknown): boolean {
  return classifyFailure(err) === "retry";
}

/** True when no further call of the run should be made (see FailureVerdict). */
export function refusesEveryCall(err: unknown): boolean {
  return classifyFailure(err) === "refused";
}

/** Longest service message kept in an error: a proxy may send a whole page as the message. */
const MAX_MESSAGE_CHARS = 500;

/** OpenSSL's answer when the server speaks plain HTTP where TLS was expected (https:// to http). */
const NOT_TLS = /WRONG_VERSION_NUMBER|wrong version number/;

/**
 * Node's codes of a connection that could not be made at all: nothing listens there, or the host
 * name does not resolve. A person waiting on a command is told at once (retry.ts).
 */
const CONNECT_FAILURES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * What keeps every call of a run from reaching the control plane, in a few words, when `err`
 * (or a cause of it) is such a failure: no connection can be made, the key is refused
 * (401/403), or TLS fails. Undefined for anything that may pass by itself (a 5xx, a timeout, a
 * bad answer) and for a failure of something else.
 */
export function apiTrouble(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 6; depth++) {
    if (e instanceof ApiError) {
      if (isConnectFailure(e)) return `cannot be reached (${e.detail})`;
      if (e.code === "TLS") return `fails TLS (${e.detail})`;
      if (classifyFailure(e) === "refused")
        return `refuses the API key (${e.code}${e.httpStatus ? `, HTTP ${e.httpStatus}` : ""})`;
      return undefined;
    }
    e = e.cause;
  }
  return undefined;
}

/** True when no connection to the API could be made (refused, unknown host, no route). */
export function isConnectFailure(err: ApiError): boolean {
  return (
    err.code === "NETWORK" && CONNECT_FAILURES.has(errorCode(err.cause) ?? "")
  );
}

/** Node/OpenSSL error codes of a certificate the client does not trust: no retry fixes them. */
const TLS_ERROR = /CERT|SELF_SIGNED|ERR_TLS|ERR_SSL|UNABLE_TO_(GET|VERIFY)/;

/** A BAD_RESPONSE: the answer is not what the operation returns. */
export function badAnswer(
  procedure: string,
  status: number,
  context: string | undefined,
  problem: string,
): ApiError {
  const operation = procedure.slice(procedure.lastIndexOf("/") + 1);
  return new ApiError({
    code: "BAD_RESPONSE",
    httpStatus: status,
    procedure,
    message: `not a ${operation} answer${context ? ` for ${context}` : ""}: ${problem}`,
  });
}

/** A RESPONSE_TOO_LARGE: the answer is larger than the page limit. */
export function tooLarge(
  procedure: string,
  size: number,
  limit: number,
  context: string | undefined,
): ApiError {
  return new ApiError({
    code: "RESPONSE_TOO_LARGE",
    httpStatus: 200,
    procedure,
    message: `the answer${context ? ` for ${context}` : ""} is larger than ${limit} bytes (at least ${size} bytes; limit SESSIONHOUSE_MAX_PAGE_BYTES)`,
  });
}

/**
 * A non-200 answer: a Connect error JSON body, or a non-JSON body (a proxy's page) turned into
 * HTTP_<status>. `text` is undefined when the body was too large to read: the status alone
 * still classifies the failure.
 */
export function errorFromAnswer(
  procedure: string,
  status: number,
  headers: ResponseHeaders,
  text: string | undefined,
): ApiError {
  const retryAfterMs = serverWaitMs(headers, Date.now());
  try {
    const parsed = JSON.parse(text ?? "") as {
      code?: unknown;
      message?: unknown;
    };
    if (isConnectCode(parsed.code)) {
      return new ApiError({
        code: parsed.code,
        httpStatus: status,
        procedure,
        message:
          typeof parsed.message === "string"
            ? clip(parsed.message)
            : "(no message)",
        retryAfterMs,
      });
    }
  } catch {
    // Not JSON: fall through.
  }
  const contentType = String(headers["content-type"] ?? "unknown type");
  return new ApiError({
    code: `HTTP_${status}`,
    httpStatus: status,
    procedure,
    message: `unexpected ${contentType} response (${(text ?? "").length} bytes) instead of a Connect error`,
    retryAfterMs,
  });
}

/**
 * A non-200 answer cut off before its announced end (the connection reset or closed): what it
 * said is unknown, so it is a transport failure, retried like one, not the status's verdict.
 */
export function cutErrorAnswer(
  procedure: string,
  status: number,
  headers: ResponseHeaders,
  err: unknown,
): ApiError {
  return new ApiError({
    code: "BODY_CUT",
    httpStatus: status,
    procedure,
    message: `the HTTP ${status} answer was cut off before its end: ${errorMessage(err)}`,
    retryAfterMs: serverWaitMs(headers, Date.now()),
  });
}

/** What the transport mapping needs to know about the client. */
export interface TransportContext {
  origin: string;
  requestTimeoutMs: number;
  bodyIdleTimeoutMs: number;
}

/** A failure without an HTTP answer: a timeout, a cancellation, TLS or the network. */
export function transportError(
  err: unknown,
  procedure: string,
  signal: AbortSignal,
  ctx: TransportContext,
): ApiError {
  const { code, message, hint } = transportFailure(err, signal, ctx);
  return new ApiError(
    { code, httpStatus: 0, procedure, message, ...(hint ? { hint } : {}) },
    { cause: err },
  );
}

function transportFailure(
  err: unknown,
  signal: AbortSignal,
  ctx: TransportContext,
): { code: TransportCode; message: string; hint?: string } {
  if (err instanceof undiciErrors.BodyTimeoutError) {
    return {
      code: "TIMEOUT",
      message: `the response body sent no bytes for ${ctx.bodyIdleTimeoutMs} ms`,
    };
  }
  const timedOut =
    err instanceof undiciErrors.HeadersTimeoutError ||
    (signal.aborted &&
      signal.reason instanceof DOMException &&
      signal.reason.name === "TimeoutError");
  if (timedOut)
    return {
      code: "TIMEOUT",
      message: `no answer within ${ctx.requestTimeoutMs} ms`,
    };
  if (signal.aborted)
    return { code: "ABORTED", message: "the call was cancelled" };
  const detail = errorCode(err) ?? (err as Error).message;
  if (NOT_TLS.test(detail))
    return {
      code: "TLS",
      message: `${ctx.origin} does not speak TLS: it answered the TLS handshake in plain text (${detail})`,
      hint: `the server at ${ctx.origin} is a plain HTTP server: write http:// in SESSIONHOUSE_API_URL, or give the port where the control plane serves HTTPS`,
    };
  if (TLS_ERROR.test(detail))
    return {
      code: "TLS",
      message: `the TLS connection to ${ctx.origin} failed (${detail})`,
    };
  return {
    code: "NETWORK",
    message: `cannot reach ${ctx.origin} (${detail})`,
  };
}

/** A failure while a 200 answer's body was read: a wrong shape, a cut body, or the transport. */
export function bodyError(
  err: unknown,
  procedure: string,
  status: number,
  options: { signal: AbortSignal; context: string | undefined },
  ctx: TransportContext,
): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof JsonShapeError && err.kind === "shape")
    return badAnswer(procedure, status, options.context, err.message);
  if (err instanceof JsonShapeError) {
    return new ApiError(
      {
        code: "BODY_CUT",
        httpStatus: status,
        procedure,
        message: err.message,
      },
      { cause: err },
    );
  }
  const mapped = transportError(err, procedure, options.signal, ctx);
  if (mapped.code === "NETWORK") {
    return new ApiError(
      {
        code: "BODY_CUT",
        httpStatus: status,
        procedure,
        message: "the connection closed in the middle of the response",
      },
      { cause: err },
    );
  }
  return mapped;
}

/** The error code of a transport failure, also when undici wraps the socket's error. */
function errorCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string" && !code.startsWith("UND_ERR_")) return code;
    e = e.cause;
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE_CHARS
    ? `${text.slice(0, MAX_MESSAGE_CHARS)}… (${text.length} chars)`
    : text;
}
