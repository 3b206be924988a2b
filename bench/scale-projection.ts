// The disk of the scale bench's year projected to another count of sessions (100 million by
// default), table by table, from what one load measured: each table's bytes a row as measured,
// its rows by how the table grows with sessions under the generator's distributions.
import { END_MS, type Population } from "./dashboards.js";
import { simulatorProfile } from "./simulator-profile.js";

/** The count of sessions the disk is projected to. */
export const PROJECTED_SESSIONS = 100_000_000;

export const PROJECTION_METHOD =
  "each table's bytes a row as measured; rows: `sessions` and `session_keys` one a session, " +
  "`group_resource_rollups_daily` in proportion to sessions (an upper bound: its keys are a day's distinct group × resource pairs), " +
  "`session_technology_rollups_daily` rows fixed (a day and technology) and bytes in proportion to sessions (an upper bound: its uniq and t-digest states grow with a day's distinct users and durations), " +
  "the rollups and first-seen tables as the expected distinct keys of n draws from P (P × (1 − e^(−n/P)); " +
  "P = a day's accounts × favourite resources × 365 for `session_rollups_daily`, accounts × 365 for `user_active_days` " +
  "(a child session is its parent's account: n is the sessions that are not children), accounts × favourites for `user_resource_first_seen`), " +
  "every other rollup (`*_rollups_daily`, `*_rollups_monthly`) in proportion to sessions (an upper bound: its keys are a day's or a month's distinct values), " +
  "every other table (aggregations and the rollups of them, directory, bookkeeping) a fixed cost";

/** A rollup the job writes from `sessions`: its rows grow with the sessions, at most as fast. */
const ROLLUP_TABLE = /_rollups_(?:daily|monthly)$/;

/** The rollups of the aggregation jobs' histograms: their rows do not depend on the sessions. */
const AGGREGATION_ROLLUPS: ReadonlySet<string> = new Set([
  "data_label_rollups_daily",
  "resource_environment_rollups_daily",
]);

/** How a table's rows grow with the sessions of the year. */
type Growth =
  | { kind: "sessions" }
  /** Fixed rows whose bytes grow in proportion to sessions (an upper bound). */
  | { kind: "states" }
  | { kind: "fixed" }
  | { kind: "distinct"; keys: number; draws: (sessions: number) => number };

function growthOf(table: string, p: Population, notChildren: number): Growth {
  const pairs = p.users * p.favourites;
  switch (table) {
    case "sessions":
    case "session_keys":
    case "group_resource_rollups_daily":
      return { kind: "sessions" };
    case "session_technology_rollups_daily":
      return { kind: "states" };
    case "session_rollups_daily":
      return { kind: "distinct", keys: pairs * 365, draws: (n) => n };
    case "user_active_days":
      return {
        kind: "distinct",
        keys: p.users * 365,
        draws: (n) => n * notChildren,
      };
    case "user_resource_first_seen":
      return { kind: "distinct", keys: pairs, draws: (n) => n };
    default:
      return ROLLUP_TABLE.test(table) && !AGGREGATION_ROLLUPS.has(table)
        ? { kind: "sessions" }
        : { kind: "fixed" };
  }
}

/** Expected distinct keys among `draws` uniform draws from `keys` keys. */
const distinct = (keys: number, draws: number) =>
  keys * -Math.expm1(-draws / keys);

/** Rows of a table at `to` sessions, from `rows` at `from` sessions. */
function projectedRows(
  g: Growth,
  rows: number,
  from: number,
  to: number,
): number {
  if (g.kind === "sessions") return (rows * to) / from;
  if (g.kind !== "distinct") return rows;
  // Scaled by the model's ratio, so the rows measured stay the base.
  return (
    (rows * distinct(g.keys, g.draws(to))) / distinct(g.keys, g.draws(from))
  );
}

export interface ProjectedTable {
  table: string;
  rows: number;
  bytes: number;
}

/** Every table's rows and bytes at `to` sessions, from a load of `from` sessions. */
export function projectTables(
  tables: ReadonlyArray<{ table: string; rows: number; bytes: number }>,
  from: number,
  p: Population,
  to = PROJECTED_SESSIONS,
): ProjectedTable[] {
  const notChildren = 1 - simulatorProfile(END_MS).childShare;
  return tables.map((t) => {
    const g = growthOf(t.table, p, notChildren);
    if (g.kind === "states")
      return { table: t.table, rows: t.rows, bytes: (t.bytes * to) / from };
    const rows = projectedRows(g, t.rows, from, to);
    return {
      table: t.table,
      rows,
      bytes: t.rows > 0 ? (t.bytes / t.rows) * rows : t.bytes,
    };
  });
}
