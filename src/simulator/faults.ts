// Fault injection: the failures an exporter meets in production (throttling, outages, a proxy's
// HTML error page, slow or cut responses, malformed records, overlapping pages, expired
// cursors) and the answers that arrive intact but lie (wrong shapes, counts as strings, cursor
// loops, records that cannot be stored as they are, vanished and late sessions, poisoned
// aggregation windows), on demand and reproducibly. Request faults are drawn from (fault seed,
// request number), so the same run of requests meets the same faults; broken records and
// session faults are chosen by (fault seed, session id), and poisoned windows by (fault seed,
// query, grouping, window start), so they are broken identically every time they are served
// and a retry cannot "fix" them — exactly what dead-lettering must cope with. How the wire
// faults look on the wire is in wire-faults.ts.

import { createRng, hash32, hashUnit } from "./random.js";
import type { WireSession } from "./wire.js";

/** The transport and paging faults; `all=<rate>` in a fault spec sets these and only these. */
export const CLASSIC_FAULT_KINDS = [
  "rate429",
  "rate503",
  "rate502html",
  "slow",
  "reset",
  "truncate",
  "badRecord",
  "duplicate",
  "expiredCursor",
] as const;

/**
 * Answers that arrive intact but lie: wrong shapes, counts as strings, cursor loops, records
 * that cannot be stored as they are, sessions that vanish or show up late, poisoned windows.
 */
export const WIRE_FAULT_KINDS = [
  "wrongShape",
  "emptyAggregation",
  "stringCounts",
  "cursorCycle",
  "badUtf8",
  "hugeRecord",
  "vanishedSession",
  "lateSession",
  "badDates",
  "badWindow",
] as const;

/**
 * A Get (GetSession, GetUser) answered with another object: no retry and no later run stores
 * anything of it, so the object asked for stays pending (and a run that reads it fails) for as
 * long as the service answers so. Apart from the wire faults, which a long run meets and still
 * completes; switched on by name like them.
 */
const OTHER_OBJECT_FAULT_KINDS = ["otherObject"] as const;

const FAULT_KINDS = [
  ...CLASSIC_FAULT_KINDS,
  ...WIRE_FAULT_KINDS,
  ...OTHER_OBJECT_FAULT_KINDS,
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultOptions {
  /**
   * Probability of each fault in [0, 1]: per request for request faults, per session id for
   * record and session faults, per (query, grouping, window start) for badWindow.
   */
  rates?: Partial<Record<FaultKind, number>>;
  /** Seed of the fault draws; default 1. */
  seed?: number;
  /** Delay of a `slow` response in ms; default 2000. */
  slowMs?: number;
  /** A `hugeRecord` is padded to more than this many bytes; default 70 MiB. */
  hugeRecordBytes?: number;
  /** A `lateSession` is listed only this long (simulated time) after its start; default 3 h. */
  lateMs?: number;
}

/** Faults that replace or damage the response; at most one per request. */
type ResponseFault =
  | "rate429"
  | "rate503"
  | "rate502html"
  | "expiredCursor"
  | "reset"
  | "truncate";

const RESPONSE_FAULTS: readonly ResponseFault[] = [
  "rate429",
  "rate503",
  "rate502html",
  "expiredCursor",
  "reset",
  "truncate",
];

export interface RequestFaults {
  /** 1-based number of the request among those that reached fault decision. */
  requestNumber: number;
  slow: boolean;
  response: ResponseFault | undefined;
  /** Sessions of the previous page to repeat at the start of this one (0 = none). */
  duplicate: number;
  /** truncate: "short" = a shorter body with a matching Content-Length (invalid JSON);
   *  "cut" = the full Content-Length announced, half the body sent, then the connection closed. */
  truncateMode: "short" | "cut";
  /** Fraction of the body written before a reset or cut. */
  cutFraction: number;
  /** HTTP 200 and valid JSON, but not the shape of the operation's answer. */
  wrongShape: boolean;
  /** Which wrong shape (index into the shapes of the operation). */
  shapeVariant: number;
  /** ListLogAggregations answers `{}`. */
  emptyAggregation: boolean;
  /** Aggregation counts written as JSON strings (valid proto3 JSON for int64). */
  stringCounts: boolean;
  /** The page's nextCursor points back to an earlier page of the same window. */
  cursorCycle: boolean;
  /** How many pages before this one the looping cursor points to (0 = this page again). */
  cycleBack: number;
}

export type BrokenRecordKind =
  "missingId" | "numericStartTime" | "invalidStartTime";

export interface BrokenRecord {
  sessionId: string;
  kind: BrokenRecordKind;
  /** The record as served (after corruption). */
  record: Record<string, unknown>;
  /** Its JSON text exactly as it appeared in the page. */
  raw: string;
}

const BROKEN_KINDS: readonly BrokenRecordKind[] = [
  "missingId",
  "numericStartTime",
  "invalidStartTime",
];

export function isBrokenRecordKind(kind: string): kind is BrokenRecordKind {
  return (BROKEN_KINDS as readonly string[]).includes(kind);
}

/** Records the exporter cannot store as they are, persistent per session id. */
export type FaultedRecordKind =
  BrokenRecordKind | "badUtf8" | "hugeRecord" | "badDates";

const WIRE_RECORD_FAULTS = ["badUtf8", "hugeRecord", "badDates"] as const;

/** The impossible value a `badDates` record carries. */
export type BadDatesVariant =
  "impossibleDate" | "year1800" | "year2400" | "negativeDuration";

const BAD_DATES_VARIANTS: readonly BadDatesVariant[] = [
  "impossibleDate",
  "year1800",
  "year2400",
  "negativeDuration",
];

/** A record broken on purpose, as last served. */
export interface FaultedRecord {
  sessionId: string;
  kind: FaultedRecordKind;
  /** badDates: which impossible value; the `kind` of the other record faults. */
  variant: string;
  /** The record's bytes exactly as they appeared in the page. */
  bytes: Buffer;
  /** `bytes` as UTF-8 text (for badUtf8 lossy: the invalid sequences read as U+FFFD). */
  raw: string;
}

/** Sessions whose presence misleads, persistent per session id. */
type SessionFaultKind = "vanishedSession" | "lateSession";

export interface FaultedSession {
  sessionId: string;
  kind: SessionFaultKind;
  startMs: number;
  /** lateSession: the first instant it is listed (startMs + lateMs). */
  listedFromMs?: number;
}

/** A ListLogAggregations window that always answers a broken answer. */
export interface BrokenWindow {
  query: string;
  groupBy: readonly string[];
  /** The request's startTimestamp, epoch ms. */
  startMs: number;
  /** What is wrong with its answer. */
  variant: BrokenWindowVariant;
}

export type BrokenWindowVariant =
  "missingAggregations" | "negativeNumHits" | "fractionalCount";

const BROKEN_WINDOW_VARIANTS: readonly BrokenWindowVariant[] = [
  "missingAggregations",
  "negativeNumHits",
  "fractionalCount",
];

const DEFAULT_SLOW_MS = 2000;
const DEFAULT_HUGE_RECORD_BYTES = 70 * 1024 * 1024;
const DEFAULT_LATE_MS = 3 * 3_600_000;

/** Request faults drawn after the classic ones, in this order (one draw each, always). */
const REQUEST_WIRE_FAULTS = [
  "wrongShape",
  "emptyAggregation",
  "stringCounts",
  "cursorCycle",
] as const;

export class FaultInjector {
  readonly seed: number;
  readonly slowMs: number;
  readonly hugeRecordBytes: number;
  readonly lateMs: number;
  private readonly rates: Readonly<Record<FaultKind, number>>;
  private counter = 0;

  constructor(options: FaultOptions = {}) {
    this.seed = options.seed ?? 1;
    this.slowMs = options.slowMs ?? DEFAULT_SLOW_MS;
    this.hugeRecordBytes = options.hugeRecordBytes ?? DEFAULT_HUGE_RECORD_BYTES;
    this.lateMs = options.lateMs ?? DEFAULT_LATE_MS;
    for (const [name, v] of [
      ["slowMs", this.slowMs],
      ["hugeRecordBytes", this.hugeRecordBytes],
      ["lateMs", this.lateMs],
    ] as const) {
      if (!(v >= 0 && Number.isFinite(v)))
        throw new RangeError(`faults: ${name} must be ≥ 0, got ${v}`);
    }
    const rates = {} as Record<FaultKind, number>;
    for (const kind of FAULT_KINDS) {
      const r = options.rates?.[kind] ?? 0;
      if (!(r >= 0 && r <= 1))
        throw new RangeError(`faults: ${kind} must be in [0, 1], got ${r}`);
      rates[kind] = r;
    }
    this.rates = rates;
  }

  rate(kind: FaultKind): number {
    return this.rates[kind];
  }

  get enabled(): boolean {
    return FAULT_KINDS.some((k) => this.rates[k] > 0);
  }

  /** The kinds switched on (rate > 0). */
  enabledKinds(): FaultKind[] {
    return FAULT_KINDS.filter((k) => this.rates[k] > 0);
  }

  /** Draws the faults of the next request. `hasCursor`: only then can a cursor expire. */
  decide(hasCursor: boolean): RequestFaults {
    const requestNumber = ++this.counter;
    const rng = createRng(hash32(this.seed, "request", requestNumber));
    // Every draw happens whatever came before, so one rate change does not reshuffle the
    // decisions of the other faults; later kinds draw after the earlier ones.
    const slow = rng.next() < this.rates.slow;
    let response: ResponseFault | undefined;
    for (const kind of RESPONSE_FAULTS) {
      const u = rng.next();
      if (response !== undefined) continue;
      if (kind === "expiredCursor" && !hasCursor) continue;
      if (u < this.rates[kind]) response = kind;
    }
    const duplicate = rng.next() < this.rates.duplicate ? rng.int(1, 5) : 0;
    const truncateMode = rng.next() < 0.5 ? "short" : "cut";
    const cutFraction = 0.2 + 0.6 * rng.next();
    const wire = {} as Record<(typeof REQUEST_WIRE_FAULTS)[number], boolean>;
    for (const kind of REQUEST_WIRE_FAULTS)
      wire[kind] = rng.next() < this.rates[kind];
    const shapeVariant = rng.int(0, 1);
    const cycleBack = rng.int(0, 1);
    return {
      requestNumber,
      slow,
      response,
      duplicate,
      truncateMode,
      cutFraction,
      ...wire,
      shapeVariant,
      cycleBack,
    };
  }

  /** How the record of `sessionId` is broken, if it is: the same answer every time. */
  brokenKind(sessionId: string): BrokenRecordKind | undefined {
    const rate = this.rates.badRecord;
    if (rate <= 0) return undefined;
    if (hashUnit(this.seed, "badRecord", sessionId) >= rate) return undefined;
    return BROKEN_KINDS[
      hash32(this.seed, "badRecordKind", sessionId) % BROKEN_KINDS.length
    ];
  }

  /** True when some record or session fault is switched on (pages then check every id). */
  get perSession(): boolean {
    return (
      this.rates.badRecord > 0 ||
      WIRE_RECORD_FAULTS.some((k) => this.rates[k] > 0) ||
      this.rates.vanishedSession > 0 ||
      this.rates.lateSession > 0
    );
  }

  /** The record fault of `sessionId` (at most one; badRecord first), the same every time. */
  recordFault(sessionId: string): FaultedRecordKind | undefined {
    const broken = this.brokenKind(sessionId);
    if (broken !== undefined) return broken;
    for (const kind of WIRE_RECORD_FAULTS) {
      const rate = this.rates[kind];
      if (rate > 0 && hashUnit(this.seed, kind, sessionId) < rate) return kind;
    }
    return undefined;
  }

  /** The badDates value of `sessionId` it would carry if it were completed. */
  badDatesVariant(sessionId: string): BadDatesVariant {
    return BAD_DATES_VARIANTS[
      hash32(this.seed, "badDatesVariant", sessionId) %
        BAD_DATES_VARIANTS.length
    ] as BadDatesVariant;
  }

  /** The session fault of `sessionId`: only sessions whose record is intact get one. */
  sessionFault(sessionId: string): SessionFaultKind | undefined {
    const v = this.rates.vanishedSession;
    const l = this.rates.lateSession;
    if (v <= 0 && l <= 0) return undefined;
    if (this.recordFault(sessionId) !== undefined) return undefined;
    if (v > 0 && hashUnit(this.seed, "vanishedSession", sessionId) < v)
      return "vanishedSession";
    if (l > 0 && hashUnit(this.seed, "lateSession", sessionId) < l)
      return "lateSession";
    return undefined;
  }

  /**
   * Whether a Get of `id` (GetSession, GetUser) is answered with another object (otherObject):
   * the same answer every time.
   */
  answersOtherObject(id: string): boolean {
    const rate = this.rates.otherObject;
    return rate > 0 && hashUnit(this.seed, "otherObject", id) < rate;
  }

  /** False while a late session is not listed yet. */
  listed(sessionId: string, startMs: number, nowMs: number): boolean {
    if (this.rates.lateSession <= 0) return true;
    if (nowMs >= startMs + this.lateMs) return true;
    return this.sessionFault(sessionId) !== "lateSession";
  }

  /** What is wrong with the answers of this aggregation window, if it is poisoned. */
  brokenWindow(
    query: string,
    groupBy: readonly string[],
    startMs: number,
  ): BrokenWindowVariant | undefined {
    const rate = this.rates.badWindow;
    if (rate <= 0) return undefined;
    const key = [query, groupBy.join(","), startMs] as const;
    if (hashUnit(this.seed, "badWindow", ...key) >= rate) return undefined;
    return BROKEN_WINDOW_VARIANTS[
      hash32(this.seed, "badWindowVariant", ...key) %
        BROKEN_WINDOW_VARIANTS.length
    ];
  }

  /** Corrupts a wire record in place in the recognisable way of `kind`. */
  static corrupt(
    record: WireSession,
    kind: BrokenRecordKind,
    startMs: number,
  ): Record<string, unknown> {
    const out = record as unknown as Record<string, unknown>;
    switch (kind) {
      case "missingId":
        delete out.id;
        break;
      case "numericStartTime":
        out.startTime = Math.floor(startMs / 1000);
        break;
      case "invalidStartTime":
        out.startTime = "not-a-date";
        break;
    }
    return out;
  }
}

/** `wrong-shape` → `wrongShape`: spec names may be written either way. */
function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `wrongShape` → `wrong-shape`, the form the documentation uses for the wire faults. */
function kebabCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** One `name=value` item of a `--faults` or `--mutations` spec. */
interface SpecItem {
  /** The name as written; `name` is its camelCase form. */
  written: string;
  name: string;
  text: string;
  value: number;
}

/**
 * The items of a spec such as `rate429=0.05,seed=7`: each a name and a number, or an error
 * naming the flag, the item and the `known` names. Empty items are skipped.
 */
function* specItems(
  flag: string,
  spec: string,
  known: string,
): Generator<SpecItem> {
  for (const raw of spec.split(",")) {
    const item = raw.trim();
    if (item === "") continue;
    const eq = item.indexOf("=");
    if (eq <= 0)
      throw new Error(
        `${flag}: "${item}" is not <name>=<value> (names: ${known})`,
      );
    const written = item.slice(0, eq).trim();
    const text = item.slice(eq + 1).trim();
    const value = Number(text);
    if (text === "" || !Number.isFinite(value))
      throw new Error(`${flag}: ${written}=${text} is not a number`);
    yield { written, name: camelCase(written), text, value };
  }
}

/** What a spec of rates names: its flag, kinds and other options. */
export interface RateSpec<K extends string> {
  flag: string;
  /** What a kind is called in messages: "fault", "mutation". */
  noun: string;
  /** The kinds a rate is given for (camelCase). */
  kinds: readonly K[];
  /** The kinds `all=<rate>` sets (an explicit rate wins whatever its position). */
  allKinds: readonly K[];
  /** The kinds as the list of known names shows them. */
  shown: readonly string[];
  /** Every other option and what its value must be, when it is not ("an integer"). */
  options: Readonly<Record<string, (value: number) => string | undefined>>;
}

/** The rates and options of a spec such as `all=0.05,seed=7`, or an error naming the flag. */
export function parseRates<K extends string>(
  spec: string,
  shape: RateSpec<K>,
): { rates: Partial<Record<K, number>>; options: Record<string, number> } {
  const rates: Partial<Record<K, number>> = {};
  const options: Record<string, number> = {};
  let all: number | undefined;
  const known = [...shape.shown, "all", ...Object.keys(shape.options)].join(
    ", ",
  );
  for (const { written, name, text, value } of specItems(
    shape.flag,
    spec,
    known,
  )) {
    const check = shape.options[name];
    const problem = check?.(value);
    if (problem !== undefined)
      throw new Error(`${shape.flag}: ${written}=${text} must be ${problem}`);
    if (check !== undefined) options[name] = value;
    else if (
      name === "all" ||
      (shape.kinds as readonly string[]).includes(name)
    ) {
      if (value < 0 || value > 1)
        throw new Error(
          `${shape.flag}: ${written}=${text} must be a rate between 0 and 1`,
        );
      if (name === "all") all = value;
      else rates[name as K] = value;
    } else
      throw new Error(
        `${shape.flag}: unknown ${shape.noun} "${written}" (known: ${known})`,
      );
  }
  if (all !== undefined) for (const k of shape.allKinds) rates[k] ??= all;
  return { rates, options };
}

/** A whole number, for a seed. */
export const integer = (v: number): string | undefined =>
  Number.isInteger(v) ? undefined : "an integer";
const notNegative = (v: number): string | undefined =>
  v >= 0 ? undefined : "≥ 0";

/**
 * CLI form: `rate429=0.05,wrong-shape=0.02,…,seed=7,slowMs=500,hugeRecordBytes=1048576,
 * lateMs=10800000`. Names are camelCase or kebab-case (`bad-utf8` = `badUtf8`). `all=<rate>`
 * sets the nine classic faults (CLASSIC_FAULT_KINDS), never the wire faults nor otherObject; explicit rates
 * override it whatever their position.
 */
export function parseFaultSpec(spec: string): FaultOptions {
  const { rates, options } = parseRates(spec, {
    flag: "--faults",
    noun: "fault",
    kinds: FAULT_KINDS,
    allKinds: CLASSIC_FAULT_KINDS,
    shown: [
      ...CLASSIC_FAULT_KINDS,
      ...[...WIRE_FAULT_KINDS, ...OTHER_OBJECT_FAULT_KINDS].map(kebabCase),
    ],
    options: {
      seed: integer,
      slowMs: notNegative,
      hugeRecordBytes: notNegative,
      lateMs: notNegative,
    },
  });
  return { rates, ...options };
}
