// The control plane's Connect-over-HTTP client: one keep-alive pool, a timeout and an
// AbortSignal on every call, a request-rate ceiling that also slows down before the service's
// own limit bites, and retries with backoff for what is worth retrying (retry.ts).
import { readFileSync } from "node:fs";
import { setImmediate, setTimeout as sleep } from "node:timers/promises";
import { Pool, errors as undiciErrors } from "undici";
import { ConfigError } from "../config/index.js";
import type { Logger } from "../util/logger.js";
import { isConnectCode } from "./connect-codes.js";
import { ApiError } from "./errors.js";
import { ArrayMemberSplitter, JsonShapeError } from "./json-stream.js";
import {
  backoffMs,
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

export interface ApiClientOptions {
  url: string;
  apiKey: string;
  extraHeaders?: Readonly<Record<string, string>>;
  requestTimeoutMs: number;
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
      bodyTimeout: opts.requestTimeoutMs,
      ...(ca ? { connect: { ca } } : {}),
    });
  }

  /** A unary call; returns the parsed JSON response body. */
  async call(
    procedure: string,
    body: unknown,
    options: CallOptions = {},
  ): Promise<unknown> {
    return this.#withRetries(procedure, options, async (signal) => {
      const ex = await this.#exchange(procedure, body, signal);
      let text: string;
      try {
        text = await readAll(ex.body, procedure);
      } finally {
        ex.release();
      }
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new ApiError({
          code: "BAD_RESPONSE",
          httpStatus: ex.status,
          procedure,
          message: `the response is not valid JSON (${text.length} bytes)`,
        });
      }
    });
  }

  /**
   * A unary call whose response holds one large array member: yields the raw text of its
   * elements in batches as the body arrives, and returns the other members. A failure in the
   * middle retries the whole request, so elements may be yielded twice; writes are idempotent.
   */
  async *streamArray(
    procedure: string,
    body: unknown,
    member: string,
    options: CallOptions & { batchSize: number; onRestart?: () => void },
  ): AsyncGenerator<string[], Record<string, unknown>> {
    let attempt = 0;
    for (;;) {
      const signal = this.#signal(options.signal);
      let yielded = false;
      try {
        this.#checkRefused(options);
        const ex = await this.#exchange(procedure, body, signal);
        const splitter = new ArrayMemberSplitter(member);
        let batch: string[] = [];
        try {
          for await (const chunk of ex.body) {
            for (const text of splitter.push(chunk)) {
              batch.push(text);
              if (batch.length >= options.batchSize) {
                yielded = true;
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
        } catch (err) {
          ex.body.destroy?.();
          throw this.#bodyError(err, procedure, ex.status, signal);
        } finally {
          ex.release();
        }
        if (batch.length > 0) yield batch;
        return splitter.others;
      } catch (err) {
        const waitMs = this.#retryWait(err, attempt, options);
        attempt++;
        if (yielded) options.onRestart?.();
        await sleep(waitMs, undefined, { signal: options.signal });
      }
    }
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #withRetries<T>(
    procedure: string,
    options: CallOptions,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    let attempt = 0;
    for (;;) {
      try {
        this.#checkRefused(options);
        return await fn(this.#signal(options.signal));
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

  #signal(outer: AbortSignal | undefined): AbortSignal {
    const timeout = AbortSignal.timeout(this.#opts.requestTimeoutMs);
    return outer ? AbortSignal.any([outer, timeout]) : timeout;
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

  async #exchange(
    procedure: string,
    body: unknown,
    signal: AbortSignal,
  ): Promise<Exchange> {
    const release = await this.#acquire(signal).catch((err: unknown) => {
      throw this.#transportError(err, procedure, signal);
    });
    let started = performance.now();
    let result = "NETWORK";
    let handedOver = false;
    try {
      await this.#throttle(signal);
      started = performance.now();
      const res = await this.#pool.request({
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
      this.#observeRateLimit(res.headers);
      if (res.statusCode === 200) {
        result = "ok";
        handedOver = true;
        // A body its reader abandons still ends (destroyed at the latest by the timeout).
        res.body.once("close", release);
        return { status: 200, headers: res.headers, body: res.body, release };
      }
      const err = await errorFromResponse(
        procedure,
        res.statusCode,
        res.headers,
        res.body,
      );
      result = err.code;
      throw err;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      const mapped = this.#transportError(err, procedure, signal);
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

  #transportError(
    err: unknown,
    procedure: string,
    signal: AbortSignal,
  ): ApiError {
    const timedOut =
      err instanceof undiciErrors.HeadersTimeoutError ||
      err instanceof undiciErrors.BodyTimeoutError ||
      (signal.aborted &&
        signal.reason instanceof DOMException &&
        signal.reason.name === "TimeoutError");
    if (timedOut) {
      return new ApiError(
        {
          code: "TIMEOUT",
          httpStatus: 0,
          procedure,
          message: `no answer within ${this.#opts.requestTimeoutMs} ms`,
        },
        { cause: err },
      );
    }
    if (signal.aborted) {
      return new ApiError(
        {
          code: "ABORTED",
          httpStatus: 0,
          procedure,
          message: "the call was cancelled",
        },
        { cause: err },
      );
    }
    const detail = errorCode(err) ?? (err as Error).message;
    if (TLS_ERROR.test(detail)) {
      return new ApiError(
        {
          code: "TLS",
          httpStatus: 0,
          procedure,
          message: `the TLS connection to ${this.#base.origin} failed (${detail})`,
        },
        { cause: err },
      );
    }
    return new ApiError(
      {
        code: "NETWORK",
        httpStatus: 0,
        procedure,
        message: `cannot reach ${this.#base.origin} (${detail})`,
      },
      { cause: err },
    );
  }

  #bodyError(
    err: unknown,
    procedure: string,
    status: number,
    signal: AbortSignal,
  ): ApiError {
    if (err instanceof ApiError) return err;
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
    const mapped = this.#transportError(err, procedure, signal);
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

async function readAll(
  body: AsyncIterable<Buffer>,
  procedure: string,
): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of body) chunks.push(chunk);
  } catch (err) {
    throw new ApiError(
      {
        code: "BODY_CUT",
        httpStatus: 200,
        procedure,
        message: "the connection closed in the middle of the response",
      },
      { cause: err },
    );
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A Connect error JSON body, or a non-JSON body (a proxy's page) turned into HTTP_<status>. */
async function errorFromResponse(
  procedure: string,
  status: number,
  headers: Headers,
  body: AsyncIterable<Buffer>,
): Promise<ApiError> {
  let text = "";
  try {
    text = await readAll(body, procedure);
  } catch {
    // The status alone still classifies the failure.
  }
  const retryAfterMs = serverWaitMs(headers, Date.now());
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
