// `sessionhouse report <kind> --from T --to T [--out DIR] [--format …] [--filter …]`: a
// compliance report as a directory an auditor can check offline; `report verify DIR` checks
// one. Reports only read the warehouse: on the embedded engine they work while `run` holds it.
import { join } from "node:path";
import {
  REPORT_FORMATS,
  type Config,
  type ReportFormat,
  type ReportKind,
} from "../../config/index.js";
import { verifyEvidence } from "../../evidence/manifest.js";
import {
  checkPeriod,
  parseFilters,
  reportFrom,
  type ProduceOptions,
} from "../../reports/produce.js";
import { previousPeriod, reportDirName } from "../../reports/period.js";
import type { WrittenReport } from "../../reports/write.js";
import { FatalError, UsageError } from "../../util/errors.js";
import { parseInstant } from "../../util/time.js";
import { withWarehouse } from "../command-warehouse.js";
import { ReportProgressLine } from "../report-progress.js";
import { configFrom, type GlobalOptions } from "../runtime.js";

export interface ReportOptions {
  from?: string;
  to?: string;
  out?: string;
  format: string;
  filter?: string;
  force?: boolean;
  replace?: boolean;
}

/**
 * `report <kind>`: the period defaults to the previous month; with only `--from`, it ends now
 * (what `--to now` reads).
 */
export async function runReport(
  globals: GlobalOptions,
  kind: ReportKind,
  o: ReportOptions,
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const { fromMs, toMs } = reportPeriod(o, Date.now());
  const progress = new ReportProgressLine(kind);
  const written = await reportWithReadAccess(config, {
    kind,
    fromMs,
    toMs,
    out: o.out ?? join("reports", reportDirName(kind, fromMs, toMs)),
    formats: parseFormats(o.format),
    filters: parseFilters(o.filter ?? ""),
    force: o.force === true,
    replace: o.replace === true,
    progress: progress.update,
  }).finally(() => progress.close());
  printWritten(written);
}

/**
 * The period of `report <kind>`: `--from` and `--to` as given; neither, the previous month; only
 * `--from`, up to now; only `--to`, from the previous month's start.
 */
function reportPeriod(
  o: Pick<ReportOptions, "from" | "to">,
  nowMs: number,
): { fromMs: number; toMs: number } {
  const fallback = previousPeriod("previous-month", nowMs);
  const fromMs = o.from
    ? parseInstant(o.from, "--from", nowMs)
    : fallback.fromMs;
  const toMs = o.to
    ? parseInstant(o.to, "--to", nowMs)
    : o.from
      ? parseInstant("now", "--to", nowMs)
      : fallback.toMs;
  return { fromMs, toMs };
}

/** `report verify DIR`: every file against the manifest, and its signature. */
export function runReportVerify(
  _globals: GlobalOptions,
  dir: string,
  o: { publicKey?: string },
): void {
  const check = verifyEvidence(dir, { publicKeyFile: o.publicKey });
  if (check.problems.length === 0 && check.manifest.files.length === 0)
    throw new FatalError(
      "EVIDENCE_EMPTY",
      `${dir}: its manifest.json lists no file: there is no report in it to rely on`,
      {
        hint: "produce the report again (sessionhouse report KIND --from … --to …); every format asked for is written, or the report fails",
      },
    );
  if (check.problems.length > 0)
    throw new FatalError(
      "EVIDENCE_INVALID",
      `${dir} does not match its manifest:\n${check.problems.map((p) => `  - ${p}`).join("\n")}`,
      {
        hint: "the directory was changed after it was produced, or signed by another key: do not rely on it",
      },
    );
  const sig = check.signature;
  process.stdout.write(
    `OK: ${check.manifest.files.length} files match manifest.json (SHA-256 ${check.manifestSha256}); ${
      sig.state === "verified"
        ? `signed by Ed25519 key ${sig.fingerprint} (the given public key)`
        : sig.state === "unchecked"
          ? `signed by Ed25519 key ${sig.fingerprint}\nnot checked: the signature, no public key given (--public-key): anyone can sign a manifest with a key of their own`
          : "not signed"
    }\n`,
  );
}

/** Builds a report from the warehouse (read access) and writes its directory. */
export async function reportWithReadAccess(
  config: Config,
  o: ProduceOptions,
): Promise<WrittenReport> {
  checkPeriod(o);
  return withWarehouse(config, "read", (w) => reportFrom(w, config, o));
}

export function parseFormats(list: string): ReportFormat[] {
  const out = new Set<ReportFormat>();
  for (const f of list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(REPORT_FORMATS as readonly string[]).includes(f))
      throw new UsageError(`--format: "${f}" is not a report format`, {
        hint: `use some of ${REPORT_FORMATS.join(",")}`,
      });
    out.add(f as ReportFormat);
  }
  if (out.size === 0)
    throw new UsageError("--format lists no format", {
      hint: `use some of ${REPORT_FORMATS.join(",")}`,
    });
  return [...out];
}

function printWritten(w: WrittenReport): void {
  process.stdout.write(
    `report written to ${w.dir}: ${w.files.join(", ")}, manifest.json (SHA-256 ${w.manifestSha256}${w.signed ? ", signed" : ", not signed"})\n`,
  );
}
