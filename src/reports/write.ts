// A report directory: report.html, report.pdf, one CSV per table (written by the build as the
// rows are read, table-rows.ts), report.json and manifest.json
// (src/evidence/manifest.ts: every file's SHA-256, the SQL run, the product version, the data's
// coverage, the generation time and, with a signing key, an Ed25519 signature). Only the
// manifest's `generatedAt` depends on the clock: the same data gives the same other bytes.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import type { ReportFormat } from "../config/index.js";
import { type ManifestFile, writeManifest } from "../evidence/manifest.js";
import { UsageError } from "../util/errors.js";
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
  /** Why the PDF was not written, when it was asked for and not written. */
  pdfSkipped: string | null;
  manifestSha256: string;
  signed: boolean;
}

/**
 * Makes the report directory (new, or empty): a report directory holds one report, as its
 * manifest lists it.
 */
export function openReportDir(dir: string, sharing: Sharing): void {
  makePrivateDir(dir, sharing);
  if (readdirSync(dir).length > 0)
    throw new UsageError(`the report directory ${dir} is not empty`, {
      hint: "give --out a new or empty directory: a report directory holds one report, as its manifest lists it",
    });
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
  let pdfSkipped: string | null = null;
  if (formats.has("pdf")) {
    const chromium = options.browser
      ? ({ found: true, path: options.browser } as const)
      : findChromium(options.chromiumPath);
    if (!chromium.found) pdfSkipped = chromium.reason;
    else {
      const { pdf, refusedRequests } = await renderPdf(
        html,
        `${report.title}, ${report.period.from} to ${report.period.to}`,
        chromium.path,
      );
      if (refusedRequests.length > 0)
        throw new Error(
          `report.html asked for ${refusedRequests.join(", ")}: it must be self-contained`,
        );
      write("report.pdf", pdf);
    }
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
      pdf:
        pdfSkipped === null
          ? formats.has("pdf")
            ? "written"
            : "not asked for"
          : `skipped: ${pdfSkipped}`,
    },
    { signingKeyFile: options.signingKeyFile, hashed: csv, ...sharing },
  );
  return {
    dir,
    files: manifest.files.map((f) => f.path),
    pdfSkipped,
    manifestSha256: sha256,
    signed: manifest.signature !== undefined,
  };
}
