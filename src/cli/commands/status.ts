// `sessionhouse status [--json]`: prints the status report (src/ops/status.ts) as tables or
// as one JSON document. It reads the warehouse only (no API settings needed, nothing written),
// so it works beside a running service: on a ClickHouse server directly, on the embedded engine
// through the service's read access (the service holds the data directory), on a stopped one's
// data directory itself.
import {
  collectStatus,
  type LeaseStatus,
  type StatusReport,
} from "../../ops/status.js";
import { openWarehouse } from "../../warehouse/index.js";
import { heading, printTable } from "../output.js";
import { printRetention } from "./status-retention.js";
import { configFrom, type GlobalOptions } from "../runtime.js";
import { counted } from "../output.js";

// What the command prints is the read model: callers of the command (tests, programs reading its
// JSON) find it here too.
export { collectStatus, type StatusReport } from "../../ops/status.js";

/** `status`: reads only, through the service's read access while it runs. */
export async function runStatus(
  globals: GlobalOptions,
  o: { json?: boolean },
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const w = await openWarehouse(config, { access: "read" });
  try {
    const report = await collectStatus(w, config);
    if (o.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else printStatus(report);
  } finally {
    await w.close();
  }
}

/** "3d 4h", "12m 5s", "40s": the two largest units, enough to read at a glance. */
export function humanDuration(seconds: number): string {
  const units: ReadonlyArray<readonly [string, number]> = [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ];
  const total = Math.max(0, Math.round(seconds));
  const i = units.findIndex(([, size]) => total >= size);
  const [unit, size] = units[i] ?? ["s", 1];
  const first = Math.floor(total / size);
  const rest = total - first * size;
  const next = units[i + 1];
  if (i < 0 || !next || rest === 0) return `${first}${unit}`;
  return `${first}${unit} ${Math.floor(rest / next[1])}${next[0]}`;
}

function shortTime(isoText: string | null): string {
  return isoText === null
    ? ""
    : isoText.replace("T", " ").replace(/\.\d{3}Z$/, "Z");
}

export function printStatus(
  report: StatusReport,
  out: NodeJS.WritableStream = process.stdout,
): void {
  const wh = report.warehouse;
  const through = wh.throughService
    ? ` (read through the running service, pid ${wh.throughService.pid})`
    : "";
  out.write(
    `ClickHouse ${wh.kind} at ${wh.location}${through}, database ${wh.database}, ${report.generatedAt}\n`,
  );
  if (!wh.migrated)
    out.write(
      "The tables are not created yet: run `sessionhouse migrate` or start `sessionhouse run`.\n",
    );
  if (report.lease) out.write(`${leaseLine(report.lease)}\n`);
  out.write(keyRefusedLine(report));
  heading("Jobs", out);
  printTable(
    report.jobs.map((j) => ({
      job: j.job,
      schedule: j.enabled ? j.schedule : `${j.schedule} (disabled)`,
      checkpoint: j.stream === null ? "—" : shortTime(j.checkpoint) || "never",
      lag: j.lagSeconds === null ? "" : humanDuration(j.lagSeconds),
      "last run": j.lastRun
        ? `${j.lastRun.status} ${shortTime(j.lastRun.finishedAt ?? j.lastRun.startedAt)}`
        : "never",
      rows:
        j.openSessions !== null
          ? `${j.openSessions} open, ${j.vanishedSessions ?? 0} vanished`
          : j.rowsStored === null
            ? ""
            : String(j.rowsStored),
      "dead letters": j.deadLetters,
      "next run": shortTime(j.nextRunAt) || "—",
    })),
    out,
  );
  const pending = report.jobs.filter((j) => (j.pendingWindows ?? 0) > 0);
  if (pending.length > 0) {
    heading(
      "Pending windows (fetched again on the next run; the checkpoint waits at the first)",
      out,
    );
    for (const j of pending)
      out.write(
        `  ${j.job}: ${counted(j.pendingWindows ?? 0, "window")}, see sessionhouse windows list --job ${j.job}\n`,
      );
  }
  const poisoned = report.jobs.filter((j) => j.poisonedWindows.length > 0);
  if (poisoned.length > 0) {
    heading(
      "Poisoned windows (they wait for an operator; the checkpoint waits at the first)",
      out,
    );
    for (const j of poisoned)
      for (const p of j.poisonedWindows) {
        const which =
          p.parent === null
            ? { name: p.windowStart, flag: `--window ${p.windowStart}` }
            : { name: `parent ${p.parent}`, flag: `--parent ${p.parent}` };
        out.write(
          `  ${j.job} ${which.name}: ${p.attempts} attempts, ${p.lastError.split("\n")[0] ?? ""}\n` +
            `    once the cause is known: sessionhouse windows skip ${j.job} ${which.flag} --reason "..."\n`,
        );
      }
  }
  printRetention(report.retention, out);
  const failed = report.jobs.filter(
    (j) =>
      j.lastRun &&
      (j.lastRun.status === "failed" || j.lastRun.status === "abandoned") &&
      j.lastRun.error,
  );
  if (failed.length > 0) {
    heading("Last errors", out);
    for (const j of failed)
      out.write(`  ${j.job}: ${j.lastRun?.error ?? ""}\n`);
  }
}

/** The line that names a refused key, above the tables; empty when no job's last run was refused. */
function keyRefusedLine(report: StatusReport): string {
  if (!report.keyRefused) return "";
  const { jobs, error } = report.keyRefused;
  return `The control plane refuses the API key: the last run of ${jobs.join(", ")} failed (${error.split("\n")[0] ?? ""}). Check SESSIONHOUSE_API_KEY (or SESSIONHOUSE_API_KEY_FILE) and the key's permissions; the jobs retry on their schedule, and /readyz is false until one succeeds.\n`;
}

/** Who runs the jobs against this database: the holder of the service lease, or the last one. */
function leaseLine(lease: LeaseStatus): string {
  const h = lease.holder;
  if (h)
    return `Service lease: held by ${h.command} (pid ${h.pid} on ${h.host}) since ${shortTime(h.since)}, expires ${shortTime(h.expires)} unless renewed`;
  const l = lease.last;
  if (!l) return "Service lease: free (no process has held it in the last day)";
  return `Service lease: free (last held by ${l.command}, pid ${l.pid} on ${l.host}, ${l.ended} ${shortTime(l.expires)})`;
}
