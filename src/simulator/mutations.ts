// Mutation mode: answers that are each plausible on their own but, read after read, contradict
// one another — records with a member of the wrong type or a member missing, the same id twice
// in a listing, the same key twice in an aggregation, an answer whose parts disagree (a page's
// count, a histogram step's total against its buckets and numHits), a field corrected between
// two reads (a session's start moved by a few minutes, a directory object's name), objects
// that are absent from one listing and back in the next, suspensions revoked. Every read
// operation the exporter uses goes through `Mutator.mutate`.
//
// Everything is drawn from (mutation seed, stream, id or window, slot of the clock), where the
// slot is `slotMs` long (default one hour): a retry at the same simulated time meets the same
// answer, and the next slot may answer otherwise. The mutator is also the oracle of what the
// simulator holds ("ground truth"): `held` gives the ids a complete, faithful read of a stream
// would return at a time, `served` which ids were served and whether in a readable form, and
// `aggregationAnswers` whether the last answer for each window was consistent.

import { SimConnectError, truncateForMessage } from "./connect.js";
import { integer, parseRates } from "./faults.js";
import type { Directory } from "./directory.js";
import { DIRECTORY_PATHS } from "./directory-routes.js";
import { GET_SESSION_PATH, LIST_SESSIONS_PATH } from "./list-sessions.js";
import {
  LIST_LOG_AGGREGATIONS_PATH,
  parseListLogAggregationsRequest,
} from "./logs/handler.js";
import { hashUnit } from "./random.js";
import type { SessionGenerator } from "./sessions.js";
import { HOUR_MS, MINUTE_MS } from "./time.js";

export const MUTATION_KINDS = [
  /** A record with a member of the wrong type (a time as a number): to be dead-lettered. */
  "wrongType",
  /** A record without a required member (a session's startTime, an object's id). */
  "missingMember",
  /** A listing page that carries one of its records twice. */
  "duplicateId",
  /** An aggregation answer with one bucket key and one top-value key split in two entries. */
  "duplicateKey",
  /** Parts that disagree: a page's listMetadata.count, a histogram step's total. */
  "disagree",
  /** A session's startTime moved on later reads; a directory object's name changed. */
  "corrected",
  /** A directory object absent for a slot (not held then), back in the next. */
  "vanish",
  /** A policy suspension revoked: gone from its revocation on. */
  "revoked",
] as const;
export type MutationKind = (typeof MUTATION_KINDS)[number];

/** The streams the ground truth speaks of, named as the exporter's streams. */
export type MutationStream = "sessions" | "users" | ListingRoute["stream"];

export interface MutationOptions {
  /** Rate per kind in [0, 1]; a kind left out is off. */
  rates?: Partial<Record<MutationKind, number>>;
  /** Default: the simulator's seed. */
  seed?: number;
  /** Length of the clock slot a mutation holds for; default one hour. */
  slotMs?: number;
}

/** How one id was served since the last `clearServed`. */
export interface ServedRecord {
  /** Served at least once in a form the exporter can store. */
  readable: boolean;
  /** Served at least once broken (wrongType, missingMember). */
  unreadable: boolean;
  /**
   * For a record served without its id: a text the raw record carries (`"createdAt":"…"`), by
   * which its dead letter can be found.
   */
  mark?: string;
}

/** The last ListLogAggregations answer for one window. */
export interface AggregationAnswer {
  query: string;
  groupBy: string[];
  startMs: number;
  endMs: number;
  /** The simulator clock when it was answered. */
  atMs: number;
  /** The mutation applied; undefined for a consistent answer. */
  mutation?: "duplicateKey" | "disagree";
}

/** A session's start moves this long after it began… */
const CORRECTION_DELAY_MS = 30 * MINUTE_MS;
/** …by 2 to 7 minutes. */
const CORRECTION_MINUTES = 6;

const DEFAULT_SLOT_MS = HOUR_MS;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** Members whose value identifies a record without its id, in order of preference. */
const MARK_MEMBERS = ["createdAt", "serialNumber", "email", "name"];

function markOf(o: Json): string | undefined {
  for (const key of MARK_MEMBERS) {
    if (typeof o[key] === "string" && o[key] !== "")
      return JSON.stringify(o[key]);
  }
  for (const v of Object.values(o)) {
    if (isObject(v)) {
      const m = markOf(v);
      if (m !== undefined) return m;
    }
  }
  return undefined;
}

/** The id an InventoryObject's column (or sub-column) carries. */
function columnsOf(o: unknown, out: Json[] = [], key = ""): Json[] {
  if (Array.isArray(o)) {
    for (const x of o) columnsOf(x, out, key);
    return out;
  }
  if (!isObject(o)) return out;
  if (
    (key === "column" || key === "columns" || key === "subColumn") &&
    typeof o.id === "string"
  )
    out.push(o);
  for (const [k, v] of Object.entries(o))
    if (typeof v === "object") columnsOf(v, out, k);
  return out;
}

/** The id of the object an InventoryObject carries, whatever its kind. */
function inventoryIdOf(o: Json): string {
  for (const v of Object.values(o)) if (isObject(v)) return str(v.id);
  return "";
}

/** Parses a `--mutations` spec: `all=0.05,seed=7,vanish=0.1,slotMs=3600000`. */
export function parseMutationSpec(spec: string): MutationOptions {
  const { rates, options } = parseRates(spec, {
    flag: "--mutations",
    noun: "mutation",
    kinds: MUTATION_KINDS,
    allKinds: MUTATION_KINDS,
    shown: MUTATION_KINDS,
    options: {
      seed: integer,
      slotMs: (v) => (v > 0 ? undefined : "> 0"),
    },
  });
  return { rates, ...options };
}

/** What a listing route answers, with the stream it feeds and how its records are named. */
interface ListingRoute {
  stream:
    | "user_devices"
    | "native_users"
    | "identity_links"
    | "inventory"
    | "policy_suspensions"
    | "clouds";
  member: string;
  /** The parent named in the request (userId, resourceId); "" for a full listing. */
  parentOf?: (body: Json) => string;
  idOf: (item: Json, body: Json) => string;
}

const LISTINGS: Record<string, ListingRoute> = {
  [DIRECTORY_PATHS.listUserDevices]: {
    stream: "user_devices",
    member: "devices",
    parentOf: (b) => str(b.userId),
    idOf: (d, b) => `${str(b.userId)}/${str(d.deviceId)}`,
  },
  [DIRECTORY_PATHS.listNativeUsers]: {
    stream: "native_users",
    member: "nativeUsers",
    parentOf: (b) => str(b.resourceId),
    idOf: (n) => str(n.id),
  },
  [DIRECTORY_PATHS.listIdentityLinks]: {
    stream: "identity_links",
    member: "links",
    idOf: (l) => str(l.id),
  },
  [DIRECTORY_PATHS.listInventoryObjects]: {
    stream: "inventory",
    member: "inventory",
    idOf: (o) => inventoryIdOf(o),
  },
  [DIRECTORY_PATHS.listPolicySuspensions]: {
    stream: "policy_suspensions",
    member: "policySuspensions",
    idOf: (s) => str(s.id),
  },
  [DIRECTORY_PATHS.listIntegrationClouds]: {
    stream: "clouds",
    member: "clouds",
    idOf: (c) => str(c.id),
  },
};

export class Mutator {
  readonly seed: number;
  readonly slotMs: number;
  readonly #rates = new Map<MutationKind, number>();
  readonly #served = new Map<MutationStream, Map<string, ServedRecord>>();
  readonly #answers = new Map<string, AggregationAnswer>();

  constructor(
    options: MutationOptions,
    simulatorSeed: number,
    private readonly directory: Directory,
    private readonly generator: SessionGenerator,
  ) {
    this.seed = options.seed ?? simulatorSeed;
    this.slotMs = options.slotMs ?? DEFAULT_SLOT_MS;
    if (!(this.slotMs > 0))
      throw new RangeError(`mutations: slotMs must be > 0, got ${this.slotMs}`);
    for (const [k, r] of Object.entries(options.rates ?? {}))
      this.setRate(k as MutationKind, r);
  }

  rate(kind: MutationKind): number {
    return this.#rates.get(kind) ?? 0;
  }

  /** Switches a mutation on (rate > 0) or off (0) from the next request on. */
  setRate(kind: MutationKind, rate: number): void {
    if (!(MUTATION_KINDS as readonly string[]).includes(kind))
      throw new RangeError(`unknown mutation "${kind}"`);
    if (!(rate >= 0 && rate <= 1))
      throw new RangeError(`mutation ${kind}: rate must be in [0, 1]`);
    this.#rates.set(kind, rate);
  }

  #slot(nowMs: number): number {
    return Math.floor(nowMs / this.slotMs);
  }

  #drawn(kind: MutationKind, ...parts: (string | number)[]): boolean {
    const r = this.rate(kind);
    return r > 0 && hashUnit(this.seed, "mutation", kind, ...parts) < r;
  }

  // -------------------------------------------------------------------------------------------
  // Which object meets which mutation

  /** Absent at `nowMs` (vanished for the slot, or a suspension revoked by then). */
  absent(stream: MutationStream, id: string, nowMs: number, o?: Json): boolean {
    if (stream === "sessions") return false;
    if (this.#drawn("vanish", stream, id, this.#slot(nowMs))) return true;
    if (stream !== "policy_suspensions" || o === undefined) return false;
    return this.#revokedBy(id, o, nowMs);
  }

  #revokedBy(id: string, o: Json, nowMs: number): boolean {
    if (!this.#drawn("revoked", id)) return false;
    const created = Date.parse(str(o.createdAt));
    if (!Number.isFinite(created)) return false;
    const after =
      HOUR_MS * (1 + Math.floor(hashUnit(this.seed, "revoke-at", id) * 24));
    return nowMs >= created + after;
  }

  /** The record mutation of one record at `nowMs`, if any. */
  #recordKind(
    stream: MutationStream,
    id: string,
    nowMs: number,
  ): "wrongType" | "missingMember" | "corrected" | undefined {
    const u = hashUnit(this.seed, "record", stream, id, this.#slot(nowMs));
    let edge = this.rate("wrongType");
    if (u < edge) return "wrongType";
    edge += this.rate("missingMember");
    if (u < edge) return "missingMember";
    edge += this.rate("corrected");
    if (stream !== "sessions" && u < edge) return "corrected";
    return undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Answers

  /**
   * The answer of `path` to `body` at `nowMs` (parsed JSON), mutated; throws not_found for an
   * absent user. Answers of other paths are returned as they are.
   */
  mutate(path: string, body: Json, answer: unknown, nowMs: number): unknown {
    if (path === LIST_LOG_AGGREGATIONS_PATH)
      return this.#aggregation(body, answer, nowMs);
    if (path === LIST_SESSIONS_PATH || path === GET_SESSION_PATH)
      return this.#sessions(path, answer, nowMs);
    if (path === DIRECTORY_PATHS.getUser) return this.#user(answer, nowMs);
    const listing = LISTINGS[path];
    if (listing === undefined || !isObject(answer)) return answer;
    return this.#listing(listing, body, answer, nowMs);
  }

  #user(answer: unknown, nowMs: number): unknown {
    if (!isObject(answer) || !isObject(answer.user)) return answer;
    const id = str(answer.user.id);
    if (this.absent("users", id, nowMs))
      throw new SimConnectError(
        "not_found",
        `user "${truncateForMessage(id)}" not found`,
      );
    return { ...answer, user: this.#record("users", id, answer.user, nowMs) };
  }

  /** One directory record as served, recorded in `served`. */
  #record(stream: MutationStream, id: string, o: Json, nowMs: number): Json {
    const kind = this.#recordKind(stream, id, nowMs);
    if (kind === undefined || kind === "corrected") {
      this.#serve(stream, id, true);
      if (kind === undefined) return o;
      const out = clone(o);
      for (const key of ["fullName", "name", "displayName", "createdBy"]) {
        if (typeof out[key] === "string") {
          out[key] = `${out[key]} (corrected)`;
          return out;
        }
      }
      out.description = "corrected";
      return out;
    }
    const out = clone(o);
    if (kind === "wrongType") {
      const key =
        ["createdAt", "updatedAt", "lastSeenAt", "expireAt"].find(
          (k) => typeof out[k] === "string",
        ) ?? "createdAt";
      out[key] = 1_700_000_000;
      this.#serve(stream, id, false);
      return out;
    }
    // missingMember: the id (a device's deviceId) is the one member a record cannot lack.
    const idKey = stream === "user_devices" ? "deviceId" : "id";
    delete out[idKey];
    this.#serve(stream, id, false, markOf(out));
    return out;
  }

  #serve(
    stream: MutationStream,
    id: string,
    readable: boolean,
    mark?: string,
  ): void {
    let m = this.#served.get(stream);
    if (!m) this.#served.set(stream, (m = new Map<string, ServedRecord>()));
    const r = m.get(id) ?? { readable: false, unreadable: false };
    if (readable) r.readable = true;
    else r.unreadable = true;
    if (mark !== undefined) r.mark = mark;
    m.set(id, r);
  }

  #listing(route: ListingRoute, body: Json, answer: Json, nowMs: number): Json {
    const parent = route.parentOf?.(body) ?? "";
    // A user absent now has no devices to list.
    const parentGone =
      route.stream === "user_devices" && this.absent("users", parent, nowMs);
    const items = parentGone
      ? []
      : ((answer[route.member] as Json[] | undefined) ?? []).filter(
          (o) => !this.absent(route.stream, route.idOf(o, body), nowMs, o),
        );
    const served = items.map((o) =>
      route.stream === "inventory"
        ? this.#inventoryObject(o, nowMs)
        : this.#record(route.stream, route.idOf(o, body), o, nowMs),
    );
    const pageKey = [route.stream, parent, str(body.cursor), this.#slot(nowMs)];
    const first = served[0];
    if (first !== undefined && this.#drawn("duplicateId", ...pageKey))
      served.push(clone(first));
    const meta = isObject(answer.listMetadata)
      ? { ...answer.listMetadata }
      : undefined;
    const out: Json = { ...answer };
    delete out[route.member];
    if (served.length > 0) out[route.member] = served;
    if (meta !== undefined) {
      if (served.length > 0) meta.count = served.length;
      else delete meta.count;
      if (this.#drawn("disagree", ...pageKey)) meta.count = served.length + 1;
      out.listMetadata = meta;
    }
    return out;
  }

  /** An InventoryObject: its columns are the records (mutated and served one by one). */
  #inventoryObject(o: Json, nowMs: number): Json {
    const out = clone(o);
    for (const c of columnsOf(out)) {
      const id = str(c.id);
      const mutated = this.#record("inventory", id, c, nowMs);
      if (mutated === c) continue;
      for (const k of Object.keys(c)) delete c[k];
      Object.assign(c, mutated);
    }
    return out;
  }

  #sessions(path: string, answer: unknown, nowMs: number): unknown {
    if (!isObject(answer)) return answer;
    const json = answer;
    if (path === GET_SESSION_PATH) {
      if (!isObject(json.session)) return json;
      return { ...json, session: this.#session(json.session, nowMs) };
    }
    const list = json.sessions;
    if (!Array.isArray(list)) return json;
    const served = (list as Json[]).map((s) => this.#session(s, nowMs));
    const first = served[0];
    if (
      first !== undefined &&
      this.#drawn("duplicateId", "sessions", str(first.id), this.#slot(nowMs))
    )
      served.push(clone(first));
    const out: Json = { ...json, sessions: served };
    // The page's count follows what it carries (a disagreeing count is "disagree"'s).
    if (isObject(json.listMetadata) && json.listMetadata.count !== undefined)
      out.listMetadata = { ...json.listMetadata, count: served.length };
    return out;
  }

  #session(s: Json, nowMs: number): Json {
    const id = str(s.id);
    const start = Date.parse(str(s.startTime));
    let out = s;
    if (
      Number.isFinite(start) &&
      this.#drawn("corrected", "sessions", id) &&
      nowMs >= start + CORRECTION_DELAY_MS
    ) {
      const minutes =
        2 +
        Math.floor(hashUnit(this.seed, "correction", id) * CORRECTION_MINUTES);
      out = {
        ...s,
        startTime: new Date(start + minutes * MINUTE_MS).toISOString(),
      };
    }
    const kind = this.#recordKind("sessions", id, nowMs);
    if (kind === "wrongType") {
      out = {
        ...out,
        startTime: Number.isFinite(start) ? Math.floor(start / 1000) : 0,
      };
    } else if (kind === "missingMember") {
      out = { ...out };
      delete out.startTime;
    }
    this.#serve("sessions", id, kind === undefined);
    return out;
  }

  #aggregation(body: Json, answer: unknown, nowMs: number): unknown {
    if (!isObject(answer)) return answer;
    const json = answer;
    const query = str(body.query);
    const req = parseListLogAggregationsRequest(body);
    const { startMs, endMs } = req;
    const groupBy: string[] = [...req.groupBy];
    const key = [query, groupBy.join(","), startMs, this.#slot(nowMs)];
    const record: AggregationAnswer = {
      query,
      groupBy,
      startMs,
      endMs,
      atMs: nowMs,
    };
    let out: Json = json;
    if (this.#drawn("duplicateKey", ...key)) {
      const split = splitKeys(json);
      if (split !== undefined) {
        out = split;
        record.mutation = "duplicateKey";
      }
    } else if (this.#drawn("disagree", ...key)) {
      const lowered = lowerStep(json);
      if (lowered !== undefined) {
        out = lowered;
        record.mutation = "disagree";
      }
    }
    this.#answers.set(JSON.stringify([query, groupBy, startMs]), record);
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Ground truth

  served(stream: MutationStream): ReadonlyMap<string, ServedRecord> {
    return new Map(
      [...(this.#served.get(stream) ?? new Map<string, ServedRecord>())].map(
        ([id, r]) => [id, { ...r }],
      ),
    );
  }

  clearServed(): void {
    this.#served.clear();
  }

  aggregationAnswers(): AggregationAnswer[] {
    return [...this.#answers.values()].map((a) => ({
      ...a,
      groupBy: [...a.groupBy],
    }));
  }

  /**
   * The ids a complete, faithful read of `stream` returns at `nowMs` (the id as the exporter's
   * table names it: `userId/deviceId` for a device, a column's id for inventory). Inventory
   * columns marked for deletion are not held. Sessions: use `sessionIds`.
   */
  held(
    stream: Exclude<MutationStream, "sessions">,
    nowMs: number,
  ): Set<string> {
    const d = this.directory;
    const ids = new Set<string>();
    const keep = (s: MutationStream, id: string, o?: Json) => {
      if (id !== "" && !this.absent(s, id, nowMs, o)) ids.add(id);
    };
    switch (stream) {
      case "users":
        for (const u of this.generator.index.userById.values())
          if (d.user(u.id, nowMs) !== undefined) keep("users", u.id);
        break;
      case "user_devices":
        for (const u of this.generator.index.humans) {
          if (this.absent("users", u.id, nowMs)) continue;
          for (const dev of d.devices(u.id, nowMs))
            keep("user_devices", `${u.id}/${str(dev.deviceId)}`);
        }
        break;
      case "native_users":
        for (const n of d.nativeUsers)
          if (d.nativeUserPresent(n, nowMs)) keep("native_users", n.id);
        break;
      case "identity_links":
        for (const l of d.links(nowMs)) keep("identity_links", str(l.id));
        break;
      case "inventory":
        for (const o of d.inventory(nowMs)) {
          if (this.absent("inventory", inventoryIdOf(o), nowMs)) continue;
          for (const c of columnsOf(o))
            if (c.markedForDeletionAt === undefined) ids.add(str(c.id));
        }
        break;
      case "clouds":
        for (const c of d.clouds(nowMs)) keep("clouds", str(c.id));
        break;
      case "policy_suspensions":
        for (const s of d.suspensions(nowMs))
          keep("policy_suspensions", str(s.id), s);
        break;
    }
    return ids;
  }
}

/** Ids of the sessions starting in [fromMs, toMs) that exist by `nowMs`. */
export function sessionIdsIn(
  generator: SessionGenerator,
  fromMs: number,
  toMs: number,
  nowMs: number,
): Set<string> {
  const ids = new Set<string>();
  for (const s of generator.sessionsStartingIn(
    fromMs,
    Math.min(toMs, nowMs + 1),
  ))
    ids.add(s.id);
  return ids;
}

interface Bucket {
  key?: unknown;
  count?: unknown;
  buckets?: unknown;
}

/** The first leaf bucket (and the first top value) of count ≥ 2 split in two entries of the
 *  same key, 40 % and 60 % of it; undefined when there is none. */
function splitKeys(answer: Json): Json | undefined {
  const out = clone(answer);
  const aggs = isObject(out.aggregations) ? out.aggregations : undefined;
  if (aggs === undefined) return undefined;
  let split = false;
  const splitIn = (list: Bucket[]): void => {
    for (let i = 0; i < list.length && !split; i++) {
      const b = list[i] as Bucket;
      if (Array.isArray(b.buckets) && b.buckets.length > 0) {
        splitIn(b.buckets as Bucket[]);
        continue;
      }
      const n = Number(b.count ?? 0);
      if (!(n >= 2)) continue;
      const a = Math.max(1, Math.floor(n * 0.4));
      list.splice(i, 1, { ...b, count: a }, { ...b, count: n - a });
      split = true;
    }
  };
  const steps = Array.isArray(aggs.logsOverTime)
    ? (aggs.logsOverTime as Json[])
    : [];
  for (const step of steps) {
    if (split) break;
    if (Array.isArray(step.buckets)) splitIn(step.buckets as Bucket[]);
  }
  for (const [member, v] of Object.entries(aggs)) {
    if (member === "logsOverTime" || !Array.isArray(v)) continue;
    const list = v as Bucket[];
    const i = list.findIndex((t) => Number(t.count ?? 0) >= 2);
    const t = list[i];
    if (t === undefined) continue;
    const n = Number(t.count);
    const a = Math.max(1, Math.floor(n * 0.4));
    list.splice(i, 1, { ...t, count: a }, { ...t, count: n - a });
    split = true;
    break;
  }
  return split ? out : undefined;
}

/** The first histogram step of count ≥ 2 counted half: its buckets and numHits say more. */
function lowerStep(answer: Json): Json | undefined {
  const out = clone(answer);
  const aggs = isObject(out.aggregations) ? out.aggregations : undefined;
  const steps = Array.isArray(aggs?.logsOverTime)
    ? (aggs.logsOverTime as Json[])
    : [];
  const step = steps.find((s) => Number(s.count ?? 0) >= 2);
  if (step === undefined) return undefined;
  step.count = Math.floor(Number(step.count) / 2);
  return out;
}
