// A report directory: report.html, report.pdf, one CSV per table (written by the build as the
// rows are read, table-rows.ts), report.json and manifest.json
// (src/evidence/manifest.ts: every file's SHA-256, the SQL run, the product version, the data's
// coverage, the generation time and, with a signing key, an Ed25519 signature). Only the
// manifest's `generatedAt` depends on the clock: the same data gives the same other bytes.
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import type { ReportFormat } from "../config/index.js";
import {
  MANIFEST_FILE,
  type ManifestFile,
  writeManifest,
} from "../evidence/manifest.js";
import { errorMessage, FatalError, UsageError } from "../util/errors.js";
import {
  makePrivateDir,
  writePrivateFile,
  type Sharing,
} from "../util/private-files.js";
import type { BuiltReport } from "./build.js";
import { renderHtml } from "./html.js";
import { findChromium, renderPdf } from "./pdf.js";

export interface WriteOptions {
  formats: readonly ReportFormat[];
  chromiumPath: string | undefined;
  signingKeyFile: string | undefined;
  generatedAtMs: number;
  /** A Chromium already running to print the PDF in (instead of launching one). */
  browser?: Browser | undefined;
  /** Directories 0750 and files 0640 instead of 0700 and 0600 (files.groupReadable). */
  groupReadable?: boolean | undefined;
}

export interface WrittenReport {
  dir: string;
  files: string[];
  manifestSha256: string;
  signed: boolean;
}

/** The files a report writes before its manifest (the only ones an interrupted run leaves). */
const REPORT_FILES = ["report.html", "report.pdf", "report.json"];
const isReportFile = (name: string): boolean =>
  REPORT_FILES.includes(name) || name.endsWith(".csv");

/** Some names of a directory, for a message. */
const named = (names: readonly string[]): string =>
  names.length > 5
    ? `${names.slice(0, 5).join(", ")} and ${names.length - 5} more`
    : names.join(", ");

/**
 * Makes the report directory (new, or empty): a report directory holds one report, as its
 * manifest lists it. A directory an interrupted report left (its files, no manifest: the
 * manifest is written last) is named as such, and emptied with `replace`; a finished report
 * (with its manifest) or files no report writes are never removed.
 */
export function openReportDir(
  dir: string,
  sharing: Sharing,
  replace = false,
): void {
  makePrivateDir(dir, sharing);
  const entries = readdirSync(dir).sort();
  if (entries.length === 0) return;
  if (entries.includes(MANIFEST_FILE))
    throw new UsageError(
      `the report directory ${dir} holds a finished report (its manifest.json is there)`,
      {
        hint: "give --out a new or empty directory; a finished report is never written over (remove it yourself if it is to go)",
      },
    );
  const foreign = entries.filter((n) => !isReportFile(n));
  if (foreign.length > 0)
    throw new UsageError(
      `the report directory ${dir} is not empty: it holds ${named(foreign)}, which no report writes`,
      { hint: "give --out a new or empty directory" },
    );
  if (!replace)
    throw new UsageError(
      `the report directory ${dir} holds the leftover of an interrupted report: ${named(entries)} and no manifest.json (a report writes its manifest last)`,
      {
        hint: `remove it (rm -r ${dir}) and run the report again, or run it again with --replace to write the report over the leftover`,
      },
    );
  for (const name of entries) rmSync(join(dir, name), { force: true });
}

/** What to do when report.pdf cannot be written. */
const PDF_HINT =
  "install Chromium (Debian/Ubuntu: apt-get install chromium; macOS: brew install --cask chromium) or set SESSIONHOUSE_CHROMIUM_PATH to its executable, or leave pdf out of --format (e.g. --format html,csv,json)";

/** report.pdf was asked for and cannot be written (exit 1). */
export function pdfNotWritten(why: string, cause?: unknown): FatalError {
  return new FatalError(
    "REPORT_PDF_NOT_WRITTEN",
    `report.pdf was asked for (--format pdf) and was not written: ${why}; no report was written`,
    { hint: PDF_HINT, cause },
  );
}

/** Chromium did not launch or did not print report.html (exit 1). */
export function chromiumFailed(err: unknown): FatalError {
  return pdfNotWritten(`Chromium failed: ${errorMessage(err)}`, err);
}

/**
 * Writes report.html, report.pdf, report.json and the manifest into `dir` (made by
 * openReportDir), beside the CSV files the build wrote there (`csv`, each hashed as written).
 */
export async function writeReport(
  dir: string,
  built: BuiltReport,
  options: WriteOptions,
  csv: readonly ManifestFile[] = [],
): Promise<WrittenReport> {
  const sharing = { groupReadable: options.groupReadable };
  const write = (name: string, data: string | Buffer) =>
    writePrivateFile(join(dir, name), data, { ...sharing, flag: "wx" });
  const { report } = built;
  const formats = new Set(options.formats);
  const html = renderHtml(report);
  if (formats.has("html")) write("report.html", html);
  if (formats.has("pdf")) {
    const chromium = options.browser
      ? ({ found: true, path: options.browser } as const)
      : findChromium(options.chromiumPath);
    if (!chromium.found) throw pdfNotWritten(chromium.reason);
    const { pdf, refusedRequests } = await renderPdf(
      html,
      `${report.title}, ${report.period.from} to ${report.period.to}`,
      chromium.path,
    ).catch((err: unknown) => {
      throw chromiumFailed(err);
    });
    if (refusedRequests.length > 0)
      throw new Error(
        `report.html asked for ${refusedRequests.join(", ")}: it must be self-contained`,
      );
    write("report.pdf", pdf);
  }
  if (formats.has("json"))
    write("report.json", `${JSON.stringify(report, null, 2)}\n`);
  const { manifest, sha256 } = writeManifest(
    dir,
    {
      kind: report.kind,
      title: report.title,
      period: report.period,
      filters: report.filters,
      product: report.product,
      database: report.database,
      generatedAt: new Date(options.generatedAtMs).toISOString(),
      coverage: built.coverage,
      notices: report.notices,
      queries: built.queries,
      formats: [...options.formats].sort(),
      pdf: formats.has("pdf") ? "written" : "not asked for",
    },
    { signingKeyFile: options.signingKeyFile, hashed: csv, ...sharing },
  );
  return {
    dir,
    files: manifest.files.map((f) => f.path),
    manifestSha256: sha256,
    signed: manifest.signature !== undefined,
  };
}
