// The control plane's checks: reachable, TLS trusted, the key accepted by every read operation
// the configured jobs use (one smallest read each, never a write), the rate-limit headers seen
// and the clock against the API's Date header. Each read is made once and shared by the checks.
import type { ApiObserver } from "../../api/client.js";
import { ControlPlaneApi } from "../../api/control-plane.js";
import { ApiError } from "../../api/errors.js";
import { resetWaitMs, type ResponseHeaders } from "../../api/pacing.js";
import type { Config } from "../../config/index.js";
import { directorySpec } from "../../pipeline/stream-specs.js";
import { ENTITY_STREAMS } from "../../pipeline/names.js";
import {
  fail,
  ok,
  skipped,
  warn,
  type CheckSpec,
  type Finding,
  familySpecs,
} from "./check.js";

/** Local clock minus the API's Date header beyond which doctor warns. */
const CLOCK_SKEW_WARN_MS = 30_000;

/** An id no object has: a Get or per-parent listing with it reads nothing, harmlessly. */
const NO_SUCH_ID = "00000000-0000-0000-0000-000000000000";

/** Retries of a doctor read: one, so that a refusal or an outage is reported at once. */
const DOCTOR_RETRIES = 1;
/** Longest wait for one answer's headers. */
const DOCTOR_TIMEOUT_MS = 20_000;

/** One read operation and its smallest harmless call. */
interface ProbeRead {
  /** The operation as the control plane names it. */
  operation: string;
  /** What uses it, for the line. */
  usedBy: string;
  /** It names an id nobody has: not_found is the answer expected of an accepted key. */
  madeUpId?: boolean;
  call(api: ControlPlaneApi, nowMs: number): Promise<unknown>;
}

type Outcome = { ok: true } | { ok: false; err: unknown };

interface SeenResponse {
  headers: ResponseHeaders;
  sentAtMs: number;
  receivedAtMs: number;
}

/** The doctor's API client, the answers it saw, and each read's outcome (made once). */
export class ApiProbe {
  readonly #config: Config;
  readonly #nowMs: number;
  readonly #outcomes = new Map<string, Promise<Outcome>>();
  #api: ControlPlaneApi | undefined;
  /** The last answer seen (any status), for the rate-limit and clock checks. */
  last: SeenResponse | undefined;

  constructor(config: Config, nowMs: number) {
    this.#config = config;
    this.#nowMs = nowMs;
  }

  #client(): ControlPlaneApi {
    if (this.#api) return this.#api;
    const observer: ApiObserver = {
      onResponse: (e) => {
        this.last = e;
      },
    };
    const a = this.#config.api;
    this.#api = ControlPlaneApi.fromConfig(
      {
        ...this.#config,
        api: {
          ...a,
          maxRetries: Math.min(a.maxRetries, DOCTOR_RETRIES),
          requestTimeoutMs: Math.min(a.requestTimeoutMs, DOCTOR_TIMEOUT_MS),
        },
      },
      undefined,
      observer,
      true,
    );
    return this.#api;
  }

  outcome(read: ProbeRead): Promise<Outcome> {
    let found = this.#outcomes.get(read.operation);
    if (!found) {
      found = read.call(this.#client(), this.#nowMs).then(
        (): Outcome => ({ ok: true }),
        (err: unknown): Outcome => ({ ok: false, err }),
      );
      this.#outcomes.set(read.operation, found);
    }
    return found;
  }

  async close(): Promise<void> {
    await this.#api?.close();
  }
}

const MINUTE_MS = 60_000;

const sessionsRead: ProbeRead = {
  operation: "ListSessionsV2",
  usedBy: "the sessions job",
  call: async (api, nowMs) => {
    const endMs = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
    const page = api.sessionsPage(
      { startMs: endMs - MINUTE_MS, endMs, limit: 1 },
      { batchSize: 1 },
    );
    for (;;) if ((await page.next()).done) return;
  },
};

/** The reads the configured jobs use: sessions, open sessions, one aggregation job, the streams. */
function probeReads(config: Config): ProbeRead[] {
  const reads: ProbeRead[] = [
    sessionsRead,
    {
      operation: "GetSession",
      usedBy: "the open-session refresh",
      madeUpId: true,
      call: (api) => api.getSession(NO_SUCH_ID),
    },
  ];
  const job = config.aggregations.jobs.find((j) => j.enabled);
  if (job)
    reads.push({
      operation: "ListLogAggregations",
      usedBy: `aggregation job ${job.name}`,
      call: (api, nowMs) => {
        const endMs = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
        return api.listLogAggregations({
          query: job.query,
          histogramInterval: job.interval,
          histogramGroupByFields: [...job.groupBy],
          startMs: endMs - MINUTE_MS,
          endMs,
        });
      },
    });
  if (!config.streams.enabled) return reads;
  for (const stream of ENTITY_STREAMS) {
    const read = directorySpec(stream).read;
    if (read.kind === "get")
      reads.push({
        operation: "GetUser",
        usedBy: `stream ${stream}`,
        madeUpId: true,
        call: (api) => api.getUser(NO_SUCH_ID),
      });
    else
      reads.push({
        operation: operationName(read.operation),
        usedBy: `stream ${stream}`,
        madeUpId: read.kind === "perParent",
        call: (api) =>
          api.listPage(
            read.operation,
            read.kind === "perParent" ? { [read.filter]: NO_SUCH_ID } : {},
            "",
            { limit: 1 },
          ),
      });
  }
  return reads;
}

/** `listUserDevices` → `ListUserDevices`. */
function operationName(op: string): string {
  return op.charAt(0).toUpperCase() + op.slice(1);
}

/** What the API check functions need. */
export interface ApiCheckContext {
  config: Config;
  api: ApiProbe;
}

/** A failure that never reached an answer: no HTTP status. */
function unanswered(err: unknown): err is ApiError {
  return err instanceof ApiError && err.httpStatus === 0;
}

async function reachable(ctx: ApiCheckContext): Promise<Finding> {
  const origin = new URL(ctx.config.api.url).origin;
  const o = await ctx.api.outcome(sessionsRead);
  if (!o.ok && unanswered(o.err) && o.err.code !== "TLS")
    return fail(
      `${origin} (SESSIONHOUSE_API_URL) does not answer: ${o.err.detail}`,
      o.err.hint ?? "check SESSIONHOUSE_API_URL and the network",
    );
  if (!o.ok && !(o.err instanceof ApiError)) throw o.err;
  const status =
    ctx.api.last === undefined ? "a TLS handshake" : "an HTTP answer";
  return ok(`${origin} (SESSIONHOUSE_API_URL) gave ${status}`);
}

async function tls(ctx: ApiCheckContext): Promise<Finding> {
  const url = new URL(ctx.config.api.url);
  if (url.protocol !== "https:")
    return skipped(`SESSIONHOUSE_API_URL is ${url.protocol}//: no TLS`);
  const o = await ctx.api.outcome(sessionsRead);
  const by = ctx.config.api.caFile
    ? `the CA in SESSIONHOUSE_API_CA_FILE ${ctx.config.api.caFile}`
    : "the system's CAs";
  if (!o.ok && o.err instanceof ApiError && o.err.code === "TLS")
    return fail(
      `the certificate of ${url.host} is not trusted by ${by}: ${o.err.detail}`,
      o.err.hint ?? "set SESSIONHOUSE_API_CA_FILE",
    );
  if (!o.ok && unanswered(o.err))
    return skipped("the API does not answer (see api reachable)");
  return ok(`the certificate of ${url.host} is trusted by ${by}`);
}

/** A refusal of the key itself: every read refused for it has one cause, the key. */
function keyRefusal(o: Outcome): ApiError | undefined {
  return !o.ok &&
    o.err instanceof ApiError &&
    (o.err.code === "unauthenticated" || o.err.code === "permission_denied")
    ? o.err
    : undefined;
}

/**
 * The reads of `reads` refused with the code of `refusal`, in the checks' order: one cause, so
 * one failure, the first read's; the others are folded into it.
 */
async function refusedAlike(
  ctx: ApiCheckContext,
  reads: readonly ProbeRead[],
  refusal: ApiError,
): Promise<ProbeRead[]> {
  const outcomes = await Promise.all(reads.map((r) => ctx.api.outcome(r)));
  return reads.filter((_, i) => {
    const other = keyRefusal(outcomes[i] as Outcome);
    return other !== undefined && other.code === refusal.code;
  });
}

/** The failure of the first read refused, naming how many others the same key refusal covers. */
function refusedFinding(
  read: ProbeRead,
  refusal: ApiError,
  alike: readonly ProbeRead[],
): Finding {
  const first = alike[0] ?? read;
  if (first.operation !== read.operation)
    return skipped(
      `used by ${read.usedBy}: the key is refused as for ${first.operation} (${refusal.code}): one cause, reported once under api key: ${first.operation}`,
    );
  const more = alike.length - 1;
  const others =
    more === 0
      ? ""
      : `; and ${more} more operation${more === 1 ? "" : "s"} refused the same key (${alike
          .slice(1)
          .map((r) => r.operation)
          .join(", ")})`;
  return fail(
    `used by ${read.usedBy}: the key is refused (${refusal.code}: ${refusal.detail})${others}`,
    refusal.hint ?? "check SESSIONHOUSE_API_KEY (or SESSIONHOUSE_API_KEY_FILE)",
  );
}

/** The key check of `read`, one of `reads` (every key check of the configuration). */
function keyCheck(
  read: ProbeRead,
  reads: readonly ProbeRead[],
): readonly [string, CheckSpec<ApiCheckContext>["run"]] {
  return [
    `key: ${read.operation}`,
    async (ctx: ApiCheckContext): Promise<Finding> => {
      // The first read tells whether the API answers at all: no use asking the others then.
      const first = await ctx.api.outcome(sessionsRead);
      const o =
        !first.ok && unanswered(first.err)
          ? first
          : await ctx.api.outcome(read);
      const what = `used by ${read.usedBy}`;
      if (o.ok) return ok(`${what}: the key is accepted`);
      const err = o.err;
      if (!(err instanceof ApiError)) throw err;
      if (err.httpStatus === 0)
        return skipped("no answer from the API (see api reachable, api tls)");
      const refusal = keyRefusal(o);
      if (refusal !== undefined)
        return refusedFinding(
          read,
          refusal,
          await refusedAlike(ctx, reads, refusal),
        );
      // A read of an id nobody has answers not_found: the key was accepted to get there.
      if (err.code === "not_found" && read.madeUpId)
        return ok(`${what}: the key is accepted (not_found for a made-up id)`);
      return warn(
        `${what}: the key is accepted, the read is refused (${err.code}: ${err.detail})`,
        err.hint ?? "see the message",
      );
    },
  ];
}

const RATE_HEADERS = [
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "retry-after",
] as const;

function header(h: ResponseHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

function rateLimit(ctx: ApiCheckContext): Finding {
  const last = ctx.api.last;
  if (!last) return skipped("no answer from the API");
  const seen = RATE_HEADERS.filter(
    (n) => header(last.headers, n) !== undefined,
  );
  if (seen.length === 0)
    return ok(
      `no rate-limit headers seen: the exporter keeps to SESSIONHOUSE_MAX_RPS (${ctx.config.api.maxRequestsPerSecond}/s)`,
    );
  const text = seen
    .map((n) => {
      const value = header(last.headers, n) ?? "";
      const waitMs =
        n === "x-ratelimit-reset"
          ? resetWaitMs(value, last.receivedAtMs)
          : undefined;
      return `${n} ${value}${waitMs === undefined ? "" : ` (in ${Math.round(waitMs / 1000)} s)`}`;
    })
    .join(", ");
  const limit = Number(header(last.headers, "x-ratelimit-limit"));
  const remaining = Number(header(last.headers, "x-ratelimit-remaining"));
  if (limit > 0 && remaining <= limit * 0.1)
    return warn(
      `${text}: less than a tenth of the limit is left`,
      "another client may share the key's quota; the exporter slows down near the limit, lower SESSIONHOUSE_MAX_RPS if it keeps waiting",
    );
  return ok(`${text} (the exporter paces itself by them)`);
}

function clock(ctx: ApiCheckContext): Finding {
  const last = ctx.api.last;
  if (!last) return skipped("no answer from the API");
  const date = header(last.headers, "date");
  const dateMs = date === undefined ? NaN : Date.parse(date);
  if (!Number.isFinite(dateMs))
    return skipped("the API's answers carry no Date header");
  // The header has whole seconds: the service's clock read somewhere in [dateMs, dateMs + 1s).
  const localMs = (last.sentAtMs + last.receivedAtMs) / 2;
  const skewMs =
    localMs < dateMs
      ? localMs - dateMs
      : Math.max(0, localMs - (dateMs + 1000));
  const text = `local clock ${Math.abs(skewMs / 1000).toFixed(1)} s ${skewMs >= 0 ? "ahead of" : "behind"} the API's Date header`;
  if (Math.abs(skewMs) > CLOCK_SKEW_WARN_MS)
    return warn(
      `${text} (more than ${CLOCK_SKEW_WARN_MS / 1000} s)`,
      "synchronise this host's clock (NTP): windows and lags are cut by the local clock",
    );
  return ok(`${text} (warned above ${CLOCK_SKEW_WARN_MS / 1000} s)`);
}

/** The API checks of a configuration: one key check per read operation its jobs use. */
export function apiChecks(config: Config): CheckSpec<ApiCheckContext>[] {
  const seen = new Set<string>();
  const keys = probeReads(config).filter((r) => {
    if (seen.has(r.operation)) return false;
    seen.add(r.operation);
    return true;
  });
  return familySpecs<ApiCheckContext>("api", false, [
    ["reachable", reachable],
    ["tls", tls],
    ...keys.map((read) => keyCheck(read, keys)),
    ["rate limit", rateLimit],
    ["clock", clock],
  ]);
}
