// The retention part of `status`, printed: the TTL each governed table was given, the rollups
// computed, and the legal holds in force with the sessions they hold (src/ops/status.ts reads them).
import type { RetentionStatus } from "../../ops/status.js";
import { heading, printTable } from "../output.js";
import { counted } from "../output.js";

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
      `  rollups ${ru.source}: ${counted(ru.days, "day")}, latest ${ru.lastDay ?? "none"}, computed ${ru.lastComputedAt ?? "never"}\n`,
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
  out.write(`  ${counted(r.heldSessions, "session")} held from deletion\n`);
}
