// The organisation-shaped scale scenario's dimensions, from the simulator's organisation model
// (src/simulator/org.ts, src/simulator/sessions.ts): its people, machine accounts, teams and
// resources as small rows the engine joins the generated sessions to, and the week's traffic
// (office hours on weekdays, steady machines with a nightly batch window) as the position of
// each session number in time. Pure: no engine here; bench/dashboards.ts loads and joins them.
import {
  activityOf,
  buildOrg,
  homeIpOf,
  indexOrg,
  SUSPENSION_MODEL,
  weightsAt,
  type SimUser,
} from "../src/simulator/index.js";
import { Directory } from "../src/simulator/directory.js";
import { inventoryColumns, isBad } from "../src/sources/directory.js";

const HOUR = 3_600_000;
const WEEK_HOURS = 168;

/** The scale scenario's shapes: an organisation (this file's) or uniform at random. */
export const SHAPES = ["org", "uniform"] as const;
export type Shape = (typeof SHAPES)[number];

/** The seed of the organisation (the simulator's seed that the sample day compares against). */
export const ORG_SEED = 1;

/** The enterprise as an organisation: 45,000 people, 5,000 machine accounts, 2,000 resources. */
export const ENTERPRISE_ORG: Readonly<OrgCounts> = {
  humans: 45_000,
  machines: 5_000,
  resources: 2_000,
  groups: 60,
  sidecars: 40,
  connectors: 10,
  spaces: 12,
};

/** An organisation's size, as buildOrg takes it. */
interface OrgCounts {
  humans: number;
  machines: number;
  resources: number;
  groups: number;
  sidecars: number;
  connectors: number;
  spaces: number;
}

/**
 * The pools accounts are drawn from: people by their activity, then each machine kind. A
 * session's account is the pool's slot it draws; an account holds slots in proportion to its
 * activity (the simulator's weighted tables), POOL_SLOTS of them per pool.
 */
export const POOLS = ["human", "batch", "app", "ci", "agent", "bi"] as const;
export type Pool = (typeof POOLS)[number];
export const POOL_SLOTS: Readonly<Record<Pool, number>> = {
  human: 1 << 20,
  batch: 1 << 16,
  app: 1 << 16,
  ci: 1 << 16,
  agent: 1 << 16,
  bi: 1 << 16,
};
/** A slot's key: its pool's index times this, plus the slot. */
export const POOL_STRIDE = 1 << 21;

/**
 * Where the machine kinds without a fixed address connect from, as the simulator draws them
 * (src/simulator/sessions.ts, clientIp): `${prefix}${0 … thirdOctets - 1}.${2 … 254}`.
 */
export const EPHEMERAL_ADDRESSES = {
  ci: { prefix: "10.201.", thirdOctets: 16 },
  app: { prefix: "10.42.", thirdOctets: 256 },
  agent: { prefix: "10.60.", thirdOctets: 4 },
} as const satisfies Partial<Record<Pool, unknown>>;

/** A person's address away from home (a VPN's), as the simulator draws it. */
export const AWAY_ADDRESSES = { prefix: "10.8.", thirdOctets: 64 } as const;

/** One account: its index (user id `usr_<u>`), pool, teams, favourites and fixed address. */
export interface AccountRow {
  u: number;
  human: number;
  pool: Pool;
  groups: string[];
  /** Favourite resources (indices), most used first, and their cumulative shares (last 1). */
  favs: number[];
  cum: number[];
  home: string;
}

/** The slots [lo, hi) of `pool` that draw account `u`. */
export interface SlotRange {
  pool: number;
  lo: number;
  hi: number;
  u: number;
}

/** One resource: index (id `res_<r>`), the org's name, technology, sidecar or connector. */
export interface ResourceRow {
  r: number;
  name: string;
  /** What the logs' `resource.environment` says of it (the `resource_environments` job). */
  environment: string;
  technology: string;
  rtype: string;
  natives: string[];
  server_ip: string;
  /** Sidecar index and name (every session names one); connector index, -1 when none. */
  sidecar: number;
  sidecar_name: string;
  connector: number;
  connector_name: string;
}

export interface OrgDimensions {
  accounts: AccountRow[];
  slots: SlotRange[];
  resources: ResourceRow[];
}

const poolOf = (u: SimUser): Pool =>
  u.type === "human" ? "human" : (u.machineKind ?? "batch");

/** Accounts by activity into their pool's POOL_SLOTS slots (rounded cumulative shares). */
function slotRanges(users: readonly SimUser[], seed: number): SlotRange[] {
  const out: SlotRange[] = [];
  POOLS.forEach((pool, p) => {
    const members = users
      .map((u, i) => ({ u, i }))
      .filter((m) => poolOf(m.u) === pool);
    const weights = members.map((m) => activityOf(seed, m.u));
    const total = weights.reduce((a, b) => a + b, 0);
    let sum = 0;
    members.forEach((m, k) => {
      const lo = Math.round((sum / total) * POOL_SLOTS[pool]);
      sum += weights[k] ?? 0;
      const hi = Math.round((sum / total) * POOL_SLOTS[pool]);
      if (hi > lo) out.push({ pool: p, lo, hi, u: m.i });
    });
  });
  return out;
}

let enterprise: OrgDimensions | undefined;

/** The enterprise's dimensions (ORG_SEED, ENTERPRISE_ORG), built once a process. */
export function enterpriseDimensions(): OrgDimensions {
  enterprise ??= orgDimensions();
  return enterprise;
}

/** The organisation of `seed` at `size` as the rows the scenario's sessions are joined to. */
export function orgDimensions(
  seed: number = ORG_SEED,
  size: Partial<OrgCounts> = ENTERPRISE_ORG,
): OrgDimensions {
  const org = buildOrg(seed, size);
  const index = indexOrg(org);
  const resourceIndex = new Map(org.resources.map((r, i) => [r.id, i]));
  const sidecarIndex = new Map(org.sidecars.map((s, i) => [s.id, i]));
  const connectorIndex = new Map(org.connectors.map((c, i) => [c.id, i]));
  const accounts = org.users.map((u, i): AccountRow => {
    const favs = (index.favourites.get(u.id) ?? []).map(
      (r) => resourceIndex.get(r.id) ?? 0,
    );
    // The simulator's favourite table: the i-th favourite weighs 1 / (i + 1).
    const weights = favs.map((_, k) => 1 / (k + 1));
    const total = weights.reduce((a, b) => a + b, 0);
    let sum = 0;
    const cum = weights.map((w) => (sum += w) / total);
    if (cum.length > 0) cum[cum.length - 1] = 1;
    return {
      u: i,
      human: u.type === "human" ? 1 : 0,
      pool: poolOf(u),
      groups: [...(index.groupNamesOfUser.get(u.id) ?? [])],
      favs,
      cum,
      home: homeIpOf(seed, u),
    };
  });
  const resources = org.resources.map((r, i): ResourceRow => {
    const sidecarId = org.sidecarOfResource.get(r.id);
    const connectorId = org.connectorOfResource.get(r.id);
    // A resource reached through a connector still names a sidecar of its technology (or the
    // first), as every generated session does.
    const sidecar =
      sidecarId !== undefined
        ? (sidecarIndex.get(sidecarId) ?? 0)
        : Math.max(
            0,
            org.sidecars.findIndex((s) => s.technology === r.technology),
          );
    const connector =
      connectorId === undefined ? -1 : (connectorIndex.get(connectorId) ?? -1);
    return {
      r: i,
      name: r.name,
      environment: r.environment,
      technology: r.technology,
      rtype: r.type,
      natives: r.nativeUsers,
      server_ip: r.serverIpAddress,
      sidecar,
      sidecar_name: org.sidecars[sidecar]?.name ?? "sidecar",
      connector,
      connector_name: org.connectors[connector]?.name ?? "",
    };
  });
  return { accounts, slots: slotRanges(org.users, seed), resources };
}

/**
 * The week's traffic from `startMs` (an hour boundary): each hour's weight (people and
 * machines), the cumulative weight before each hour (169 values), and the people's share of
 * each hour's sessions.
 */
export interface WeekModel {
  weights: number[];
  cum: number[];
  humanShare: number[];
  /** Weight of the whole week. */
  week: number;
}

export function weekModel(startMs: number): WeekModel {
  const first = Math.floor(startMs / HOUR);
  const weights: number[] = [];
  const humanShare: number[] = [];
  const cum = [0];
  for (let h = 0; h < WEEK_HOURS; h++) {
    const w = weightsAt(first + h);
    // Rounded, so that the SQL's literals are short and the sums exact enough.
    const weight = Math.round((w.human + w.machine) * 1e6) / 1e6;
    weights.push(weight);
    humanShare.push(w.human / (w.human + w.machine));
    cum.push(Math.round(((cum[h] ?? 0) + weight) * 1e6) / 1e6);
  }
  return { weights, cum, humanShare, week: cum[WEEK_HOURS] ?? 0 };
}

/** The traffic's weight from `startMs` to `startMs + ms` (the position of that instant). */
export function positionAt(m: WeekModel, ms: number): number {
  const weeks = Math.floor(ms / (WEEK_HOURS * HOUR));
  const rest = ms - weeks * WEEK_HOURS * HOUR;
  const h = Math.min(WEEK_HOURS - 1, Math.floor(rest / HOUR));
  const within = (rest - h * HOUR) / HOUR;
  return (
    weeks * m.week + (m.cum[h] ?? 0) + (m.weights[h] ?? 0) * Math.min(1, within)
  );
}

/** The ms after `startMs` at traffic position `p` (the inverse of positionAt). */
export function instantAt(m: WeekModel, p: number): number {
  const weeks = Math.floor(p / m.week);
  const q = p - weeks * m.week;
  let h = 0;
  while (h < WEEK_HOURS - 1 && (m.cum[h + 1] ?? Infinity) <= q) h++;
  return (
    (weeks * WEEK_HOURS + h) * HOUR +
    ((q - (m.cum[h] ?? 0)) / (m.weights[h] ?? 1)) * HOUR
  );
}

/** Slots a week is cut into to find a position's hour without a search (see startMsSql). */
const WEEK_SLOTS = WEEK_HOURS * 10;

/**
 * SQL of the start (ms since the epoch, Float64) of session number `k` (an SQL expression) of
 * `total` over `spanMs` from `startMs`, spread by the week's traffic: session k at position
 * (k + 0.5) × the span's weight / total, the instant instantAt gives. Select-list items, their
 * aliases prefixed by `x`; the start is `${x}_ms`, the hour of the week `${x}_h` (0 … 167).
 */
export function startMsSql(
  k: string,
  x: string,
  m: WeekModel,
  o: { startMs: number; spanMs: number; total: number },
): string {
  const step = positionAt(m, o.spanMs) / o.total;
  // The hour at the start of each slot: a slot (a tenth of an hour's mean) crosses at most
  // one hour's end, since no hour weighs under a tenth of the mean.
  const slotHour = Array.from({ length: WEEK_SLOTS }, (_, s) => {
    const q = (s * m.week) / WEEK_SLOTS;
    let h = 0;
    while (h < WEEK_HOURS - 1 && (m.cum[h + 1] ?? Infinity) <= q) h++;
    return h;
  });
  const cum = `[${m.cum.join(",")}]`;
  return [
    `((${k}) + 0.5) * ${step} AS ${x}_p`,
    `${x}_p - floor(${x}_p / ${m.week}) * ${m.week} AS ${x}_q`,
    `arrayElement([${slotHour.join(",")}], 1 + toUInt32(least(${WEEK_SLOTS - 1}, floor(${x}_q / ${m.week} * ${WEEK_SLOTS})))) AS ${x}_h0`,
    `${x}_h0 + if(${x}_h0 < ${WEEK_HOURS - 1} AND ${x}_q >= arrayElement(${cum}, ${x}_h0 + 2), 1, 0) AS ${x}_h`,
    `${o.startMs} + (floor(${x}_p / ${m.week}) * ${WEEK_HOURS} + ${x}_h) * ${HOUR} + (${x}_q - arrayElement(${cum}, ${x}_h + 1)) / arrayElement([${m.weights.join(",")}], ${x}_h + 1) * ${HOUR} AS ${x}_ms`,
  ].join(",\n");
}

/** A native user of the organisation's and its identity link: a person who works on it, or a team. */
export interface LinkRow {
  r: number;
  native: string;
  identityType: "user" | "group";
  /** `usr_<u>` for a person, the team's name for a team. */
  identityId: string;
  /** The linked person's index, -1 for a team. */
  u: number;
}

/**
 * Every native user of every resource (the org's), each linked to a person who has the
 * resource among their favourites (one of them, by the resource and the name), or, when no one
 * has, to a team (the resource's index into the teams, in name order).
 */
export function identityLinks(d: OrgDimensions): LinkRow[] {
  const people = new Map<number, number[]>();
  for (const a of d.accounts)
    if (a.human === 1)
      for (const r of a.favs) people.set(r, [...(people.get(r) ?? []), a.u]);
  const teams = [...new Set(d.accounts.flatMap((a) => a.groups))].sort();
  return d.resources.flatMap((res) =>
    res.natives.map((native, k): LinkRow => {
      const who = people.get(res.r) ?? [];
      const u = who[(res.r * 31 + k) % Math.max(1, who.length)];
      return u === undefined
        ? {
            r: res.r,
            native,
            identityType: "group",
            identityId: teams[res.r % Math.max(1, teams.length)] ?? "",
            u: -1,
          }
        : {
            r: res.r,
            native,
            identityType: "user",
            identityId: `usr_${u}`,
            u,
          };
    }),
  );
}

/**
 * Policy suspensions as the simulator makes them (SUSPENSION_MODEL: one in every two hours,
 * 4,380 a year), each naming one of `policies` policies.
 */
export const SUSPENSIONS = { ...SUSPENSION_MODEL, policies: 15 } as const;

/**
 * How many slots after its own a suspension is no longer listed by the simulator (it lists a
 * slot's suspension until `listedMs` after the slot's start): the exporter records it removed at
 * the start of that slot.
 */
export const UNLISTED_AFTER_SLOTS =
  Math.ceil(SUSPENSIONS.listedMs / SUSPENSIONS.spacingMs) + 1;

/** One column of the organisation's data inventory: its resource's index and what is stored. */
export interface InventoryRow {
  r: number;
  resource_name: string;
  path: string;
  name: string;
  data_type: string;
  data_label: string;
}

/**
 * The organisation's data inventory as the simulator's directory lists it at `atMs`: the tables
 * of its databases and warehouses, each column with its catalogue label (a few relabelled), read
 * as the exporter reads an inventory object (inventoryColumns). Resources of other technologies
 * hold no inventory, and a column marked for deletion is left out, as the exporter stores it
 * deleted.
 */
export function orgInventory(
  atMs: number,
  seed: number = ORG_SEED,
  size: Partial<OrgCounts> = ENTERPRISE_ORG,
): InventoryRow[] {
  const org = buildOrg(seed, size);
  const resourceIndex = new Map(org.resources.map((r, i) => [r.id, i]));
  const out: InventoryRow[] = [];
  for (const item of new Directory(org, indexOrg(org)).inventory(atMs))
    for (const rec of inventoryColumns(item)) {
      if (isBad(rec))
        throw new Error(`the simulator's inventory: ${rec.reason}`);
      if (rec.deleted) continue;
      const c = rec.columns;
      const r = resourceIndex.get(String(c.resource_id));
      if (r === undefined)
        throw new Error(
          `the simulator's inventory names no resource of the org: ${String(c.resource_id)}`,
        );
      out.push({
        r,
        resource_name: String(c.resource_name),
        path: String(c.path),
        name: String(c.name),
        data_type: String(c.data_type),
        data_label: String(c.data_label),
      });
    }
  return out;
}
