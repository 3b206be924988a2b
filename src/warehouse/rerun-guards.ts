// Statements of a migration that must not run twice, and how to tell afterwards whether one ran.
// A run stopped after such a statement ran but before the ledger recorded it would otherwise run
// it again: EXCHANGE TABLES would swap the two tables back, ATTACH PARTITION ALL FROM would
// attach the source's parts a second time. Before it runs, what the statement changes is
// observed and recorded (migrate.ts); the next run observes again and skips the statement when
// the change is there. Every other statement of the migrations is safe to run again
// (IF [NOT] EXISTS, MATERIALIZE, and INSERT … SELECT into replacing or aggregating tables).
import type { Warehouse } from "./client.js";
import { selectRows } from "./select.js";

export interface RerunGuard {
  /** What the statement changes, as it is now (one line, no spaces at its ends). */
  observe(w: Warehouse): Promise<string>;
  /** Whether the change is there, given the observation recorded before the statement ran. */
  happened(before: string, now: string): boolean;
}

/** A table name as a statement writes it (`db`.t, db.t, t): the table's own name. */
function tableName(written: string): string {
  return (written.split(".").at(-1) ?? written).replaceAll("`", "");
}

const EXCHANGE = /^EXCHANGE\s+TABLES\s+(\S+)\s+AND\s+(\S+)/i;
const ATTACH_FROM =
  /^ALTER\s+TABLE\s+(\S+)[^]*?\bATTACH\s+PARTITION\s+ALL\s+FROM\s+(\S+)/i;

async function uuids(w: Warehouse, names: string[]): Promise<string> {
  const rows = await selectRows<{ name: string; uuid: string }>(
    w,
    "SELECT name, toString(uuid) AS uuid FROM system.tables WHERE database = {db:String} AND name IN {names:Array(String)}",
    { db: w.database, names },
  );
  const by = new Map(rows.map((r) => [r.name, r.uuid]));
  return names.map((n) => by.get(n) ?? "-").join(" ");
}

async function totalRows(w: Warehouse, table: string): Promise<string> {
  const [row] = await selectRows<{ n: string }>(
    w,
    "SELECT toString(ifNull(total_rows, 0)) AS n FROM system.tables WHERE database = {db:String} AND name = {t:String}",
    { db: w.database, t: table },
  );
  return row?.n ?? "0";
}

/** The guard of a statement that must not run twice; undefined for one safe to run again. */
export function rerunGuard(sql: string): RerunGuard | undefined {
  const exchange = EXCHANGE.exec(sql);
  if (exchange) {
    const names = [tableName(exchange[1] ?? ""), tableName(exchange[2] ?? "")];
    return {
      // The tables' UUIDs follow the tables, the names are swapped.
      observe: (w) => uuids(w, names),
      happened: (before, now) =>
        now === before.split(" ").reverse().join(" ") && now !== before,
    };
  }
  const attach = ATTACH_FROM.exec(sql);
  if (attach) {
    const target = tableName(attach[1] ?? "");
    return {
      // The migrations attach into a table they have just created, empty.
      observe: (w) => totalRows(w, target),
      happened: (before, now) => Number(now) > Number(before),
    };
  }
  return undefined;
}
