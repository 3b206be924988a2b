// Produces a report directory from an open warehouse: built from what it holds, written with
// the configured Chromium and signing key. The report command and the scheduled reports of
// `run` both come here.
import { readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import type { Config, ReportFormat, ReportKind } from "../config/index.js";
import { UsageError } from "../util/errors.js";
import { ReportReader, type Warehouse } from "../warehouse/index.js";
import { buildReport, FILTER_KEYS, type ReportFilters } from "./build.js";
import { checkFilters } from "./filters.js";
import { findChromium, startChromium, type EarlyChromium } from "./pdf.js";
import type { Notice } from "./model.js";
import { futureNotices } from "./period.js";
import type { ReportProgress } from "./kinds/context.js";
import type { CsvFiles } from "./table-rows.js";
import {
  openReportDir,
  chromiumFailed,
  pdfNotWritten,
  writeReport,
  type WrittenReport,
} from "./write.js";

export interface ProduceOptions {
  kind: ReportKind;
  fromMs: number;
  toMs: number;
  out: string;
  formats: ReportFormat[];
  filters: ReportFilters;
  generatedAtMs?: number;
  /** A Chromium already running to print the PDF in. */
  browser?: Browser;
  /** The time a period is compared with (default: the clock): one not begun is refused. */
  nowMs?: number;
  /** Write the report although a filter names nothing stored (page one says so). */
  force?: boolean;
  /** Write over the leftover of an interrupted report in `out` (never over a finished one). */
  replace?: boolean;
  /** Told each step of the build as it starts (a terminal shows it). */
  progress?: ReportProgress;
}

/**
 * Builds a report from an open warehouse and writes its directory; when it fails, the files it
 * wrote are removed (the directory is left empty, as it was found). Refused before anything is
 * written: a period not begun, a filter naming nothing stored (without `force`), a PDF asked for
 * without a Chromium to print it.
 */
export async function reportFrom(
  w: Warehouse,
  config: Config,
  o: ProduceOptions,
): Promise<WrittenReport> {
  checkPeriod(o);
  const periodNotices = futureNotices(o, o.nowMs ?? Date.now());
  let chromiumPath: string | undefined;
  if (o.formats.includes("pdf") && o.browser === undefined) {
    const chromium = findChromium(config.reports.chromiumPath);
    if (!chromium.found) throw pdfNotWritten(chromium.reason);
    chromiumPath = chromium.path;
  }
  const reader = await ReportReader.open(w);
  const filterNotices = await checkFilters(reader, o);
  // Launched before the report is read, Chromium starts while the tables are read.
  const early =
    chromiumPath === undefined ? undefined : startChromium(chromiumPath);
  try {
    return await produce(w, config, o, {
      reader,
      notices: [...periodNotices, ...filterNotices],
      early,
    });
  } finally {
    await early?.close();
  }
}

/** reportFrom once the period and the filters are checked and Chromium is starting. */
async function produce(
  w: Warehouse,
  config: Config,
  o: ProduceOptions,
  checked: {
    reader: ReportReader;
    notices: Notice[];
    early: EarlyChromium | undefined;
  },
): Promise<WrittenReport> {
  const { reader, notices, early } = checked;
  const dir = resolve(o.out);
  const sharing = { groupReadable: config.files.groupReadable };
  openReportDir(dir, sharing, o.replace);
  const csv: CsvFiles = { dir, sharing, written: [] };
  try {
    const built = await buildReport(
      w,
      config,
      o,
      o.formats.includes("csv") ? csv : undefined,
      { reader, notices },
    );
    o.progress?.({
      n: built.steps,
      of: built.steps,
      what: `writing ${o.formats.join(", ")}`,
    });
    return await writeReport(
      dir,
      built,
      {
        formats: o.formats,
        chromiumPath: config.reports.chromiumPath,
        signingKeyFile: config.evidence.signingKeyFile,
        generatedAtMs: o.generatedAtMs ?? Date.now(),
        browser:
          o.browser ??
          (await early?.browser().catch((err: unknown) => {
            throw chromiumFailed(err);
          })),
        groupReadable: config.files.groupReadable,
      },
      csv.written,
    );
  } catch (err) {
    for (const name of readdirSync(dir))
      rmSync(join(dir, name), { force: true });
    throw err;
  }
}

export function parseFilters(list: string): ReportFilters {
  const out: ReportFilters = {};
  for (const part of list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const i = part.indexOf("=");
    const key = part.slice(0, i).trim();
    if (i <= 0 || !(FILTER_KEYS as readonly string[]).includes(key))
      throw new UsageError(
        `--filter: "${part}" is not key=value with a known key`,
        {
          hint: `use ${FILTER_KEYS.map((k) => `${k}=…`).join(",")}`,
        },
      );
    out[key as (typeof FILTER_KEYS)[number]] = part.slice(i + 1).trim();
  }
  return out;
}

/** A period ends after it starts. */
export function checkPeriod(o: { fromMs: number; toMs: number }): void {
  if (!(o.toMs > o.fromMs))
    throw new UsageError("--to must be after --from", {
      hint: "give the period as --from 2026-10-01 --to 2026-11-01 (the end is excluded)",
    });
}
