// How the sessions table merges. Every insert block of a sync is a part, and ClickHouse merges
// parts in the background on the same cores that build the next blocks' rows. Its default merge
// selector (base 5) merges a partition's parts once about five of similar size exist, so a
// session is rewritten about log5(parts) times over its life; at base 10 the merges are fewer
// and wider (about log10(parts) rewrites), at the price of up to about ten parts of a size at a
// time. The selector lowers the base towards 1 as parts age (small parts within an hour, larger
// ones over days) and as a partition's parts grow from 10 to 50, so parts are merged in the end
// at any base. A 1M-session sync (ten 100000-row blocks) runs without a merge beside it.
import type { Logger } from "../util/logger.js";
import type { Warehouse } from "./client.js";
import { mutationTarget, SINGLE } from "./cluster.js";
import { selectRows, storageTableDdl } from "./select.js";
import { Tables } from "./tables.js";

/** The sessions table's `merge_selector_base` (ClickHouse's default is 5). */
export const SESSIONS_MERGE_SELECTOR_BASE = 10;

const SETTING = "merge_selector_base";

/**
 * Gives the sessions table its merge selector base when it has another one. A ClickHouse that
 * has no such setting (before 24.11) keeps its default. Returns whether the table was changed.
 */
export async function applyMergePolicy(
  w: Warehouse,
  logger?: Logger,
): Promise<boolean> {
  const known = await selectRows<{ name: string }>(
    w,
    "SELECT name FROM system.merge_tree_settings WHERE name = {name:String}",
    { name: SETTING },
  );
  if (known.length === 0) {
    logger?.info(
      { setting: SETTING },
      "this ClickHouse has no merge_selector_base: the sessions table merges as ClickHouse does by default",
    );
    return false;
  }
  const ddl = await storageTableDdl(w, Tables.sessions);
  if (ddl === "") return false;
  const wanted = `${SETTING} = ${SESSIONS_MERGE_SELECTOR_BASE}`;
  if (new RegExp(`\\b${wanted}\\b`).test(ddl)) return false;
  await w.client.command({
    query: `ALTER TABLE ${mutationTarget(w.cluster ?? SINGLE, w.database, Tables.sessions)} MODIFY SETTING ${wanted}`,
  });
  logger?.info(
    { table: Tables.sessions, [SETTING]: SESSIONS_MERGE_SELECTOR_BASE },
    "sessions merge selector base set",
  );
  return true;
}
