// Reports and evidence: Chromium prints a one-page PDF (the reports' own PDF path), the signing
// key is a readable Ed25519 key, and the directories scheduled reports go to are the owner's
// only. Each is skipped, with the reason, when it is not configured.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Config } from "../../config/index.js";
import { trustedPublicKey } from "../../evidence/manifest.js";
import { findChromium, renderPdf } from "../../reports/pdf.js";
import { modesFor, octal } from "../../util/private-files.js";
import { DEFAULT_ARCHIVE_DIR } from "../../warehouse/index.js";
import { fail, ok, skipped, warn, type Finding, familySpecs } from "./check.js";

export interface ReportCheckContext {
  config: Config;
}

const PROBE_HTML =
  "<!doctype html><html><body><h1>sessionhouse doctor</h1><p>one page</p></body></html>";

/** Pages of a PDF: its /Type /Page objects (not /Pages). */
function pageCount(pdf: Buffer): number {
  return pdf.toString("latin1").match(/\/Type\s*\/Page(?!s)/g)?.length ?? 0;
}

async function chromium(ctx: ReportCheckContext): Promise<Finding> {
  const configured = ctx.config.reports.chromiumPath;
  const lookup = findChromium(configured);
  if (!lookup.found) {
    const wantsPdf = ctx.config.reports.schedules.some((s) =>
      s.format.includes("pdf"),
    );
    if (configured !== undefined || wantsPdf)
      return fail(
        lookup.reason,
        "install Chromium or set SESSIONHOUSE_CHROMIUM_PATH; without it report.pdf is left out",
      );
    return skipped(
      "no Chromium found and none configured (SESSIONHOUSE_CHROMIUM_PATH): reports are written without report.pdf",
    );
  }
  const { pdf } = await renderPdf(PROBE_HTML, "doctor", lookup.path);
  const pages = pageCount(pdf);
  if (!pdf.subarray(0, 5).equals(Buffer.from("%PDF-")) || pages !== 1)
    return fail(
      `${lookup.path} printed ${pdf.length} bytes that are not a one-page PDF (${pages} pages)`,
      "check that the Chromium at that path runs headless (SESSIONHOUSE_CHROMIUM_PATH)",
    );
  return ok(`${lookup.path} printed a one-page PDF (${pdf.length} bytes)`);
}

function signingKey(ctx: ReportCheckContext): Finding {
  const file = ctx.config.evidence.signingKeyFile;
  if (file === undefined)
    return skipped(
      "no signing key configured (SESSIONHOUSE_SIGNING_KEY_FILE): reports and archives are not signed",
    );
  // Throws a UsageError naming the file and how to make a key: a failed check.
  trustedPublicKey({ signingKeyFile: file });
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0)
    return warn(
      `${file} is a readable Ed25519 private key, with mode ${octal(mode)}: others may read it`,
      `chmod 0600 ${file}`,
    );
  return ok(`${file} is a readable Ed25519 private key (mode ${octal(mode)})`);
}

/** Modes of directories reports or archives go to: the owner's only, and writable by the owner. */
function dirModes(dirs: Iterable<string>, ctx: ReportCheckContext): Finding {
  const want = modesFor(ctx.config.files).dir;
  const found: string[] = [];
  const problems: { status: "warn" | "fail"; text: string; fix: string }[] = [];
  for (const dir of dirs) {
    let mode: number;
    try {
      mode = statSync(dir).mode & 0o777;
    } catch {
      found.push(`${dir} (made when first written, mode ${octal(want)})`);
      continue;
    }
    if ((mode & 0o700) !== 0o700)
      problems.push({
        status: "fail",
        text: `${dir} has mode ${octal(mode)}: its owner may not write to it`,
        fix: `chmod ${octal(want)} ${dir}`,
      });
    else if ((mode & ~want & 0o777) !== 0)
      problems.push({
        status: "warn",
        text: `${dir} has mode ${octal(mode)}, open to other users (expected ${octal(want)})`,
        fix: `chmod ${octal(want)} ${dir}`,
      });
    else found.push(`${dir} (${octal(mode)})`);
  }
  if (problems.length === 0) return ok(found.join(", "));
  return {
    status: problems.some((p) => p.status === "fail") ? "fail" : "warn",
    found: problems.map((p) => p.text).join("; "),
    fix: problems.map((p) => p.fix).join("; "),
  };
}

function reportDirs(ctx: ReportCheckContext): Finding {
  const schedules = ctx.config.reports.schedules;
  if (schedules.length === 0)
    return skipped("no scheduled reports (reports.schedules)");
  return dirModes(new Set(schedules.map((s) => resolve(s.out))), ctx);
}

/** The directory `archive export` writes to by default, when it exists here. */
function archiveDir(ctx: ReportCheckContext): Finding {
  const dir = resolve(DEFAULT_ARCHIVE_DIR);
  if (!existsSync(dir))
    return skipped(
      `no ${DEFAULT_ARCHIVE_DIR} here: each archive export --to DIR makes the directory it names`,
    );
  return dirModes([dir], ctx);
}

export const REPORT_CHECKS = familySpecs<ReportCheckContext>("reports", false, [
  ["chromium", chromium],
  ["signing key", signingKey],
  ["report directories", reportDirs],
  ["archive directory", archiveDir],
]);
