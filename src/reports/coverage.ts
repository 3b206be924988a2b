// What the record covers over a report's period, said on every report's first page: checkpoints
// short of the period's end, windows not stored or skipped (who and why), dead letters, a record
// that starts after the period does, streams not exported. The coverage-and-integrity report
// shows the tables behind it.
import { coverageQueries } from "../warehouse/reports/coverage.js";
import type { ReportReader, Row } from "../warehouse/reports/query.js";
import { columns, table, type Notice, type ReportTable } from "./model.js";

export interface Coverage {
  /** Per stream the report relies on: its checkpoint (null: none), complete over the period or not. */
  streams: { stream: string; checkpoint: string | null; complete: boolean }[];
  oldestSession: string | null;
  newestSession: string | null;
  windowsNotStored: number;
  windowsSkipped: number;
  deadLetters: number;
  notExported: string[];
  complete: boolean;
}

export interface CoverageRead {
  /** The coverage of the streams a report relies on, and what its first page says. */
  forStreams(streams: readonly string[]): {
    coverage: Coverage;
    notices: Notice[];
  };
  tables: {
    checkpoints: ReportTable;
    windows: ReportTable;
    deadLetters: ReportTable;
  };
}

/** "2026-11-01 00:00:00" from "2026-11-01T00:00:00.000Z". */
export function plainTime(iso: string): string {
  return iso.replace("T", " ").replace(/(\.\d+)?Z$/, "");
}

export async function readCoverage(
  reader: ReportReader,
  params: Record<string, string>,
  period: { from: string; to: string },
): Promise<CoverageRead> {
  const q = coverageQueries;
  const checkpoints = await reader.rows(q.checkpoints, params);
  const extent = (await reader.rows(q.sessionsExtent, params))?.[0];
  const windows = await reader.rows(q.windows, params);
  const dead = await reader.rows(q.deadLetters, params);
  const to = plainTime(period.to);
  const from = plainTime(period.from);
  const forStreams = (streams: readonly string[]) => {
    const notices: Notice[] = [];

    const positions = new Map(
      (checkpoints ?? []).map((r: Row) => [
        String(r.stream),
        String(r.position),
      ]),
    );
    const streamRows = streams.map((stream) => {
      const checkpoint = positions.get(stream) ?? null;
      const complete = checkpoint !== null && checkpoint >= to;
      if (checkpoint === null)
        notices.push({
          level: "warning",
          text: `The stream ${stream} has no checkpoint: none of its data is known to be complete.`,
        });
      else if (!complete)
        notices.push({
          level: "warning",
          text: `The stream ${stream} is complete only up to ${checkpoint} UTC; the period ends at ${to}: data after ${checkpoint} may still be missing.`,
        });
      return { stream, checkpoint, complete };
    });

    const oldest =
      extent && String(extent.oldest) !== "" ? String(extent.oldest) : null;
    const newest =
      extent && String(extent.newest) !== "" ? String(extent.newest) : null;
    if (extent && oldest === null)
      notices.push({
        level: "warning",
        text: "The sessions table holds no session at all.",
      });
    else if (oldest !== null && oldest > from)
      notices.push({
        level: "warning",
        text: `The oldest stored session started at ${oldest} UTC, after the period starts (${from}): earlier sessions are not in the record (the export started later, or retention removed them).`,
      });

    let notStored = 0;
    let skipped = 0;
    for (const r of windows ?? []) {
      const what = `${String(r.job)} window ${String(r.window_start)} to ${String(r.window_end)}`;
      if (r.state === "skipped") {
        skipped++;
        notices.push({
          level: "warning",
          text: `Aggregation ${what} was skipped by ${String(r.skipped_by) || "an unnamed operator"} (${String(r.skip_reason) || "no reason given"}) at ${String(r.updated_at)}: its data is not in the record.`,
        });
      } else {
        notStored++;
        notices.push({
          level: "warning",
          text: `Aggregation ${what} is ${String(r.state)} after ${String(r.attempts)} attempts: its data is not in the record (last error: ${String(r.last_error).split("\n")[0] ?? ""}).`,
        });
      }
    }
    const deadCount = (dead ?? []).reduce((n, r) => n + Number(r.records), 0);
    if (deadCount > 0)
      notices.push({
        level: "warning",
        text: `${deadCount} records read in the period could not be stored (dead letters, by job and reason in the coverage tables).`,
      });

    const notExported = reader.missing([
      "checkpoints",
      "sessions",
      "stream_windows",
      "dead_letters",
    ]);
    for (const t of notExported)
      notices.push({
        level: "warning",
        text: `The table ${t} is not in this warehouse: what it would say is not in this report.`,
      });
    return {
      coverage: {
        streams: streamRows,
        oldestSession: oldest,
        newestSession: newest,
        windowsNotStored: notStored,
        windowsSkipped: skipped,
        deadLetters: deadCount,
        notExported,
        complete: notices.length === 0,
      },
      notices,
    };
  };

  return {
    forStreams,
    tables: {
      checkpoints: table(
        {
          id: "coverage-checkpoints",
          title: "Checkpoints",
          note: "How far each stream's data is known to be stored (written only after the rows it covers), and when it last moved. Backfill streams cover their own range.",
          columns: columns("stream", "position", "updated_at"),
        },
        checkpoints,
        reader.missing(q.checkpoints.needs),
      ),
      windows: table(
        {
          id: "coverage-windows",
          title: "Aggregation windows not stored or skipped",
          note: "Windows of the period that are pending (fetched again on the next run), poisoned (waiting for an operator) or skipped (an operator let the checkpoint pass them), with who skipped them and why.",
          columns: columns(
            "job",
            "window_start",
            "window_end",
            "state",
            "attempts:number",
            "last_error",
            "skipped_by",
            "skip_reason",
            "updated_at",
          ),
        },
        windows,
        reader.missing(q.windows.needs),
      ),
      deadLetters: table(
        {
          id: "coverage-dead-letters",
          title: "Dead letters",
          note: "Records read in the period that could not be stored, by job and reason; the raw text of each is kept in the dead_letters table.",
          columns: columns(
            "job",
            "reason",
            "records:number",
            "first_seen",
            "last_seen",
          ),
        },
        dead,
        reader.missing(q.deadLetters.needs),
      ),
    },
  };
}
