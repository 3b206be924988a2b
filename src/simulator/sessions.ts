// The session generator. Sessions are generated per UTC hour from (seed, hour index) alone, so
// what any window holds depends only on the seed and absolute time — never on when the
// simulator started or what was asked before. That is what makes paging, restarts and
// two simulators side by side agree, and lets getSession(id) regenerate one hour.

import type {
  MachineKind,
  SessionStatus,
  SimOrg,
  SimResource,
  SimSession,
  SimUser,
  Technology,
} from "./model.js";
import {
  appName,
  buildOrg,
  indexOrg,
  type OrgIndex,
  type OrgSize,
} from "./org.js";
import {
  createRng,
  hash32,
  hashId,
  hashUnit,
  WeightedTable,
  type Rng,
} from "./random.js";
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from "./time.js";

interface SessionGeneratorOptions {
  seed: number;
  orgSize?: OrgSize;
  /** Mean sessions per day over a week (weekdays carry ≈1.2×, weekend days ≈0.55×). */
  sessionsPerDay?: number;
  /** Sessions before this instant are hidden (floored to the UTC hour; align to a UTC day). */
  historyStartMs: number;
  /** Cap on any session's duration; default 3 days. */
  maxDurationMs?: number;
  /** Bound of the hour cache, in sessions (at least two hours are always kept). */
  maxCachedSessions?: number;
  /** One discovery sweep a day (see DISCOVERY_SWEEP_RESOURCES); default off. */
  discoverySweeps?: boolean;
  /** Client addresses of an intruder: one session a day from each (addIntruderSessions); default none. */
  intruderAddresses?: readonly string[];
}

export interface SessionGenerator {
  readonly org: SimOrg;
  /** Lookups over `org` (users, resources, … by id; group names of users). */
  readonly index: OrgIndex;
  readonly seed: number;
  readonly historyStartMs: number;
  /** Cap on any session's duration. */
  readonly maxDurationMs: number;
  /** Sessions whose startMs is in [fromMs, toMs), sorted by (startMs, id). Only within history. */
  sessionsStartingIn(fromMs: number, toMs: number): SimSession[];
  /** All sessions starting in UTC hour `hour` (= floor(ms / 3600000)), sorted; cached, do not mutate. */
  sessionsInHour(hour: number): readonly SimSession[];
  getSession(id: string): SimSession | undefined;
}

const DEFAULT_SESSIONS_PER_DAY = 10_000;
const DEFAULT_MAX_DURATION_MS = 3 * DAY_MS;

/** Order of every session list: start time, then id. */
function compareSessions(a: SimSession, b: SimSession): number {
  if (a.startMs !== b.startMs) return a.startMs - b.startMs;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR_MS);
}

const STATUS_SLOT_MS = 5 * MINUTE_MS;

/** Percentage of sessions without an end user made through a native user directly. */
const THROUGH_NATIVE_USER_PERCENT = 4;

/**
 * Whether a session was made through its native user directly, with no identity of the
 * service's own (its wire record has no brand member, user type "native"): about 4 % of the
 * sessions that have a native user name and no end user. Who is behind it is known only
 * through the native user's identity link.
 */
export function throughNativeUser(seed: number, s: SimSession): boolean {
  return (
    s.nativeUsername !== "" &&
    s.endUserId === "" &&
    hash32(seed, "through-native-user", s.id) % 100 <
      THROUGH_NATIVE_USER_PERCENT
  );
}

/** Status at `nowMs`; undefined while the session has not started. */
export function statusAt(
  s: SimSession,
  nowMs: number,
): SessionStatus | undefined {
  if (nowMs < s.startMs) return undefined;
  if (nowMs >= s.startMs + s.durationMs) return "completed";
  // Idle spells flip every few minutes but identically for every observer at the same time.
  return hashUnit(s.id, Math.floor(nowMs / STATUS_SLOT_MS)) < 0.8
    ? "active"
    : "idle";
}

// ---------------------------------------------------------------------------------------
// Traffic shape

/** Human activity by UTC hour on a weekday (office hours with a lunch dip). */
const HUMAN_WEEKDAY = [
  0.02, 0.015, 0.01, 0.01, 0.01, 0.02, 0.05, 0.15, 0.45, 0.85, 1, 1, 0.8, 0.85,
  1, 1, 0.9, 0.7, 0.4, 0.2, 0.12, 0.08, 0.05, 0.03,
];
const HUMAN_WEEKEND_FACTOR = 0.15;
/** Machine traffic: steady, plus the nightly batch window. */
const MACHINE_BASE = 0.16;
const MACHINE_NIGHT_BUMP = 0.15;
const NIGHT_HOURS = new Set([0, 1, 2, 3, 4]);
/** Share of roots that spawn children, and children per such root on average. */
const CHILD_PARENT_SHARE = 0.05;
const MEAN_CHILDREN = 2;
/** Share of human activity that goes through a BI tool acting on the human's behalf. */
const BI_SHARE = 0.08;
/** Share of sessions on a resource other than the user's favourites (any resource). */
const WANDER_SHARE = 0.1;
/** Share of a person's sessions from their home address (the others from a VPN address). */
const HOME_ADDRESS_SHARE = 0.85;
const LONG_RUNNING_SHARE = 0.015;
/**
 * A discovery sweep: once a day, in an office hour (09–16 UTC), one person opens sessions to
 * this many different resources, 20–40 s apart, all within one 10-minute bucket. Drawn from
 * (seed, day) alone and added after the hour's other sessions, which stay as they are.
 */
const DISCOVERY_SWEEP_RESOURCES = 12;

interface HourWeights {
  human: number;
  machine: number;
}

/** Human and machine activity in UTC hour `hourIndex` (= floor(ms / 3600000)). */
export function weightsAt(hourIndex: number): HourWeights {
  const date = new Date(hourIndex * HOUR_MS);
  const dow = date.getUTCDay();
  const h = date.getUTCHours();
  const weekend = dow === 0 || dow === 6;
  const human = (HUMAN_WEEKDAY[h] ?? 0) * (weekend ? HUMAN_WEEKEND_FACTOR : 1);
  const machine = MACHINE_BASE + (NIGHT_HOURS.has(h) ? MACHINE_NIGHT_BUMP : 0);
  return { human, machine };
}

/** Sum of weights over one week: the normaliser that makes a day average sessionsPerDay. */
const WEEK_WEIGHT = (() => {
  let sum = 0;
  for (let h = 0; h < 7 * 24; h++) {
    const w = weightsAt(h);
    sum += w.human + w.machine;
  }
  return sum;
})();

const MACHINE_SESSION_KIND_WEIGHTS: Readonly<
  Record<Exclude<MachineKind, "bi">, number>
> = {
  batch: 40,
  app: 35,
  ci: 12,
  agent: 13,
};

/**
 * The traffic model's shares, for a generator outside the simulator that follows it (the
 * bench's organisation-shaped scale scenario).
 */
export const TRAFFIC_MODEL = {
  childParentShare: CHILD_PARENT_SHARE,
  meanChildren: MEAN_CHILDREN,
  biShare: BI_SHARE,
  wanderShare: WANDER_SHARE,
  homeAddressShare: HOME_ADDRESS_SHARE,
  machineKindWeights: MACHINE_SESSION_KIND_WEIGHTS,
} as const;

/** How much more often than others a user starts sessions (log-normal, median 1). */
export function activityOf(seed: number, u: SimUser): number {
  return createRng(hash32(seed, "activity", u.id)).logNormal(1, 0.8);
}

function durationMedianMs(
  user: SimUser,
  tech: Technology,
): { median: number; sigma: number } {
  if (user.type === "machine") {
    switch (user.machineKind ?? "batch") {
      case "batch":
        return { median: 8 * MINUTE_MS, sigma: 1.0 };
      case "app":
        return { median: 40 * SECOND_MS, sigma: 1.4 };
      case "ci":
        return { median: 90 * SECOND_MS, sigma: 0.9 };
      case "agent":
        return { median: 45 * SECOND_MS, sigma: 1.0 };
      case "bi":
        return { median: 15 * SECOND_MS, sigma: 1.2 };
    }
  }
  switch (tech) {
    case "ssh":
    case "rdp":
    case "kubernetes":
      return { median: 12 * MINUTE_MS, sigma: 1.1 };
    case "web":
      return { median: 6 * MINUTE_MS, sigma: 1.1 };
    case "llm":
    case "mcp":
      return { median: 2 * MINUTE_MS, sigma: 1.1 };
    default:
      return { median: 4 * MINUTE_MS, sigma: 1.2 };
  }
}

// ---------------------------------------------------------------------------------------

interface HourEntry {
  /** Sorted by (startMs, id). */
  sorted: SimSession[];
  /** By index (the index encoded in the id). */
  byIndex: SimSession[];
}

const ID_PATTERN = /^ses_([0-9a-z]{6})([0-9a-z]{5})([0-9a-z]{6})$/;

class Generator implements SessionGenerator {
  readonly org: SimOrg;
  readonly index: OrgIndex;
  readonly seed: number;
  readonly historyStartMs: number;
  readonly maxDurationMs: number;
  private readonly scale: number;
  private readonly maxCachedSessions: number;
  private readonly cache = new Map<number, HourEntry>();
  private cachedSessions = 0;

  private readonly humanTable: WeightedTable<SimUser> | undefined;
  private readonly machineKindTable: WeightedTable<MachineKind> | undefined;
  private readonly machineTables = new Map<
    MachineKind,
    WeightedTable<SimUser>
  >();
  private readonly biTable: WeightedTable<SimUser> | undefined;
  private readonly favouriteTables = new Map<
    string,
    WeightedTable<SimResource>
  >();
  private readonly homeIp = new Map<string, string>();
  private readonly discoverySweeps: boolean;
  private readonly intruderAddresses: readonly string[];

  constructor(o: SessionGeneratorOptions) {
    if (!Number.isFinite(o.historyStartMs))
      throw new RangeError("historyStartMs must be finite");
    const perDay = o.sessionsPerDay ?? DEFAULT_SESSIONS_PER_DAY;
    if (!(perDay >= 0 && Number.isFinite(perDay))) {
      throw new RangeError(`sessionsPerDay must be ≥ 0, got ${perDay}`);
    }
    this.seed = o.seed;
    this.org = buildOrg(o.seed, o.orgSize ?? "mid");
    this.index = indexOrg(this.org);
    this.historyStartMs = hourOf(o.historyStartMs) * HOUR_MS;
    this.maxDurationMs = o.maxDurationMs ?? DEFAULT_MAX_DURATION_MS;
    this.maxCachedSessions = o.maxCachedSessions ?? 400_000;
    this.discoverySweeps = o.discoverySweeps ?? false;
    this.intruderAddresses = o.intruderAddresses ?? [];
    // Roots per unit weight such that roots plus their children average perDay over a week.
    this.scale =
      (perDay * 7) / (WEEK_WEIGHT * (1 + CHILD_PARENT_SHARE * MEAN_CHILDREN));

    const activity = (u: SimUser): number => activityOf(o.seed, u);
    const { humans, machinesByKind } = this.index;
    this.humanTable =
      humans.length > 0
        ? new WeightedTable(humans, humans.map(activity))
        : undefined;
    for (const [kind, list] of machinesByKind) {
      if (list.length > 0)
        this.machineTables.set(
          kind,
          new WeightedTable(list, list.map(activity)),
        );
    }
    this.biTable = this.machineTables.get("bi");
    const kinds = (
      Object.keys(MACHINE_SESSION_KIND_WEIGHTS) as Exclude<MachineKind, "bi">[]
    ).filter((k) => this.machineTables.has(k));
    this.machineKindTable =
      kinds.length > 0
        ? new WeightedTable<MachineKind>(
            kinds,
            kinds.map((k) => MACHINE_SESSION_KIND_WEIGHTS[k]),
          )
        : undefined;
    for (const u of this.org.users) {
      const favs = this.index.favourites.get(u.id) ?? [];
      if (favs.length > 0) {
        this.favouriteTables.set(
          u.id,
          new WeightedTable(
            favs,
            favs.map((_, i) => 1 / (i + 1)),
          ),
        );
      }
      this.homeIp.set(u.id, homeIpOf(o.seed, u));
    }
  }

  sessionsInHour(hour: number): readonly SimSession[] {
    const hourStart = hour * HOUR_MS;
    if (hourStart < this.historyStartMs) return [];
    return this.entry(hour).sorted;
  }

  sessionsStartingIn(fromMs: number, toMs: number): SimSession[] {
    if (Number.isNaN(fromMs) || !Number.isFinite(toMs)) {
      throw new RangeError(
        "sessionsStartingIn needs a finite end (sessions exist at any time)",
      );
    }
    const from = Math.max(fromMs, this.historyStartMs);
    const out: SimSession[] = [];
    if (!(toMs > from)) return out;
    for (let h = hourOf(from); h <= hourOf(toMs - 1); h++) {
      const list = this.sessionsInHour(h);
      for (let i = lowerBoundStart(list, from); i < list.length; i++) {
        const s = list[i] as SimSession;
        if (s.startMs >= toMs) break;
        out.push(s);
      }
    }
    return out;
  }

  getSession(id: string): SimSession | undefined {
    const m = ID_PATTERN.exec(id);
    if (!m) return undefined;
    const hour = parseInt(m[1] ?? "", 36);
    const index = parseInt(m[2] ?? "", 36);
    if (m[3] !== sessionTag(this.seed, hour, index)) return undefined;
    if (hour * HOUR_MS < this.historyStartMs) return undefined;
    return this.entry(hour).byIndex[index];
  }

  private entry(hour: number): HourEntry {
    const hit = this.cache.get(hour);
    if (hit) {
      // Map iteration order is insertion order: re-inserting marks it most recently used.
      this.cache.delete(hour);
      this.cache.set(hour, hit);
      return hit;
    }
    const byIndex = this.generateHour(hour);
    const sorted = byIndex.slice().sort(compareSessions);
    const entry: HourEntry = { sorted, byIndex };
    this.cache.set(hour, entry);
    this.cachedSessions += byIndex.length;
    for (const [h, e] of this.cache) {
      if (this.cachedSessions <= this.maxCachedSessions || this.cache.size <= 2)
        break;
      this.cache.delete(h);
      this.cachedSessions -= e.byIndex.length;
    }
    return entry;
  }

  private generateHour(hour: number): SimSession[] {
    const rng = createRng(hash32(this.seed, "hour", hour));
    const w = weightsAt(hour);
    // A little day-to-day variation so that days are not carbon copies.
    const dayFactor =
      1 + 0.04 * (hashUnit(this.seed, "day", Math.floor(hour / 24)) * 2 - 1);
    const nHuman =
      this.humanTable || this.biTable
        ? rng.poisson(w.human * this.scale * dayFactor)
        : 0;
    const nMachine = this.machineKindTable
      ? rng.poisson(w.machine * this.scale * dayFactor)
      : 0;
    const hourStart = hour * HOUR_MS;
    const out: SimSession[] = [];
    for (let i = 0; i < nHuman + nMachine; i++) {
      const root = this.makeRoot(rng, hour, out.length, hourStart, i >= nHuman);
      if (!root) continue;
      out.push(root);
      if (rng.chance(CHILD_PARENT_SHARE)) {
        const n = rng.int(1, 3);
        for (let k = 0; k < n; k++) {
          const child = this.makeChild(rng, hour, out.length, hourStart, root);
          if (child) out.push(child);
        }
      }
    }
    if (this.discoverySweeps) this.addDiscoverySweep(hour, hourStart, out);
    for (const address of this.intruderAddresses)
      this.addIntruderSession(address, hour, hourStart, out);
    return out;
  }

  /**
   * Once a day, at an hour of its own, a session from `address`: a human user's credential used
   * by an intruder from their own infrastructure, to one of the organisation's resources.
   */
  private addIntruderSession(
    address: string,
    hour: number,
    hourStart: number,
    out: SimSession[],
  ): void {
    const day = Math.floor(hour / 24);
    const rng = createRng(hash32(this.seed, "intruder", address, day));
    if (hour !== day * 24 + rng.int(0, 23)) return;
    const user = this.humanTable?.pick(rng);
    const { resources } = this.org;
    if (!user || resources.length === 0) return;
    const resource = rng.pick(resources);
    out.push({
      id: sessionId(this.seed, hour, out.length),
      startMs: hourStart + rng.int(0, HOUR_MS - 1),
      durationMs: this.duration(rng, user, resource.technology),
      userId: user.id,
      endUserId: "",
      resourceId: resource.id,
      nativeUsername: pickNative(rng, resource),
      clientIpAddress: address,
      parentSessionId: "",
      applicationName: appName(rng, user, resource.technology),
    });
  }

  private addDiscoverySweep(
    hour: number,
    hourStart: number,
    out: SimSession[],
  ): void {
    const day = Math.floor(hour / 24);
    const rng = createRng(hash32(this.seed, "discovery-sweep", day));
    if (hour !== day * 24 + rng.int(9, 16)) return;
    const user = this.humanTable?.pick(rng);
    const { resources } = this.org;
    if (!user || resources.length < DISCOVERY_SWEEP_RESOURCES) return;
    const reached = new Set<SimResource>();
    while (reached.size < DISCOVERY_SWEEP_RESOURCES)
      reached.add(rng.pick(resources));
    // Starts at a 10-minute boundary (plus up to a minute): 12 starts 20–40 s apart end
    // within the bucket.
    let startMs =
      hourStart + rng.int(0, 4) * 10 * MINUTE_MS + rng.int(0, 59_999);
    for (const resource of reached) {
      out.push({
        id: sessionId(this.seed, hour, out.length),
        startMs,
        durationMs: this.duration(rng, user, resource.technology),
        userId: user.id,
        endUserId: "",
        resourceId: resource.id,
        nativeUsername: pickNative(rng, resource),
        clientIpAddress: this.clientIp(rng, user),
        parentSessionId: "",
        applicationName: appName(rng, user, resource.technology),
      });
      startMs += rng.int(20_000, 40_000);
    }
  }

  private pickUser(
    rng: Rng,
    machine: boolean,
  ): { user: SimUser; endUser: SimUser | undefined } | undefined {
    if (machine) {
      const kind = this.machineKindTable?.pick(rng);
      const table = kind ? this.machineTables.get(kind) : undefined;
      return table ? { user: table.pick(rng), endUser: undefined } : undefined;
    }
    const human = this.humanTable?.pick(rng);
    if (this.biTable && (!human || rng.chance(BI_SHARE))) {
      return { user: this.biTable.pick(rng), endUser: human };
    }
    return human ? { user: human, endUser: undefined } : undefined;
  }

  private makeRoot(
    rng: Rng,
    hour: number,
    index: number,
    hourStart: number,
    machine: boolean,
  ): SimSession | undefined {
    const who = this.pickUser(rng, machine);
    if (!who) return undefined;
    const { user, endUser } = who;
    const resource = this.pickResource(rng, user);
    let startMs = hourStart + Math.floor(rng.next() * HOUR_MS);
    // Mixed precision as stored by the real service: whole seconds, ms, µs, ns.
    let startSubMsNanos = 0;
    const precision = rng.next();
    if (precision < 0.1) startMs -= startMs % 1000;
    else if (precision >= 0.9) startSubMsNanos = rng.int(0, 999_999);
    else if (precision >= 0.55) startSubMsNanos = rng.int(0, 999) * 1000;
    const s: SimSession = {
      id: sessionId(this.seed, hour, index),
      startMs,
      durationMs: this.duration(rng, user, resource.technology),
      userId: user.id,
      endUserId: endUser?.id ?? "",
      resourceId: resource.id,
      nativeUsername: pickNative(rng, resource),
      clientIpAddress: this.clientIp(rng, user),
      parentSessionId: "",
      applicationName: appName(rng, user, resource.technology),
    };
    if (startSubMsNanos !== 0) s.startSubMsNanos = startSubMsNanos;
    return s;
  }

  private makeChild(
    rng: Rng,
    hour: number,
    index: number,
    hourStart: number,
    parent: SimSession,
  ): SimSession | undefined {
    const room = hourStart + HOUR_MS - parent.startMs - 1;
    if (room < 1) return undefined;
    const user = this.index.userById.get(parent.userId);
    const parentResource = this.index.resourceById.get(parent.resourceId);
    if (!user || !parentResource) return undefined;
    // An SSH or Kubernetes session hops to a database from the host it reached; other
    // parents (agents, tools) open further sessions from the same client.
    const hop =
      parentResource.technology === "ssh" ||
      parentResource.technology === "kubernetes";
    const resource = this.pickResource(rng, user);
    return {
      id: sessionId(this.seed, hour, index),
      startMs: parent.startMs + 1 + Math.floor(rng.next() * room),
      durationMs: Math.min(
        this.maxDurationMs,
        Math.max(150, Math.round(rng.logNormal(MINUTE_MS, 1.0))),
      ),
      userId: parent.userId,
      endUserId: parent.endUserId,
      resourceId: resource.id,
      nativeUsername: pickNative(rng, resource),
      clientIpAddress: hop
        ? parentResource.serverIpAddress
        : parent.clientIpAddress,
      parentSessionId: parent.id,
      applicationName: appName(rng, user, resource.technology),
    };
  }

  private pickResource(rng: Rng, user: SimUser): SimResource {
    const table = this.favouriteTables.get(user.id);
    // A tenth of the time people wander off their usual resources.
    if (table && !rng.chance(WANDER_SHARE)) return table.pick(rng);
    return rng.pick(this.org.resources);
  }

  private duration(rng: Rng, user: SimUser, tech: Technology): number {
    let ms: number;
    if (rng.chance(LONG_RUNNING_SHARE)) {
      const lo = Math.log(HOUR_MS);
      const hi = Math.log(Math.max(HOUR_MS + 1, this.maxDurationMs));
      ms = Math.exp(rng.uniform(lo, hi));
    } else {
      const { median, sigma } = durationMedianMs(user, tech);
      ms = rng.logNormal(median, sigma);
    }
    return Math.min(this.maxDurationMs, Math.max(150, Math.round(ms)));
  }

  private clientIp(rng: Rng, user: SimUser): string {
    const home = this.homeIp.get(user.id) ?? "10.0.0.1";
    if (user.type === "human") {
      return rng.chance(HOME_ADDRESS_SHARE)
        ? home
        : `10.8.${rng.int(0, 63)}.${rng.int(2, 254)}`;
    }
    switch (user.machineKind ?? "batch") {
      case "ci":
        return `10.201.${rng.int(0, 15)}.${rng.int(2, 254)}`; // ephemeral CI runners
      case "app":
        return `10.42.${rng.int(0, 255)}.${rng.int(2, 254)}`; // pods come and go
      case "agent":
        return `10.60.${rng.int(0, 3)}.${rng.int(2, 254)}`;
      default:
        return home; // batch hosts and BI egress have fixed addresses
    }
  }
}

/** A user's fixed address: a person's office or VPN, a batch host's, a BI tool's egress. */
export function homeIpOf(seed: number, u: SimUser): string {
  const r = createRng(hash32(seed, "ip", u.id));
  if (u.type === "machine") {
    if (u.machineKind === "bi")
      return `35.${r.int(180, 240)}.${r.int(0, 255)}.${r.int(2, 254)}`;
    return `10.200.${r.int(0, 3)}.${r.int(2, 254)}`;
  }
  const where = r.next();
  if (where < 0.55) return `198.51.100.${r.int(2, 254)}`; // headquarters
  if (where < 0.75) return `203.0.113.${r.int(2, 254)}`; // branch office
  return `10.8.${r.int(0, 63)}.${r.int(2, 254)}`; // VPN
}

function pickNative(rng: Rng, resource: SimResource): string {
  const list = resource.nativeUsers;
  if (list.length === 0) return "";
  // The first native users are the everyday ones; superusers are rare.
  return (
    list[
      Math.min(list.length - 1, Math.floor(rng.next() ** 2 * list.length))
    ] ?? ""
  );
}

function sessionTag(seed: number, hour: number, index: number): string {
  return hashId(6, seed, "session", hour, index);
}

function sessionId(seed: number, hour: number, index: number): string {
  return `ses_${hour.toString(36).padStart(6, "0")}${index.toString(36).padStart(5, "0")}${sessionTag(seed, hour, index)}`;
}

/** First index in a sorted list whose session is not `before` (a binary search). */
function firstNotBefore(
  list: readonly SimSession[],
  before: (s: SimSession) => boolean,
): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(list[mid] as SimSession)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index in a sorted list whose startMs ≥ ms. */
export function lowerBoundStart(
  list: readonly SimSession[],
  ms: number,
): number {
  return firstNotBefore(list, (s) => s.startMs < ms);
}

/** First index in a sorted list strictly after the position (startMs, id). */
export function upperBoundPosition(
  list: readonly SimSession[],
  startMs: number,
  id: string,
): number {
  return firstNotBefore(
    list,
    (s) => s.startMs < startMs || (s.startMs === startMs && s.id <= id),
  );
}

export function createSessionGenerator(
  o: SessionGeneratorOptions,
): SessionGenerator {
  return new Generator(o);
}
