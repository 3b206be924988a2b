// The control plane's Connect-over-HTTP client: one keep-alive pool, a timeout and an
// AbortSignal on every call, paced by pacing.ts (a request-rate ceiling that also slows down
// before the service's own limit bites, and bounded connections), failures mapped and judged by
// errors.ts, and retried with backoff as retry.ts decides. The request timeout covers waiting for
// the answer's headers; a body is then read for as long as its reader takes, and fails only
// when no byte arrives for the body idle timeout, or past the size limit. An answer whose shape
// is wrong (the caller's check) is a BAD_RESPONSE, retried.
import { constants as bufferConstants } from "node:buffer";
import { readFileSync } from "node:fs";
import { setImmediate, setTimeout as sleep } from "node:timers/promises";
import { Pool, type Dispatcher } from "undici";
import { ConfigError } from "../config/index.js";
import type { Logger } from "../util/logger.js";
import {
  ApiError,
  badAnswer,
  bodyError,
  cutErrorAnswer,
  errorFromAnswer,
  tooLarge,
  transportError,
  type TransportContext,
} from "./errors.js";
import { parseExactJson } from "./exact-json.js";
import {
  ArrayMemberSplitter,
  type ElementReader,
  type SplitElement,
} from "./json-stream.js";
import { Pacer, type ResponseHeaders } from "./pacing.js";
import { type RetryBudget, retryWaitMs } from "./retry.js";

/** Longest error body read: a Connect error is small; a proxy's page needs only its length. */
const MAX_ERROR_BODY_BYTES = 2 ** 20;

const DEFAULT_BODY_IDLE_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_PAGE_BYTES = 2 * 2 ** 30;
const DEFAULT_MAX_RECORD_BYTES = 64 * 2 ** 20;

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
  /** A person waits on the command: a connection that cannot be made fails at once (retry.ts). */
  personWaits?: boolean | undefined;
  connections?: number;
  caFile?: string | undefined;
  logger?: Logger | undefined;
  observer?: ApiObserver | undefined;
}

/** Hooks for metrics: every finished attempt and every retry. */
export interface ApiObserver {
  onAttempt?(e: { procedure: string; result: string; ms: number }): void;
  onRetry?(e: { procedure: string; code: string; waitMs: number }): void;
  /** The headers of every answer (any status), with when the request went out and they came. */
  onResponse?(e: {
    procedure: string;
    status: number;
    headers: ResponseHeaders;
    sentAtMs: number;
    receivedAtMs: number;
  }): void;
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

/** One HTTP response body in flight, to be consumed or cancelled. */
interface Exchange {
  status: number;
  headers: ResponseHeaders;
  body: AsyncIterable<Buffer> & { destroy?(err?: Error): unknown };
  /** Gives the connection back to the next request; call once the body is consumed (idempotent). */
  release: () => void;
}

export class ControlPlaneClient {
  readonly #opts: ApiClientOptions;
  readonly #pool: Pool;
  readonly #pathPrefix: string;
  readonly #pacer: Pacer;
  readonly #transport: TransportContext;

  constructor(opts: ApiClientOptions) {
    this.#opts = opts;
    const base = new URL(opts.url);
    this.#pathPrefix = base.pathname.replace(/\/+$/, "");
    const ca = opts.caFile ? readCaFile(opts.caFile) : undefined;
    const connections = opts.connections ?? 4;
    const bodyIdleTimeoutMs =
      opts.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS;
    this.#pacer = new Pacer({
      maxRequestsPerSecond: opts.maxRequestsPerSecond,
      connections,
    });
    this.#transport = {
      origin: base.origin,
      requestTimeoutMs: opts.requestTimeoutMs,
      bodyIdleTimeoutMs,
    };
    this.#pool = new Pool(base.origin, {
      connections,
      keepAliveTimeout: 30_000,
      headersTimeout: opts.requestTimeoutMs,
      // undici does not count time while the reader holds the body back (backpressure).
      bodyTimeout: bodyIdleTimeoutMs,
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
          tooLarge(procedure, size, limit, options.context),
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
          throw tooLarge(
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
      throw tooLarge(procedure, length, limit, context);
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
   * Milliseconds before the next try of a failed attempt (retry.ts decides); throws the final
   * error when there is none. A server's wait holds for the whole client, not only for the
   * request that was told.
   */
  #retryWait(err: unknown, attempt: number, options: CallOptions): number {
    if (options.signal?.aborted) throw err;
    const waitMs = retryWaitMs(err, attempt, this.#opts, options.budget);
    const failure = err as ApiError;
    if (failure.retryAfterMs !== undefined)
      this.#pacer.holdFor(failure.retryAfterMs);
    this.#opts.observer?.onRetry?.({
      procedure: failure.procedure,
      code: failure.code,
      waitMs,
    });
    this.#opts.logger?.warn(
      {
        procedure: failure.procedure,
        code: failure.code,
        attempt: attempt + 1,
        waitMs,
      },
      "api call failed, retrying",
    );
    return waitMs;
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
    const release = await this.#pacer
      .acquire(waitSignal)
      .catch((err: unknown) => {
        throw transportError(err, procedure, waitSignal, this.#transport);
      });
    let started = performance.now();
    let result = "NETWORK";
    let handedOver = false;
    const headersTimeout = new AbortController();
    const signal = outer
      ? AbortSignal.any([outer, headersTimeout.signal])
      : headersTimeout.signal;
    try {
      await this.#pacer.throttle(waitSignal);
      started = performance.now();
      const sentAtMs = Date.now();
      const res = await this.#send(procedure, body, signal, headersTimeout);
      this.#pacer.observe(res.headers);
      this.#opts.observer?.onResponse?.({
        procedure,
        status: res.statusCode,
        headers: res.headers,
        sentAtMs,
        receivedAtMs: Date.now(),
      });
      if (res.statusCode !== 200)
        throw await readErrorAnswer(
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
          : transportError(err, procedure, signal, this.#transport);
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

  #bodyError(
    err: unknown,
    procedure: string,
    status: number,
    options: CallOptions,
  ): ApiError {
    return bodyError(
      err,
      procedure,
      status,
      { signal: options.signal ?? NEVER, context: options.context },
      this.#transport,
    );
  }
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

/** The error a non-200 answer stands for, read from its body (errors.ts maps it). */
async function readErrorAnswer(
  procedure: string,
  status: number,
  headers: ResponseHeaders,
  body: AsyncIterable<Buffer>,
): Promise<ApiError> {
  const bodyTooLarge = new Error("error body too large");
  try {
    const bytes = await readAll(body, MAX_ERROR_BODY_BYTES, () => bodyTooLarge);
    return errorFromAnswer(procedure, status, headers, bytes.toString("utf8"));
  } catch (err) {
    if (err === bodyTooLarge)
      return errorFromAnswer(procedure, status, headers, undefined);
    return cutErrorAnswer(procedure, status, headers, err);
  }
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
