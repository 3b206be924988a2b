// A report built on a fresh migrated engine under a query memory cap, after statements that fill
// it: what the memory tests of the reports share. Returns one CSV file of the report.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ReportKind } from "../../src/config/index.js";
import { reportFrom } from "../../src/reports/produce.js";
import { testTmpDir } from "./run-tmp.js";
import { migratedWarehouse, testConfig } from "./warehouse.js";

/** The threads of every query of a capped report: this machine's two cores. */
const REPORT_THREADS = 2;

export async function cappedReportCsv(o: {
  kind: ReportKind;
  /** Statements run first; `{db}` is the test's database. */
  fill: readonly string[];
  memoryCap: number;
  from: string;
  to: string;
  /** The CSV file read back, e.g. "access-per-person.csv". */
  csv: string;
}): Promise<string> {
  const config = await testConfig();
  const w = await migratedWarehouse(config);
  const root = mkdtempSync(join(testTmpDir(), "capped-report-"));
  try {
    for (const sql of o.fill)
      await w.client.command({
        query: sql.replaceAll("{db}", config.clickhouse.database),
      });
    // The embedded session keeps a setting for the queries after it: the report's included. A
    // query's memory grows with its threads, each reading blocks of its own, so the threads are
    // fixed: the cap then means the same on a machine of any number of cores.
    await w.client.command({ query: `SET max_memory_usage = ${o.memoryCap}` });
    await w.client.command({ query: `SET max_threads = ${REPORT_THREADS}` });
    await reportFrom(w, config, {
      kind: o.kind,
      fromMs: Date.parse(o.from),
      toMs: Date.parse(o.to),
      out: join(root, "report"),
      formats: ["csv"],
      filters: {},
    });
    return readFileSync(join(root, "report", o.csv), "utf8");
  } finally {
    await w.close();
    rmSync(root, { recursive: true, force: true });
  }
}
