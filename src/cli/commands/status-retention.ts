// The retention part of `status`: the TTL each governed table was given, the rollups computed,
// and the legal holds in force with the sessions they hold.
import {
  appliedRetention,
  type AppliedRetention,
  countHeldSessions,
  isActive,
  type LegalHold,
  listHolds,
  rollupStatus,
  type RollupStatus,
  Tables,
  type Warehouse,
} from "../../warehouse/index.js";
import { heading, printTable } from "../output.js";

export interface RetentionStatus {
  /** The TTL each table was last given from the retention settings. */
  tables: AppliedRetention[];
  rollups: RollupStatus[];
  /** Holds in force now (not released, `until` not passed). */
  activeHolds: LegalHold[];
  /** Session ids whose stored rows carry the hold flag. */
  heldSessions: number;
}

export async function collectRetention(
  w: Warehouse,
  tables: ReadonlySet<string>,
  nowMs: number,
): Promise<RetentionStatus> {
  const holds = tables.has(Tables.legalHolds) ? await listHolds(w) : [];
  return {
    tables: tables.has(Tables.retentionSettings)
      ? await appliedRetention(w)
      : [],
    rollups: tables.has(Tables.rollupDays) ? await rollupStatus(w) : [],
    activeHolds: holds.filter((h) => isActive(h, nowMs)),
    heldSessions: tables.has(Tables.legalHolds)
      ? await countHeldSessions(w)
      : 0,
  };
}

export function printRetention(
  r: RetentionStatus,
  out: NodeJS.WritableStream,
): void {
  heading("Retention", out);
  if (r.tables.length === 0)
    out.write(
      "  no retention settings recorded yet (run sessionhouse migrate)\n",
    );
  else
    printTable(
      r.tables.map((t) => ({
        table: t.table,
        hot: t.hotDays === 0 ? "" : `${t.hotDays}d`,
        "cold volume":
          t.hotDays > 0 && t.coldVolume === ""
            ? "none in policy"
            : t.coldVolume,
        retention: t.retentionDays === 0 ? "forever" : `${t.retentionDays}d`,
        applied: t.appliedAt,
      })),
      out,
    );
  for (const ru of r.rollups)
    out.write(
      `  rollups ${ru.source}: ${ru.days} day(s), latest ${ru.lastDay ?? "none"}, computed ${ru.lastComputedAt ?? "never"}\n`,
    );
  heading("Legal holds", out);
  if (r.activeHolds.length === 0) out.write("  none active\n");
  else
    printTable(
      r.activeHolds.map((h) => ({
        hold: h.holdId,
        holds: `${h.scope} ${h.value}`,
        by: h.createdBy,
        since: h.createdAt,
        until: h.until ?? "until released",
        reason: h.reason,
      })),
      out,
    );
  out.write(`  ${r.heldSessions} session(s) held from deletion\n`);
}
