// Fault injection: the failures an exporter meets in production (throttling, outages, a proxy's
// HTML error page, slow or cut responses, malformed records, overlapping pages, expired
// cursors), on demand and reproducibly. Request faults are drawn from (fault seed, request
// number), so the same run of requests meets the same faults; broken records are chosen by
// (fault seed, session id), so a record is broken identically every time it is served and a
// retry cannot "fix" it — exactly what dead-lettering must cope with.

import { createRng, hash32, hashUnit } from "./random.js";
import type { WireSession } from "./wire.js";

export const FAULT_KINDS = [
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
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultOptions {
  /** Probability per request (per served session for badRecord), each in [0, 1]. */
  rates?: Partial<Record<FaultKind, number>>;
  /** Seed of the fault draws; default 1. */
  seed?: number;
  /** Delay of a `slow` response in ms; default 2000. */
  slowMs?: number;
}

/** Faults that replace or damage the response; at most one per request. */
export type ResponseFault =
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

export const DEFAULT_SLOW_MS = 2000;

export class FaultInjector {
  readonly seed: number;
  readonly slowMs: number;
  private readonly rates: Readonly<Record<FaultKind, number>>;
  private counter = 0;

  constructor(options: FaultOptions = {}) {
    this.seed = options.seed ?? 1;
    this.slowMs = options.slowMs ?? DEFAULT_SLOW_MS;
    if (!(this.slowMs >= 0 && Number.isFinite(this.slowMs))) {
      throw new RangeError(`faults: slowMs must be ≥ 0, got ${this.slowMs}`);
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

  /** Draws the faults of the next request. `hasCursor`: only then can a cursor expire. */
  decide(hasCursor: boolean): RequestFaults {
    const requestNumber = ++this.counter;
    const rng = createRng(hash32(this.seed, "request", requestNumber));
    // Every draw happens whatever came before, so one rate change does not reshuffle the
    // decisions of the other faults.
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
    return {
      requestNumber,
      slow,
      response,
      duplicate,
      truncateMode,
      cutFraction,
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

/**
 * CLI form: `rate429=0.05,rate503=0.05,…,seed=7,slowMs=500`; `all=<rate>` sets every rate and
 * explicit rates override it whatever their position.
 */
export function parseFaultSpec(spec: string): FaultOptions {
  const rates: Partial<Record<FaultKind, number>> = {};
  let all: number | undefined;
  let seed: number | undefined;
  let slowMs: number | undefined;
  const known = [...FAULT_KINDS, "all", "seed", "slowMs"].join(", ");
  for (const raw of spec.split(",")) {
    const item = raw.trim();
    if (item === "") continue;
    const eq = item.indexOf("=");
    if (eq <= 0)
      throw new Error(
        `--faults: "${item}" is not <name>=<value> (names: ${known})`,
      );
    const name = item.slice(0, eq).trim();
    const valueText = item.slice(eq + 1).trim();
    const value = Number(valueText);
    if (valueText === "" || !Number.isFinite(value)) {
      throw new Error(`--faults: ${name}=${valueText} is not a number`);
    }
    if (name === "seed") {
      if (!Number.isInteger(value))
        throw new Error(`--faults: seed=${valueText} must be an integer`);
      seed = value;
    } else if (name === "slowMs") {
      if (value < 0)
        throw new Error(`--faults: slowMs=${valueText} must be ≥ 0`);
      slowMs = value;
    } else if (
      name === "all" ||
      (FAULT_KINDS as readonly string[]).includes(name)
    ) {
      if (value < 0 || value > 1) {
        throw new Error(
          `--faults: ${name}=${valueText} must be a rate between 0 and 1`,
        );
      }
      if (name === "all") all = value;
      else rates[name as FaultKind] = value;
    } else {
      throw new Error(`--faults: unknown fault "${name}" (known: ${known})`);
    }
  }
  if (all !== undefined) {
    for (const kind of FAULT_KINDS) rates[kind] ??= all;
  }
  return {
    rates,
    ...(seed === undefined ? {} : { seed }),
    ...(slowMs === undefined ? {} : { slowMs }),
  };
}
