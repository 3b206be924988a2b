// The simulator's HTTP server: Connect unary over HTTP/1.1 (POST + JSON), API-key auth,
// rate-limit headers on every response, fault injection, and the session routes. Other parts
// of the simulator (log aggregations) plug in through addRoute.

import {
  createListLogAggregationsHandler,
  parseListLogAggregationsRequest,
  type LogsHandlerOptions,
} from "./logs/handler.js";
import { createHash, timingSafeEqual } from "node:crypto";
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { SimClock } from "./clock.js";
import { HTTP_STATUS_OF_CODE, type ConnectCode } from "../api/connect-codes.js";
import { SimConnectError, truncateForMessage } from "./connect.js";
import {
  FaultInjector,
  isBrokenRecordKind,
  type BrokenRecord,
  type BrokenWindow,
  type FaultedRecord,
  type FaultedSession,
  type FaultOptions,
  type RequestFaults,
} from "./faults.js";
import {
  GET_SESSION_PATH,
  LIST_SESSIONS_PATH,
  buildGetSession,
  buildSessionsPage,
  parseListSessionsRequest,
  type CountMeans,
  type ListSessionsRequest,
  type PageContext,
  type StartCorrection,
  type PageFaults,
} from "./list-sessions.js";
import type { OrgSize } from "./org.js";
import {
  createSessionGenerator,
  statusAt,
  type SessionGenerator,
} from "./sessions.js";
import {
  brokenWindowAnswer,
  withoutAggregations,
  withStringCounts,
} from "./wire-faults.js";
import { ReplayedSessions } from "./replay.js";
import { DAY_MS } from "./time.js";
import { DEFAULT_BRAND_MEMBER, wireEncoder, type WireEncoder } from "./wire.js";
import { ConcurrencyGate, sendPaced, type LatencyOptions } from "./latency.js";
import { Directory } from "./directory.js";
import { directoryRoutes } from "./directory-routes.js";
import { otherObjectRequest, type OtherObject } from "./other-object.js";
import {
  Mutator,
  sessionIdsIn,
  type AggregationAnswer,
  type MutationKind,
  type MutationOptions,
  type MutationStream,
  type ServedRecord,
} from "./mutations.js";

export { GET_SESSION_PATH, LIST_SESSIONS_PATH } from "./list-sessions.js";
export const LIST_LOG_AGGREGATIONS_PATH =
  "/core.v1.LogsService/ListLogAggregations";

export interface RouteContext {
  /** The simulator clock's now at the time of the request (epoch ms). */
  nowMs: number;
  generator: SessionGenerator;
  seed: number;
}

/** Returns the response message (serialized with JSON.stringify, or sent as is when it is a
 * RawJson); throws SimConnectError for a Connect error. */
// `unknown` already covers a Promise of the message: handlers may be sync or async.
export type RouteHandler = (
  body: Record<string, unknown>,
  ctx: RouteContext,
) => unknown;

/** A response body that is already JSON bytes (skips JSON.stringify for large messages). */
export class RawJson {
  constructor(readonly bytes: Buffer) {}
  static of(text: string): RawJson {
    return new RawJson(Buffer.from(text, "utf8"));
  }
}

interface SimLogEntry {
  level: "debug" | "info" | "warn" | "error";
  msg: string;
  [field: string]: unknown;
}
type SimLogger = (entry: SimLogEntry) => void;

export interface SimulatorOptions {
  /** 0 (default) = a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 1. */
  seed?: number;
  apiKey: string;
  /** Default: the real clock. */
  clock?: SimClock;
  orgSize?: OrgSize;
  sessionsPerDay?: number;
  /**
   * Once a day one person reaches a dozen resources within ten minutes (a discovery sweep, the
   * behaviour the `many-resources-short-time` detection looks for); default off.
   */
  discoverySweeps?: boolean;
  /**
   * Client addresses of an intruder: once a day a session of a human user comes from each (the
   * behaviour the `equation-group-c2` detection looks for, with its addresses); default none.
   */
  intruderAddresses?: readonly string[];
  /** Days of history before today's UTC midnight (at start-up); default 90. */
  historyDays?: number;
  /** Wire name of the session user's `service` member; default "formal". */
  brandMember?: string;
  /** Fixed-window limit; default 6000 requests per 60 s. */
  rateLimit?: { limit: number; windowMs: number };
  faults?: FaultOptions;
  /** A remote service's pace: time to first byte, body rate, requests answered at once. */
  latency?: LatencyOptions;
  /**
   * Bench mode: serialized ListSessionsV2 pages are cached by (filter, cursor, limit, window)
   * and the next page is built in the background while the client reads the current one, so
   * the simulator is never the bottleneck of a throughput measurement. Statuses in a cached
   * page are those of when it was built; use a fixed clock or closed windows for stable keys.
   */
  benchPages?: boolean;
  /** Byte budget of the bench page cache; default 512 MiB. */
  benchCacheBytes?: number;
  logger?: SimLogger;
  /** ListLogAggregations options (top-N size); false leaves the route out. */
  logAggregations?: LogsHandlerOptions | false;
  /** False leaves out the directory's read operations (users, devices, native users, …). */
  directory?: false;
  /**
   * What `listMetadata.count` holds on ListSessionsV2 and directory list pages: the records of
   * the page ("page", the default) or of the whole listing ("total"); which one the real service
   * means is not known (docs/control-plane-wire.md, "Pagination").
   */
  countMeans?: CountMeans;
  /**
   * Mutation mode (mutations.ts): answers of every read operation that contradict one another
   * read after read. Off by default: without it every answer is as the generators build it.
   */
  mutations?: MutationOptions;
  /**
   * Replay: a JSON Lines file of session records (one raw API record a line) that
   * ListSessionsV2 and GetSession serve, each exactly as given, instead of the generated
   * sessions (replay.ts). Paging, filters and request faults are as usual; page and record
   * faults are not applied to replayed records.
   */
  replaySessions?: string;
}

interface SimulatorStats {
  requests: number;
  /** By method name (last path segment): "ListSessionsV2", "GetSession", … */
  byMethod: Record<string, number>;
  /**
   * Injected faults by kind, one counter per kind switched on: each response fault, page fault
   * and answer fault met, each broken record served (badRecord, badUtf8, hugeRecord, badDates),
   * each not_found of a vanished session, each time a late session was left out of a page or
   * answered not_found, each broken answer of a poisoned window.
   */
  faults: Record<string, number>;
}

export interface Simulator {
  /** http://host:port, without trailing slash. */
  readonly url: string;
  readonly port: number;
  readonly seed: number;
  readonly brandMember: string;
  readonly clock: SimClock;
  readonly generator: SessionGenerator;
  /** Users, devices, native users, links, inventory, suspensions and clouds of the org. */
  readonly directory: Directory;
  stats(): SimulatorStats;
  /** Every classic broken record (badRecord) served so far, one per session id, as last served. */
  brokenRecords(): BrokenRecord[];
  /** Every record broken on purpose served so far, whatever its fault, with the exact bytes:
   *  one entry per distinct version served (the same record served again is one entry). */
  faultedRecords(): FaultedRecord[];
  /**
   * Sessions starting in [fromMs, toMs) (and by the clock's now) with a session fault: the late
   * ones, and the vanished ones that are open now (GetSession answers not_found for them).
   */
  faultedSessions(fromMs: number, toMs: number): FaultedSession[];
  /** Every poisoned aggregation window answered so far. */
  brokenWindows(): BrokenWindow[];
  /**
   * Every Get answered with another object so far (the otherObject fault), one per operation
   * and id asked for, as last answered.
   */
  otherObjects(): OtherObject[];
  /** Whether ListLogAggregations of this query, grouping and window start is poisoned. */
  isBrokenWindow(
    query: string,
    groupBy: readonly string[],
    startMs: number,
  ): boolean;
  /**
   * From now on the service states that session `id` started at `startMs` (its duration kept):
   * in ListSessionsV2 (where it keeps its place) and GetSession, or only in GetSession with
   * `getSessionOnly`. A correction of the start time, or the two operations disagreeing.
   */
  correctStartTime(
    id: string,
    startMs: number,
    options?: { getSessionOnly?: boolean },
  ): void;
  /** Registers a Connect route, e.g. "/core.v1.LogsService/ListLogAggregations". */
  addRoute(path: string, handler: RouteHandler): void;
  close(): Promise<void>;

  // Ground truth (not over HTTP): what the simulator holds, for tests that judge a sync.

  /**
   * The ids a complete, faithful read of a directory stream returns at `atMs` (default: now),
   * named as the exporter's tables name them (`userId/deviceId` for a device, the column id
   * for inventory; inventory columns marked for deletion are not held). In mutation mode the
   * vanished objects and revoked suspensions are not held, as drawn with the rates in force
   * now: a test that changes rates takes what was held at a read when it reads.
   */
  heldIds(
    stream: Exclude<MutationStream, "sessions">,
    atMs?: number,
  ): Set<string>;
  /** Ids of the sessions starting in [fromMs, toMs) that exist by now. */
  sessionIdsIn(fromMs: number, toMs: number): Set<string>;
  /**
   * Mutation mode: each id of `stream` served since the last clearServed, and whether it was
   * served readable, broken, or both. Empty when the mode is off.
   */
  servedRecords(stream: MutationStream): ReadonlyMap<string, ServedRecord>;
  clearServed(): void;
  /** Mutation mode: the last ListLogAggregations answer per window, and its mutation. */
  aggregationAnswers(): AggregationAnswer[];
  /** Mutation mode: switches a mutation on or off (rate 0) from the next request on. */
  setMutationRate(kind: MutationKind, rate: number): void;
}

const MAX_BODY_BYTES = 1 << 20;

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

function errorReply(
  code: ConnectCode,
  message: string,
  status = HTTP_STATUS_OF_CODE[code],
): Reply {
  return {
    status,
    headers: { "Content-Type": "application/json" },
    body: Buffer.from(JSON.stringify({ code, message })),
  };
}

function jsonReply(body: Buffer): Reply {
  return { status: 200, headers: { "Content-Type": "application/json" }, body };
}

class RateLimiter {
  private windowStart = 0;
  private used = 0;
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {
    if (!(Number.isInteger(limit) && limit > 0 && windowMs > 0)) {
      throw new RangeError(
        "rateLimit: limit must be a positive integer and windowMs > 0",
      );
    }
  }

  private roll(): void {
    // Real time, not the simulator clock: the limit protects the process from request rates,
    // and clients sleep on real time until X-Ratelimit-Reset.
    const start = Math.floor(Date.now() / this.windowMs) * this.windowMs;
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.used = 0;
    }
  }

  /** Counts one request; false when over the limit. */
  take(): boolean {
    this.roll();
    if (this.used >= this.limit) return false;
    this.used++;
    return true;
  }

  headers(exhausted = false): Record<string, string> {
    this.roll();
    return {
      "X-Ratelimit-Limit": String(this.limit),
      "X-Ratelimit-Remaining": String(
        exhausted ? 0 : Math.max(0, this.limit - this.used),
      ),
      "X-Ratelimit-Reset": String(
        Math.ceil((this.windowStart + this.windowMs) / 1000),
      ),
    };
  }
}

function readBody(req: IncomingMessage): Promise<Buffer | "too-large"> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on("end", () =>
      resolve(tooLarge ? "too-large" : Buffer.concat(chunks)),
    );
    req.on("error", reject);
  });
}

function keyDigest(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

const BAD_GATEWAY_HTML = Buffer.from(
  "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
);

class BenchCache {
  private readonly pages = new Map<string, Buffer>();
  private bytes = 0;
  constructor(private readonly maxBytes: number) {}

  get(key: string): Buffer | undefined {
    const hit = this.pages.get(key);
    if (hit) {
      this.pages.delete(key);
      this.pages.set(key, hit);
    }
    return hit;
  }

  has(key: string): boolean {
    return this.pages.has(key);
  }

  set(key: string, body: Buffer): void {
    if (body.length > this.maxBytes || this.pages.has(key)) return;
    // A copy: the page buffer may be a view on a larger sink allocation.
    const copy = Buffer.from(body);
    this.pages.set(key, copy);
    this.bytes += copy.length;
    for (const [k, v] of this.pages) {
      if (this.bytes <= this.maxBytes) break;
      this.pages.delete(k);
      this.bytes -= v.length;
    }
  }
}

class SimulatorServer implements Simulator {
  url = "";
  port = 0;
  readonly seed: number;
  readonly brandMember: string;
  readonly clock: SimClock;
  readonly generator: SessionGenerator;
  readonly directory: Directory;
  private readonly encoder: WireEncoder;
  private readonly apiKeyDigest: Buffer;
  private readonly limiter: RateLimiter;
  private readonly faults: FaultInjector;
  private readonly routes = new Map<string, RouteHandler>();
  private readonly server = createServer(
    (req, res) => void this.handle(req, res),
  );
  private readonly closing = new AbortController();
  private readonly latency: LatencyOptions | undefined;
  private readonly latencyGate: ConcurrencyGate;
  private readonly bench: BenchCache | undefined;
  /** The oracle of what the simulator holds; it changes answers only in mutation mode. */
  private readonly mutator: Mutator;
  private readonly mutating: boolean;
  private readonly broken = new Map<string, BrokenRecord>();
  private readonly faulted = new Map<string, FaultedRecord>();
  private readonly poisoned = new Map<string, BrokenWindow>();
  private readonly corrections = new Map<string, StartCorrection>();
  private readonly others = new Map<string, OtherObject>();
  private readonly counters: SimulatorStats = {
    requests: 0,
    byMethod: {},
    faults: {},
  };
  private readonly builtinListSessions: RouteHandler = (body, ctx) =>
    this.listSessions(body, ctx);

  constructor(private readonly o: SimulatorOptions) {
    if (typeof o.apiKey !== "string" || o.apiKey === "")
      throw new RangeError("apiKey must be a non-empty string");
    this.seed = o.seed ?? 1;
    this.brandMember = o.brandMember ?? DEFAULT_BRAND_MEMBER;
    this.clock = o.clock ?? SimClock.real();
    const historyDays = o.historyDays ?? 90;
    if (!(historyDays >= 0))
      throw new RangeError(`historyDays must be ≥ 0, got ${historyDays}`);
    const today = Math.floor(this.clock.now() / DAY_MS) * DAY_MS;
    this.generator = createSessionGenerator({
      seed: this.seed,
      historyStartMs: today - Math.floor(historyDays) * DAY_MS,
      ...(o.orgSize === undefined ? {} : { orgSize: o.orgSize }),
      ...(o.sessionsPerDay === undefined
        ? {}
        : { sessionsPerDay: o.sessionsPerDay }),
      ...(o.discoverySweeps === undefined
        ? {}
        : { discoverySweeps: o.discoverySweeps }),
      ...(o.intruderAddresses === undefined
        ? {}
        : { intruderAddresses: o.intruderAddresses }),
    });
    this.encoder = wireEncoder(this.generator, this.brandMember);
    this.directory = new Directory(this.generator.org, this.generator.index);
    this.apiKeyDigest = keyDigest(o.apiKey);
    const rl = o.rateLimit ?? { limit: 6000, windowMs: 60_000 };
    this.limiter = new RateLimiter(rl.limit, rl.windowMs);
    this.faults = new FaultInjector(o.faults);
    this.mutator = new Mutator(
      o.mutations ?? {},
      this.seed,
      this.directory,
      this.generator,
    );
    this.mutating = o.mutations !== undefined;
    this.latency = o.latency;
    this.latencyGate = new ConcurrencyGate(o.latency?.maxConcurrent ?? 0);
    for (const kind of this.faults.enabledKinds())
      this.counters.faults[kind] = 0;
    this.bench = o.benchPages
      ? new BenchCache(o.benchCacheBytes ?? 512 * 1024 * 1024)
      : undefined;
    if (o.replaySessions !== undefined) {
      if (o.mutations !== undefined)
        throw new RangeError(
          "replaySessions and mutations cannot be combined: the mutation mode's ground truth is the generated sessions",
        );
      const replay = ReplayedSessions.fromFile(
        o.replaySessions,
        this.brandMember,
      );
      this.routes.set(
        LIST_SESSIONS_PATH,
        (body, ctx) =>
          new RawJson(
            replay.page(
              parseListSessionsRequest(body, this.seed),
              ctx.nowMs,
              o.countMeans === "total",
            ),
          ),
      );
      this.routes.set(
        GET_SESSION_PATH,
        (body, ctx) => new RawJson(replay.get(body, ctx.nowMs)),
      );
    } else this.routes.set(LIST_SESSIONS_PATH, this.builtinListSessions);
    if (o.replaySessions === undefined)
      this.routes.set(GET_SESSION_PATH, (body, ctx) => {
        this.sessionFaults(body, ctx.nowMs);
        return new RawJson(
          buildGetSession(body, {
            ...ctx,
            encoder: this.encoder,
            corrections: this.corrections,
          }),
        );
      });
    this.server.keepAliveTimeout = 30_000;
  }

  async listen(): Promise<void> {
    const host = this.o.host ?? "127.0.0.1";
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.o.port ?? 0, host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    const addr = this.server.address() as AddressInfo;
    this.port = addr.port;
    const shownHost = host.includes(":") ? `[${host}]` : host;
    this.url = `http://${shownHost}:${this.port}`;
    this.log("info", "simulator listening", {
      url: this.url,
      seed: this.seed,
      clock: this.clock.describe(),
    });
  }

  stats(): SimulatorStats {
    return {
      requests: this.counters.requests,
      byMethod: { ...this.counters.byMethod },
      faults: { ...this.counters.faults },
    };
  }

  brokenRecords(): BrokenRecord[] {
    return [...this.broken.values()];
  }

  otherObjects(): OtherObject[] {
    return [...this.others.values()].map((o) => ({ ...o }));
  }

  faultedRecords(): FaultedRecord[] {
    return [...this.faulted.values()];
  }

  correctStartTime(
    id: string,
    startMs: number,
    options: { getSessionOnly?: boolean } = {},
  ): void {
    this.corrections.set(id, {
      startMs,
      getSessionOnly: options.getSessionOnly ?? false,
    });
  }

  faultedSessions(fromMs: number, toMs: number): FaultedSession[] {
    const now = this.clock.now();
    const out: FaultedSession[] = [];
    if (
      this.faults.rate("vanishedSession") <= 0 &&
      this.faults.rate("lateSession") <= 0
    )
      return out;
    for (const s of this.generator.sessionsStartingIn(
      fromMs,
      Math.min(toMs, now + 1),
    )) {
      const kind = this.faults.sessionFault(s.id);
      if (kind === "lateSession") {
        out.push({
          sessionId: s.id,
          kind,
          startMs: s.startMs,
          listedFromMs: s.startMs + this.faults.lateMs,
        });
      } else if (
        kind === "vanishedSession" &&
        statusAt(s, now) !== "completed"
      ) {
        out.push({ sessionId: s.id, kind, startMs: s.startMs });
      }
    }
    return out;
  }

  brokenWindows(): BrokenWindow[] {
    return [...this.poisoned.values()];
  }

  isBrokenWindow(
    query: string,
    groupBy: readonly string[],
    startMs: number,
  ): boolean {
    return this.faults.brokenWindow(query, groupBy, startMs) !== undefined;
  }

  heldIds(
    stream: Exclude<MutationStream, "sessions">,
    atMs = this.clock.now(),
  ): Set<string> {
    return this.mutator.held(stream, atMs);
  }

  sessionIdsIn(fromMs: number, toMs: number): Set<string> {
    return sessionIdsIn(this.generator, fromMs, toMs, this.clock.now());
  }

  servedRecords(stream: MutationStream): ReadonlyMap<string, ServedRecord> {
    return this.mutator.served(stream);
  }

  clearServed(): void {
    this.mutator.clearServed();
  }

  aggregationAnswers(): AggregationAnswer[] {
    return this.mutator.aggregationAnswers();
  }

  setMutationRate(kind: MutationKind, rate: number): void {
    if (!this.mutating)
      throw new RangeError(
        "setMutationRate: the simulator was started without mutation mode (option mutations)",
      );
    this.mutator.setRate(kind, rate);
  }

  addRoute(path: string, handler: RouteHandler): void {
    if (!path.startsWith("/"))
      throw new RangeError(`route path must start with "/": ${path}`);
    this.routes.set(path, handler);
  }

  /**
   * In bench mode, the answer to a request for a window that has ended is built once and kept
   * as bytes, like the session pages, so that a measurement of the exporter's aggregation sync
   * does not measure the simulator computing histograms. `endMsOf` reads (and checks) the
   * request's window end; outside bench mode the handler is returned as it is.
   */
  benchCached(
    path: string,
    handler: RouteHandler,
    endMsOf: (body: Record<string, unknown>) => number,
  ): RouteHandler {
    const cache = this.bench;
    if (!cache) return handler;
    return async (body, ctx) => {
      const ended = endMsOf(body) <= ctx.nowMs;
      const key = `${path}|${JSON.stringify(body)}`;
      const hit = ended ? cache.get(key) : undefined;
      if (hit) return new RawJson(hit);
      const answer: unknown = await handler(body, ctx);
      if (!ended) return answer;
      const bytes =
        answer instanceof RawJson
          ? answer.bytes
          : Buffer.from(JSON.stringify(answer), "utf8");
      cache.set(key, bytes);
      return new RawJson(bytes);
    };
  }

  async close(): Promise<void> {
    this.closing.abort();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private log(
    level: SimLogEntry["level"],
    msg: string,
    fields: Record<string, unknown> = {},
  ): void {
    this.o.logger?.({ level, msg, ...fields });
  }

  private countFault(kind: string, n = 1): void {
    this.counters.faults[kind] = (this.counters.faults[kind] ?? 0) + n;
  }

  private async handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const started = performance.now();
    this.counters.requests++;
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const method = path.slice(path.lastIndexOf("/") + 1) || path;
    this.counters.byMethod[method] = (this.counters.byMethod[method] ?? 0) + 1;
    res.on("error", () => undefined);
    let fault: RequestFaults | undefined;
    let reply: Reply;
    try {
      const outcome = await this.process(req, path);
      reply = outcome.reply;
      fault = outcome.fault;
    } catch (err) {
      this.log("error", "simulator handler failed", {
        path,
        error: String(err),
      });
      reply = errorReply("internal", "internal error");
    }
    if (this.latency && !fault?.response) {
      await this.sendWithLatency(res, reply, this.latency);
    } else {
      this.send(res, reply, fault);
    }
    this.log("debug", "request", {
      path,
      status: reply.status,
      ms: Math.round(performance.now() - started),
      ...(fault?.response ? { fault: fault.response } : {}),
    });
  }

  private async process(
    req: IncomingMessage,
    path: string,
  ): Promise<{ reply: Reply; fault?: RequestFaults }> {
    if (req.method !== "POST") {
      req.resume();
      const r = errorReply(
        "unimplemented",
        `HTTP method ${req.method ?? "?"} not allowed: Connect unary calls use POST`,
        405,
      );
      r.headers.Allow = "POST";
      return { reply: r };
    }
    const raw = await readBody(req);
    const handler = this.routes.get(path);
    if (!handler)
      return {
        reply: errorReply("unimplemented", `procedure ${path} not found`, 404),
      };
    const contentType =
      (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ??
      "";
    if (contentType !== "application/json") {
      const r = errorReply(
        "invalid_argument",
        `content-type "${contentType}" not supported: use application/json`,
        415,
      );
      r.headers["Accept-Post"] = "application/json";
      return { reply: r };
    }
    const key = req.headers["x-api-key"];
    if (typeof key !== "string" || key === "") {
      return {
        reply: errorReply("unauthenticated", "missing X-API-KEY header"),
      };
    }
    if (!timingSafeEqual(keyDigest(key), this.apiKeyDigest)) {
      // Never echo the key: it would end up in client logs.
      return { reply: errorReply("unauthenticated", "invalid API key") };
    }
    if (!this.limiter.take()) {
      const r = errorReply("resource_exhausted", "rate limit exceeded");
      Object.assign(r.headers, this.limiter.headers(true));
      return { reply: r };
    }
    if (raw === "too-large") {
      return {
        reply: errorReply(
          "invalid_argument",
          `request body larger than ${MAX_BODY_BYTES} bytes`,
        ),
      };
    }
    let body: unknown;
    try {
      body = raw.length === 0 ? {} : JSON.parse(raw.toString("utf8"));
    } catch {
      return {
        reply: errorReply("invalid_argument", "request body is not valid JSON"),
      };
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return {
        reply: errorReply(
          "invalid_argument",
          "request body must be a JSON object",
        ),
      };
    }
    const message = body as Record<string, unknown>;

    const hasCursor =
      typeof message.cursor === "string" && message.cursor !== "";
    const fault = this.faults.enabled
      ? this.faults.decide(hasCursor)
      : undefined;
    if (fault?.slow) {
      this.countFault("slow");
      try {
        await sleep(this.faults.slowMs, undefined, {
          signal: this.closing.signal,
        });
      } catch {
        return {
          reply: errorReply("unavailable", "simulator shutting down"),
          fault,
        };
      }
    }
    switch (fault?.response) {
      case "rate429": {
        this.countFault("rate429");
        const r = errorReply(
          "resource_exhausted",
          "rate limit exceeded, retry later",
        );
        Object.assign(r.headers, this.limiter.headers(true), {
          "Retry-After": "1",
        });
        return { reply: r, fault };
      }
      case "rate503":
        this.countFault("rate503");
        return {
          reply: errorReply(
            "unavailable",
            "service temporarily unavailable, retry with backoff",
          ),
          fault,
        };
      case "rate502html":
        this.countFault("rate502html");
        return {
          reply: {
            status: 502,
            headers: { "Content-Type": "text/html" },
            body: BAD_GATEWAY_HTML,
          },
          fault,
        };
      case "expiredCursor":
        this.countFault("expiredCursor");
        return {
          reply: errorReply(
            "invalid_argument",
            "cursor expired: restart the listing",
          ),
          fault,
        };
      default:
        break;
    }

    const ctx: RouteContext = {
      nowMs: this.clock.now(),
      generator: this.generator,
      seed: this.seed,
    };
    const requestFaults = fault;
    const request = this.otherObject(path, message, ctx.nowMs);
    try {
      // The built-in session list takes the request's page faults (duplicate, wrong shape,
      // cursor cycle) as well.
      let answer: unknown = await (handler === this.builtinListSessions
        ? this.listSessions(request, ctx, requestFaults)
        : handler(request, ctx));
      if (this.mutating) {
        const json: unknown =
          answer instanceof RawJson
            ? JSON.parse(answer.bytes.toString("utf8"))
            : answer;
        answer = this.mutator.mutate(path, request, json, ctx.nowMs);
      }
      const result = this.answerFaults(path, request, answer, requestFaults);
      const bytes =
        result instanceof RawJson
          ? result.bytes
          : Buffer.from(JSON.stringify(result ?? {}), "utf8");
      return { reply: jsonReply(bytes), fault };
    } catch (err) {
      if (err instanceof SimConnectError)
        return { reply: errorReply(err.code, err.message), fault };
      throw err;
    }
  }

  private listSessions(
    body: Record<string, unknown>,
    ctx: RouteContext,
    fault?: RequestFaults,
  ): RawJson {
    const req = parseListSessionsRequest(body, this.seed);
    const pageCtx: PageContext = {
      generator: this.generator,
      encoder: this.encoder,
      faults: this.faults,
      nowMs: ctx.nowMs,
      corrections: this.corrections,
      onBroken: (r: BrokenRecord) => {
        this.broken.set(r.sessionId, r);
        this.countFault("badRecord");
      },
      onFaulted: (r: FaultedRecord) => {
        // One entry per distinct version: a record served again after its session changed
        // (an open session completing) is another record to dead-letter.
        const key = `${r.sessionId}|${createHash("sha256").update(r.bytes).digest("base64")}`;
        if (!this.faulted.has(key)) this.faulted.set(key, r);
        // Classic broken records are counted as badRecord by onBroken.
        if (!isBrokenRecordKind(r.kind)) this.countFault(r.kind);
      },
      onLate: () => this.countFault("lateSession"),
      countMeans: this.o.countMeans,
    };
    const pf: PageFaults = {};
    if ((fault?.duplicate ?? 0) > 0 && req.position)
      pf.duplicate = fault?.duplicate;
    if (fault?.wrongShape) pf.wrongShape = fault.shapeVariant;
    else if (fault?.cursorCycle) pf.cycleBack = fault.cycleBack;
    if (
      pf.duplicate !== undefined ||
      pf.wrongShape !== undefined ||
      pf.cycleBack !== undefined
    ) {
      const page = buildSessionsPage(req, pageCtx, pf);
      if (pf.duplicate !== undefined) this.countFault("duplicate");
      if (pf.wrongShape !== undefined) this.countFault("wrongShape");
      if (pf.cycleBack !== undefined) this.countFault("cursorCycle");
      return new RawJson(page.body);
    }
    if (!this.bench) return new RawJson(buildSessionsPage(req, pageCtx).body);

    const key = this.benchKey(req, ctx.nowMs);
    const hit = this.bench.get(key);
    if (hit) return new RawJson(hit);
    const page = buildSessionsPage(req, pageCtx);
    this.bench.set(key, page.body);
    // Keys are stable only when the window's upper bound does not move with the clock.
    const stable = this.clock.rate === 0 || req.endMs <= ctx.nowMs + 1;
    if (page.nextCursor !== undefined && stable) {
      const next: ListSessionsRequest = {
        ...req,
        cursor: page.nextCursor,
        position: undefined,
      };
      const nextKey = this.benchKey(next, ctx.nowMs);
      setImmediate(() => {
        if (this.closing.signal.aborted || this.bench?.has(nextKey)) return;
        const parsed = parseListSessionsRequest(
          { ...body, cursor: page.nextCursor },
          this.seed,
        );
        this.bench?.set(nextKey, buildSessionsPage(parsed, pageCtx).body);
      });
    }
    return new RawJson(page.body);
  }

  /**
   * The request as the handler answers it: a Get whose id meets the otherObject fault names
   * another object (other-object.ts); not with replayed sessions, whose ids are the file's.
   */
  private otherObject(
    path: string,
    body: Record<string, unknown>,
    nowMs: number,
  ): Record<string, unknown> {
    if (this.faults.rate("otherObject") <= 0) return body;
    if (this.o.replaySessions !== undefined && path === GET_SESSION_PATH)
      return body;
    const other = otherObjectRequest(path, body, {
      generator: this.generator,
      directory: this.directory,
      seed: this.faults.seed,
      nowMs,
      meets: (id) => this.faults.answersOtherObject(id),
    });
    if (other === undefined) return body;
    this.countFault("otherObject");
    this.others.set(
      `${other.served.operation}|${other.served.askedId}`,
      other.served,
    );
    return other.body;
  }

  /** GetSession of a vanished (open) or a not yet listed late session: not_found. */
  private sessionFaults(body: Record<string, unknown>, nowMs: number): void {
    const id = body.sessionId;
    if (typeof id !== "string" || id === "") return;
    const kind = this.faults.sessionFault(id);
    if (kind === undefined) return;
    const s = this.generator.getSession(id);
    if (!s || s.startMs > nowMs) return;
    const hidden =
      kind === "vanishedSession"
        ? statusAt(s, nowMs) !== "completed"
        : !this.faults.listed(id, s.startMs, nowMs);
    if (!hidden) return;
    this.countFault(kind);
    throw new SimConnectError(
      "not_found",
      `session "${truncateForMessage(id)}" not found`,
    );
  }

  /** The answer faults of GetSession and ListLogAggregations (sessions pages build their own). */
  private answerFaults(
    path: string,
    body: Record<string, unknown>,
    answer: unknown,
    fault: RequestFaults | undefined,
  ): unknown {
    if (path === GET_SESSION_PATH) {
      if (!fault?.wrongShape) return answer;
      this.countFault("wrongShape");
      return {};
    }
    if (path !== LIST_LOG_AGGREGATIONS_PATH) return answer;
    let poisoned: BrokenWindow | undefined;
    if (this.faults.rate("badWindow") > 0) {
      const req = parseListLogAggregationsRequest(body);
      const query = typeof body.query === "string" ? body.query : "";
      const variant = this.faults.brokenWindow(query, req.groupBy, req.startMs);
      if (variant !== undefined)
        poisoned = {
          query,
          groupBy: req.groupBy,
          startMs: req.startMs,
          variant,
        };
    }
    if (
      poisoned === undefined &&
      !fault?.emptyAggregation &&
      !fault?.wrongShape &&
      !fault?.stringCounts
    )
      return answer;
    const json = (
      answer instanceof RawJson
        ? JSON.parse(answer.bytes.toString("utf8"))
        : (answer ?? {})
    ) as Record<string, unknown>;
    if (poisoned !== undefined) {
      this.poisoned.set(
        JSON.stringify([poisoned.query, poisoned.groupBy, poisoned.startMs]),
        poisoned,
      );
      this.countFault("badWindow");
      return brokenWindowAnswer(json, poisoned.variant);
    }
    if (fault?.emptyAggregation) {
      this.countFault("emptyAggregation");
      return {};
    }
    if (fault?.wrongShape) {
      this.countFault("wrongShape");
      return withoutAggregations(json);
    }
    this.countFault("stringCounts");
    return withStringCounts(json);
  }

  private benchKey(req: ListSessionsRequest, nowMs: number): string {
    const upper = Math.min(req.endMs, nowMs + 1);
    return `${req.filterKey}|${req.limit}|${req.cursor}|${upper}`;
  }

  /** Answers after the time to first byte, at the body rate, within the concurrency limit. */
  private async sendWithLatency(
    res: ServerResponse,
    reply: Reply,
    latency: LatencyOptions,
  ): Promise<void> {
    await this.latencyGate.enter();
    try {
      await sleep(latency.firstByteMs, undefined, {
        signal: this.closing.signal,
      }).catch(() => undefined);
      await sendPaced(
        res,
        reply.status,
        { ...this.limiter.headers(), ...reply.headers },
        reply.body,
        latency.bytesPerSecond,
        this.closing.signal,
      );
    } finally {
      this.latencyGate.leave();
    }
  }

  private send(
    res: ServerResponse,
    reply: Reply,
    fault: RequestFaults | undefined,
  ): void {
    const headers: Record<string, string | number> = {
      ...this.limiter.headers(),
      ...reply.headers,
    };
    const body = reply.body;
    const socket: Socket | null = res.socket;
    if (fault?.response === "reset" && socket) {
      this.countFault("reset");
      res.writeHead(reply.status, {
        ...headers,
        "Content-Length": body.length,
      });
      res.write(
        body.subarray(0, Math.floor(body.length * fault.cutFraction)),
        () => {
          socket.resetAndDestroy();
        },
      );
      return;
    }
    if (fault?.response === "truncate") {
      this.countFault("truncate");
      const cut = body.subarray(0, Math.floor(body.length / 2));
      if (fault.truncateMode === "cut" && socket) {
        // The full length is announced but the connection ends cleanly half way.
        res.writeHead(reply.status, {
          ...headers,
          "Content-Length": body.length,
        });
        res.write(cut, () => socket.end());
        return;
      }
      res.writeHead(reply.status, { ...headers, "Content-Length": cut.length });
      res.end(cut);
      return;
    }
    res.writeHead(reply.status, { ...headers, "Content-Length": body.length });
    res.end(body);
  }
}

/** Starts a simulator; resolves once it listens. */
export async function startSimulator(
  options: SimulatorOptions,
): Promise<Simulator> {
  const sim = new SimulatorServer(options);
  // The whole API surface the exporter reads is served by default; tests may replace a route.
  if (options.logAggregations !== false) {
    sim.addRoute(
      LIST_LOG_AGGREGATIONS_PATH,
      sim.benchCached(
        LIST_LOG_AGGREGATIONS_PATH,
        createListLogAggregationsHandler(options.logAggregations ?? {}),
        (body) => parseListLogAggregationsRequest(body).endMs,
      ),
    );
  }
  if (options.directory !== false) {
    for (const [path, handler] of directoryRoutes(sim.directory, {
      countMeans: options.countMeans ?? "page",
    }))
      sim.addRoute(path, handler);
  }
  await sim.listen();
  return sim;
}
