// The control plane's Connect-over-HTTP client: one keep-alive pool, a timeout and an
// AbortSignal on every call, a request-rate ceiling that also slows down before the service's
// own limit bites, and retries with backoff for what is worth retrying (retry.ts). The request
// timeout covers waiting for the answer's headers; a body is then read for as long as its
// reader takes, and fails only when no byte arrives for the body idle timeout, or past the size
// limit. An answer whose shape is wrong (the caller's check) is a BAD_RESPONSE, retried.
import { constants as bufferConstants } from "node:buffer";
import { readFileSync } from "node:fs";
import { setImmediate, setTimeout as sleep } from "node:timers/promises";
import { Pool, errors as undiciErrors, type Dispatcher } from "undici";
import { ConfigError } from "../config/index.js";
import type { Logger } from "../util/logger.js";
import { isConnectCode } from "./connect-codes.js";
import { ApiError, type TransportCode } from "./errors.js";
import {
  ArrayMemberSplitter,
  type ElementReader,
  JsonShapeError,
  parseExactJson,
  type SplitElement,
} from "./json-stream.js";
import { backoffMs } from "../util/backoff.js";
import { errorMessage } from "../util/errors.js";
import {
  isRetryable,
  refusesEveryCall,
  resetWaitMs,
  RetryBudget,
  serverWaitMs,
} from "./retry.js";

/**
 * Longest wait a Retry-After / X-Ratelimit-Reset may impose on one retry. Beyond it the run
 * fails with the service's wait in the message: the next scheduled run picks up from the
 * checkpoint, instead of a process hanging for hours on one header.
 */
export const MAX_SERVER_WAIT_MS = 10 * 60_000;

/** Node/OpenSSL error codes of a certificate the client does not trust: no retry fixes them. */
const TLS_ERROR = /CERT|SELF_SIGNED|ERR_TLS|ERR_SSL|UNABLE_TO_(GET|VERIFY)/;

/** Longest service message kept in an error: a proxy may send a whole page as the message. */
const MAX_MESSAGE_CHARS = 500;

/** Longest error body read: a Connect error is small; a proxy's page needs only its length. */
const MAX_ERROR_BODY_BYTES = 2 ** 20;

export const DEFAULT_BODY_IDLE_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_PAGE_BYTES = 2 * 2 ** 30;
export const DEFAULT_MAX_RECORD_BYTES = 64 * 2 ** 20;

/** A signal that never aborts, for calls made without one. */
const NEVER = new AbortController().signal;

export interface ApiClientOptions {
  url: string;
  apiKey: string;
  extraHeaders?: Readonly<Record<string, string>>;
  /** Longest wait for an answer's headers (connection, request and the server's work). */
  requestTimeoutMs: number;
  /** A body that sends no byte for this long fails the attempt, which is retried (default 60s). */
  bodyIdleTimeoutMs?: number | undefined;
  /** Largest answer read (default 2 GiB); past it the call fails with RESPONSE_TOO_LARGE. */
  maxPageBytes?: number | undefined;
  /** Largest element of a streamed list (default 64 MiB); past it the element is handed over broken. */
  maxRecordBytes?: number | undefined;
  maxRequestsPerSecond: number;
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  connections?: number;
  caFile?: string | undefined;
  logger?: Logger | undefined;
  observer?: ApiObserver | undefined;
}

/** Hooks for metrics: every finished attempt and every retry. */
export interface ApiObserver {
  onAttempt?(e: { procedure: string; result: string; ms: number }): void;
  onRetry?(e: { procedure: string; code: string; waitMs: number }): void;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Shared by every call of one run; a run stops retrying when it is spent. */
  budget?: RetryBudget | undefined;
  /** What the call is about (a window, a session), named in the message of a bad answer. */
  context?: string | undefined;
}

export interface UnaryOptions extends CallOptions {
  /** What is wrong with a parsed answer, or undefined; a problem is a BAD_RESPONSE. */
  check?: ((answer: unknown) => string | undefined) | undefined;
  /** Reads integer literals longer than 15 digits as strings, exact (parseExactJson). */
  exactIntegers?: boolean | undefined;
}

/** How a streamed answer ended: its other members and what its array held. */
export interface StreamEnd {
  others: Record<string, unknown>;
  /** Elements of the array member. */
  elements: number;
  /** Whether the array member was present. */
  sawMember: boolean;
}

export interface StreamOptions<T = never> extends CallOptions {
  batchSize: number;
  onRestart?: () => void;
  /** Reads each element in the pass that finds its end (see ElementReader). */
  reader?: ElementReader<T> | undefined;
  /**
   * What is wrong with the answer once its body ended, or undefined; a problem is a
   * BAD_RESPONSE, thrown before the last batch is handed over.
   */
  check?: ((end: StreamEnd) => string | undefined) | undefined;
}

type Headers = Record<string, string | string[] | undefined>;

/** One HTTP response body in flight, to be consumed or cancelled. */
interface Exchange {
  status: number;
  headers: Headers;
  body: AsyncIterable<Buffer> & { destroy?(err?: Error): unknown };
  /** Gives the connection back to the next request; call once the body is consumed (idempotent). */
  release: () => void;
}

export class ControlPlaneClient {
  readonly #opts: ApiClientOptions;
  readonly #pool: Pool;
  readonly #base: URL;
  readonly #pathPrefix: string;
  /** Earliest instant of the next request, on the monotonic clock (performance.now()). */
  #nextSlotMs = 0;
  /** Monotonic instants the latest requests were sent at, oldest first (see #throttle). */
  readonly #sent: number[] = [];
  readonly #connections: number;
  #inFlight = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(opts: ApiClientOptions) {
    this.#opts = opts;
    this.#base = new URL(opts.url);
    this.#pathPrefix = this.#base.pathname.replace(/\/+$/, "");
    const ca = opts.caFile ? readCaFile(opts.caFile) : undefined;
    this.#connections = opts.connections ?? 4;
    this.#pool = new Pool(this.#base.origin, {
      connections: this.#connections,
      keepAliveTimeout: 30_000,
      headersTimeout: opts.requestTimeoutMs,
      // undici does not count time while the reader holds the body back (backpressure).
      bodyTimeout: opts.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS,
      ...(ca ? { connect: { ca } } : {}),
    });
  }

  /** A unary call; returns the parsed JSON response body, checked by `options.check`. */
  async call(
    procedure: string,
    body: unknown,
    options: UnaryOptions = {},
  ): Promise<unknown> {
    return this.#withRetries(procedure, options, async () => {
      const ex = await this.#exchange(procedure, body, options.signal);
      // A string cannot be longer than this, whatever the page limit says.
      const limit = Math.min(
        this.#maxPageBytes,
        bufferConstants.MAX_STRING_LENGTH,
      );
      let bytes: Buffer;
      try {
        this.#checkLength(ex, procedure, limit, options.context);
        bytes = await readAll(ex.body, limit, (size) =>
          this.#tooLarge(procedure, size, limit, options.context),
        ).catch((err: unknown) => {
          throw this.#bodyError(err, procedure, ex.status, options);
        });
      } finally {
        ex.release();
      }
      const text = bytes.toString("utf8");
      let answer: unknown;
      try {
        answer = options.exactIntegers
          ? parseExactJson(text)
          : (JSON.parse(text) as unknown);
      } catch {
        throw badAnswer(
          procedure,
          ex.status,
          options.context,
          `the response is not valid JSON (${text.length} bytes)`,
        );
      }
      const problem = options.check?.(answer);
      if (problem !== undefined)
        throw badAnswer(procedure, ex.status, options.context, problem);
      return answer;
    });
  }

  /**
   * A unary call whose response holds one large array member: yields the raw text of its
   * elements in batches as the body arrives, and returns the other members. A failure in the
   * middle retries the whole request, so elements may be yielded twice; writes are idempotent.
   */
  async *streamArray<T = never>(
    procedure: string,
    body: unknown,
    member: string,
    options: StreamOptions<T>,
  ): AsyncGenerator<SplitElement<T>[], StreamEnd> {
    let attempt = 0;
    for (;;) {
      const progress = { yielded: false };
      try {
        this.#checkRefused(options);
        return yield* this.#streamOnce(
          procedure,
          body,
          member,
          options,
          progress,
        );
      } catch (err) {
        const waitMs = this.#retryWait(err, attempt, options);
        attempt++;
        if (progress.yielded) options.onRestart?.();
        await sleep(waitMs, undefined, { signal: options.signal });
      }
    }
  }

  /** One attempt of streamArray; `progress.yielded` tells whether a batch was handed over. */
  async *#streamOnce<T>(
    procedure: string,
    body: unknown,
    member: string,
    options: StreamOptions<T>,
    progress: { yielded: boolean },
  ): AsyncGenerator<SplitElement<T>[], StreamEnd> {
    const ex = await this.#exchange(procedure, body, options.signal);
    const limit = this.#maxPageBytes;
    const splitter = new ArrayMemberSplitter<T>(
      member,
      this.#opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES,
      options.reader,
    );
    let batch: SplitElement<T>[] = [];
    let elements = 0;
    let end: StreamEnd;
    try {
      this.#checkLength(ex, procedure, limit, options.context);
      for await (const chunk of ex.body) {
        if (splitter.bytes + chunk.length > limit)
          throw this.#tooLarge(
            procedure,
            splitter.bytes + chunk.length,
            limit,
            options.context,
          );
        for (const element of splitter.push(chunk)) {
          elements++;
          batch.push(element);
          if (batch.length >= options.batchSize) {
            progress.yielded = true;
            yield batch;
            batch = [];
            // Bytes already received reach this loop through promise jobs only, so
            // without this the event loop would not turn until the socket ran dry: no
            // insert started or finished meanwhile, no /healthz answered.
            await setImmediate();
          }
        }
      }
      splitter.end();
      end = {
        others: splitter.others,
        elements,
        sawMember: splitter.sawMember,
      };
      const problem = options.check?.(end);
      if (problem !== undefined)
        throw badAnswer(procedure, ex.status, options.context, problem);
    } catch (err) {
      ex.body.destroy?.();
      throw this.#bodyError(err, procedure, ex.status, options);
    } finally {
      ex.release();
    }
    if (batch.length > 0) yield batch;
    return end;
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  get #maxPageBytes(): number {
    return this.#opts.maxPageBytes ?? DEFAULT_MAX_PAGE_BYTES;
  }

  /** Fails early when the answer announces a length past the limit. */
  #checkLength(
    ex: Exchange,
    procedure: string,
    limit: number,
    context: string | undefined,
  ): void {
    const length = Number(ex.headers["content-length"]);
    if (Number.isFinite(length) && length > limit)
      throw this.#tooLarge(procedure, length, limit, context);
  }

  #tooLarge(
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

  async #withRetries<T>(
    procedure: string,
    options: CallOptions,
    fn: () => Promise<T>,
  ): Promise<T> {
    let attempt = 0;
    for (;;) {
      try {
        this.#checkRefused(options);
        return await fn();
      } catch (err) {
        const waitMs = this.#retryWait(err, attempt, options);
        attempt++;
        await sleep(waitMs, undefined, { signal: options.signal });
      }
    }
  }

  /** A run whose key was refused asks no more: every later call fails with that refusal. */
  #checkRefused(options: CallOptions): void {
    const refusal = options.budget?.refusal;
    if (refusal) throw refusal;
  }

  /**
   * Milliseconds before the next try of a failed attempt; throws the final error when there is
   * none: not retryable, the per-request limit reached, or the run's budget spent.
   */
  #retryWait(err: unknown, attempt: number, options: CallOptions): number {
    if (options.signal?.aborted || !(err instanceof ApiError)) throw err;
    if (refusesEveryCall(err)) {
      options.budget?.refuse(err);
      throw err;
    }
    if (!isRetryable(err)) throw err;
    const tries = `${attempt + 1} ${attempt === 0 ? "try" : "tries"}`;
    if (attempt >= this.#opts.maxRetries) {
      throw err.gaveUp(
        `gave up after ${tries}: at most ${this.#opts.maxRetries} retries per request`,
      );
    }
    const serverWait = err.retryAfterMs;
    if (serverWait !== undefined && serverWait > MAX_SERVER_WAIT_MS) {
      throw err.gaveUp(
        `the service asked to wait ${Math.ceil(serverWait / 1000)} s before another try, more than ${MAX_SERVER_WAIT_MS / 1000} s`,
        "the API asks the exporter to pause for long: the next run resumes from the checkpoint; lower SESSIONHOUSE_MAX_RPS if this recurs",
      );
    }
    if (options.budget && !options.budget.take()) {
      throw err.gaveUp(
        `gave up after ${tries}: the run's retry budget of ${options.budget.total} retries is spent`,
        "the API failed too often in this run; the next run resumes from the checkpoint. If it keeps happening, check the API's health or lower SESSIONHOUSE_MAX_RPS",
      );
    }
    const waitMs = backoffMs(
      attempt,
      { baseMs: this.#opts.retryBaseMs, maxMs: this.#opts.retryMaxMs },
      serverWait,
    );
    // A server's wait holds for the whole client, not only for the request that was told.
    if (serverWait !== undefined)
      this.#holdUntil(performance.now() + serverWait);
    this.#opts.observer?.onRetry?.({
      procedure: err.procedure,
      code: err.code,
      waitMs,
    });
    this.#opts.logger?.warn(
      {
        procedure: err.procedure,
        code: err.code,
        attempt: attempt + 1,
        waitMs,
      },
      "api call failed, retrying",
    );
    return waitMs;
  }

  #holdUntil(monotonicMs: number): void {
    this.#nextSlotMs = Math.max(this.#nextSlotMs, monotonicMs);
  }

  /**
   * Waits for a request slot: slots are 1000 / maxRequestsPerSecond ms apart on the monotonic
   * clock, so requests go out evenly; the service's own limits (observeRateLimit, Retry-After)
   * push the next slot further out. The ceiling itself is kept by the log of actual send times:
   * timers fire late on a busy event loop, and late timers fire together, so no more than
   * floor(maxRequestsPerSecond) requests (at least one) leave within any second.
   */
  async #throttle(signal: AbortSignal): Promise<void> {
    const rps = this.#opts.maxRequestsPerSecond;
    const now = performance.now();
    const slot = Math.max(now, this.#nextSlotMs);
    this.#nextSlotMs = slot + 1000 / rps;
    if (slot > now) await sleep(Math.ceil(slot - now), undefined, { signal });
    const perWindow = Math.max(1, Math.floor(rps));
    const windowMs = Math.max(1000, 1000 / rps);
    for (;;) {
      const t = performance.now();
      const oldest =
        this.#sent.length >= perWindow
          ? this.#sent[this.#sent.length - perWindow]
          : undefined;
      if (oldest === undefined || t - oldest >= windowMs) {
        this.#sent.push(t);
        if (this.#sent.length > perWindow)
          this.#sent.splice(0, this.#sent.length - perWindow);
        return;
      }
      await sleep(Math.ceil(windowMs - (t - oldest)), undefined, { signal });
    }
  }

  /**
   * Waits for a free connection. A request is timed by the throttle only once it can go on the
   * wire: one queued inside the pool would leave later, together with others, above the ceiling.
   */
  async #acquire(signal: AbortSignal): Promise<() => void> {
    while (this.#inFlight >= this.#connections) {
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.#waiting.indexOf(wake);
          if (i >= 0) this.#waiting.splice(i, 1);
          reject(signal.reason as Error);
        };
        this.#waiting.push(wake);
        signal.addEventListener("abort", onAbort, { once: true });
      });
    }
    this.#inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight--;
      this.#waiting.shift()?.();
    };
  }

  /** Reads X-Ratelimit-* and spreads what is left of the window before it runs out. */
  #observeRateLimit(headers: Headers): void {
    const remaining = Number(headers["x-ratelimit-remaining"]);
    const limit = Number(headers["x-ratelimit-limit"]);
    const reset = headers["x-ratelimit-reset"];
    if (
      !Number.isFinite(remaining) ||
      !Number.isFinite(limit) ||
      limit <= 0 ||
      typeof reset !== "string"
    )
      return;
    if (remaining > limit * 0.1) return;
    const untilResetMs = resetWaitMs(reset, Date.now());
    if (untilResetMs === undefined) return;
    // Spread what is left evenly over the rest of the window: slower, never refused.
    const spacing = remaining <= 0 ? untilResetMs : untilResetMs / remaining;
    this.#holdUntil(performance.now() + Math.min(spacing, MAX_SERVER_WAIT_MS));
  }

  /**
   * Sends one request and waits for its headers, at most requestTimeoutMs from the moment it
   * goes on the wire; the body that follows is bounded by the outer signal and the body idle
   * timeout only, so a reader that takes its time on each part of it is not cut off.
   */
  async #exchange(
    procedure: string,
    body: unknown,
    outer: AbortSignal | undefined,
  ): Promise<Exchange> {
    const waitSignal = outer ?? NEVER;
    const release = await this.#acquire(waitSignal).catch((err: unknown) => {
      throw this.#transportError(err, procedure, waitSignal);
    });
    let started = performance.now();
    let result = "NETWORK";
    let handedOver = false;
    const headersTimeout = new AbortController();
    const signal = outer
      ? AbortSignal.any([outer, headersTimeout.signal])
      : headersTimeout.signal;
    try {
      await this.#throttle(waitSignal);
      started = performance.now();
      const res = await this.#send(procedure, body, signal, headersTimeout);
      this.#observeRateLimit(res.headers);
      if (res.statusCode !== 200)
        throw await errorFromResponse(
          procedure,
          res.statusCode,
          res.headers,
          res.body,
        );
      result = "ok";
      handedOver = true;
      // The slot comes back when the body closes: read to its end, or destroyed when its
      // reader stops early (leaving a for-await over a stream destroys it) or fails.
      res.body.once("close", release);
      return { status: 200, headers: res.headers, body: res.body, release };
    } catch (err) {
      const mapped =
        err instanceof ApiError
          ? err
          : this.#transportError(err, procedure, signal);
      result = mapped.code;
      throw mapped;
    } finally {
      if (!handedOver) release();
      this.#opts.observer?.onAttempt?.({
        procedure,
        result,
        ms: performance.now() - started,
      });
    }
  }

  /** POSTs one call; `headersTimeout` is aborted when no headers came within requestTimeoutMs. */
  async #send(
    procedure: string,
    body: unknown,
    signal: AbortSignal,
    headersTimeout: AbortController,
  ): Promise<Dispatcher.ResponseData> {
    const timer = setTimeout(() => {
      headersTimeout.abort(
        new DOMException("no response headers in time", "TimeoutError"),
      );
    }, this.#opts.requestTimeoutMs);
    try {
      return await this.#pool.request({
        method: "POST",
        path: `${this.#pathPrefix}/core.v1.${procedure}`,
        headers: {
          ...this.#opts.extraHeaders,
          "content-type": "application/json",
          accept: "application/json",
          "x-api-key": this.#opts.apiKey,
        },
        body: JSON.stringify(body),
        signal,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  #transportError(
    err: unknown,
    procedure: string,
    signal: AbortSignal,
  ): ApiError {
    const { code, message } = this.#transportFailure(err, signal);
    return new ApiError(
      { code, httpStatus: 0, procedure, message },
      { cause: err },
    );
  }

  /** What a failure without an HTTP answer was: a timeout, a cancellation, TLS or the network. */
  #transportFailure(
    err: unknown,
    signal: AbortSignal,
  ): { code: TransportCode; message: string } {
    if (err instanceof undiciErrors.BodyTimeoutError) {
      const idleMs =
        this.#opts.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS;
      return {
        code: "TIMEOUT",
        message: `the response body sent no bytes for ${idleMs} ms`,
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
        message: `no answer within ${this.#opts.requestTimeoutMs} ms`,
      };
    if (signal.aborted)
      return { code: "ABORTED", message: "the call was cancelled" };
    const detail = errorCode(err) ?? (err as Error).message;
    const origin = this.#base.origin;
    if (TLS_ERROR.test(detail))
      return {
        code: "TLS",
        message: `the TLS connection to ${origin} failed (${detail})`,
      };
    return { code: "NETWORK", message: `cannot reach ${origin} (${detail})` };
  }

  #bodyError(
    err: unknown,
    procedure: string,
    status: number,
    options: CallOptions,
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
    const mapped = this.#transportError(
      err,
      procedure,
      options.signal ?? NEVER,
    );
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
}

/** A BAD_RESPONSE: the answer is not what the operation returns. */
function badAnswer(
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

/** The whole body, failing with `tooLarge(size)` past `limit` bytes. */
async function readAll(
  body: AsyncIterable<Buffer>,
  limit: number,
  tooLarge: (size: number) => Error,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) throw tooLarge(size);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A Connect error JSON body, or a non-JSON body (a proxy's page) turned into HTTP_<status>. */
async function errorFromResponse(
  procedure: string,
  status: number,
  headers: Headers,
  body: AsyncIterable<Buffer>,
): Promise<ApiError> {
  let text = "";
  const tooLarge = new Error("error body too large");
  const retryAfterMs = serverWaitMs(headers, Date.now());
  try {
    text = (await readAll(body, MAX_ERROR_BODY_BYTES, () => tooLarge)).toString(
      "utf8",
    );
  } catch (err) {
    // Too large: the status alone still classifies the failure. Cut off (the connection
    // reset or closed before the announced length): what it said is unknown, so it is a
    // transport failure, retried like one, not the status's verdict.
    if (err !== tooLarge)
      return new ApiError({
        code: "BODY_CUT",
        httpStatus: status,
        procedure,
        message: `the HTTP ${status} answer was cut off before its end: ${errorMessage(err)}`,
        retryAfterMs,
      });
  }
  try {
    const parsed = JSON.parse(text) as { code?: unknown; message?: unknown };
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
    message: `unexpected ${contentType} response (${text.length} bytes) instead of a Connect error`,
    retryAfterMs,
  });
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

function readCaFile(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError([
      `SESSIONHOUSE_API_CA_FILE (api.caFile) ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    ]);
  }
}

export { RetryBudget };
