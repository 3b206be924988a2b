// Statements of a migration that must not run twice, and how a resumed run completes one.
// A run stopped after such a statement ran (or while it ran) but before the ledger recorded it
// would otherwise run it again: EXCHANGE TABLES would swap the two tables back, ATTACH PARTITION
// ALL FROM would attach the source's parts a second time. Before it runs, what the statement
// changes is observed and recorded (migrate.ts); the next run completes it from there. Every
// other statement of the migrations is safe to run again (IF [NOT] EXISTS, MATERIALIZE, and
// INSERT … SELECT into replacing or aggregating tables).
import type { Warehouse } from "./client.js";
import { selectRows } from "./select.js";
import { quoteString } from "./sql.js";

export interface RerunGuard {
  /** What the statement changes, as it is now (one line, no spaces at its ends). */
  observe(w: Warehouse): Promise<string>;
  /**
   * For a run that recorded `before` and stopped: completes what the statement left undone, or
   * answers false when the statement did not run (the caller runs it).
   */
  resume(w: Warehouse, before: string): Promise<boolean>;
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

async function partitions(w: Warehouse, table: string): Promise<string[]> {
  const rows = await selectRows<{ p: string }>(
    w,
    "SELECT DISTINCT partition_id AS p FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active ORDER BY p",
    { db: w.database, t: table },
  );
  return rows.map((r) => r.p);
}

/** The guard of a statement that must not run twice; undefined for one safe to run again. */
export function rerunGuard(sql: string): RerunGuard | undefined {
  const exchange = EXCHANGE.exec(sql);
  if (exchange) {
    const names = [tableName(exchange[1] ?? ""), tableName(exchange[2] ?? "")];
    return {
      // The tables' UUIDs follow the tables, the names are swapped.
      observe: (w) => uuids(w, names),
      resume: async (w, before) => {
        const now = await uuids(w, names);
        return now === before.split(" ").reverse().join(" ") && now !== before;
      },
    };
  }
  const attach = ATTACH_FROM.exec(sql);
  if (attach) {
    const [target, source] = [attach[1] ?? "", attach[2] ?? ""];
    return {
      // The migrations attach into a table they have just created, empty: a partition the
      // target holds came from the source. Those it lacks are attached one by one.
      observe: async (w) =>
        (await partitions(w, tableName(target))).join(",") || "-",
      resume: async (w, before) => {
        if (before !== "-") return false;
        const have = new Set(await partitions(w, tableName(target)));
        for (const p of await partitions(w, tableName(source)))
          if (!have.has(p))
            await w.client.command({
              query: `ALTER TABLE ${target} ATTACH PARTITION ID ${quoteString(p)} FROM ${source}`,
            });
        return true;
      },
    };
  }
  return undefined;
}
