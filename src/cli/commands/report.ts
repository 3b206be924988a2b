// `sessionhouse report <kind> --from T --to T [--out DIR] [--format …] [--filter …]`: a
// compliance report as a directory an auditor can check offline; `report verify DIR` checks
// one. Reports only read the warehouse: on the embedded engine they work while `run` holds it.
import { join } from "node:path";
import type { Command } from "commander";
import {
  REPORT_FORMATS,
  REPORT_KINDS,
  type Config,
  type ReportFormat,
  type ReportKind,
} from "../../config/index.js";
import { verifyEvidence } from "../../evidence/manifest.js";
import { FILTER_KEYS } from "../../reports/build.js";
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
import { publicKeyFlag, rangeFlags, subcommand } from "../options.js";
import { configFrom, type GlobalOptions } from "../runtime.js";

const KIND_HELP: Record<ReportKind, string> = {
  "access-review":
    "per person: systems reached, sessions, first and last access, data labels, privileged or production access, new access, accounts without activity",
  "policy-exceptions":
    "policy suspensions in force during the period and the sessions under them",
  "sensitive-data-access":
    "labelled data returned, by label, resource and person, with the top query fingerprints",
  "coverage-and-integrity":
    "what the record covers: checkpoints, windows not stored or skipped, dead letters, runs, gaps, retention, rows per month",
};

interface ReportOptions {
  from?: string;
  to?: string;
  out?: string;
  format: string;
  filter?: string;
}

export function registerReportCommand(
  program: Command,
  globals: () => GlobalOptions,
): void {
  const report = subcommand(program, "report", {
    description:
      "compliance reports: a directory with report.html, report.pdf, CSVs, report.json and a signed manifest",
  });
  for (const kind of REPORT_KINDS)
    subcommand(report, kind, {
      description: KIND_HELP[kind],
      options: [
        ...rangeFlags(
          "start of the period (default: the previous month's first day)",
          "end of the period, excluded (default: this month's first day)",
        ),
        {
          flags: "--out <dir>",
          help: "directory to write (default ./reports/<kind>-<from>-to-<to>)",
        },
        {
          flags: "--format <list>",
          help: `formats: ${REPORT_FORMATS.join(",")}`,
          default: REPORT_FORMATS.join(","),
        },
        {
          flags: "--filter <list>",
          help: `only these: ${FILTER_KEYS.map((k) => `${k}=…`).join(",")}`,
        },
      ],
      access: "reads",
    }).action((o: ReportOptions) => runReport(globals(), kind, o));
  subcommand(report, "verify", {
    description:
      "check a report directory offline: every file's SHA-256 against manifest.json, and its signature",
    args: [["<dir>", "the report directory"]],
    options: [
      publicKeyFlag("Ed25519 public key (PEM) the manifest must be signed by"),
    ],
  }).action(runVerify);
}

/** `report <kind>`: the period defaults to the previous month. */
async function runReport(
  globals: GlobalOptions,
  kind: ReportKind,
  o: ReportOptions,
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const nowMs = Date.now();
  const fallback = previousPeriod("previous-month", nowMs);
  const fromMs = o.from
    ? parseInstant(o.from, "--from", nowMs)
    : fallback.fromMs;
  const toMs = o.to ? parseInstant(o.to, "--to", nowMs) : fallback.toMs;
  const written = await produceReport(config, {
    kind,
    fromMs,
    toMs,
    out: o.out ?? join("reports", reportDirName(kind, fromMs, toMs)),
    formats: parseFormats(o.format),
    filters: parseFilters(o.filter ?? ""),
  });
  printWritten(written);
}

/** `report verify DIR`: every file against the manifest, and its signature. */
function runVerify(dir: string, o: { publicKey?: string }): void {
  const check = verifyEvidence(dir, { publicKeyFile: o.publicKey });
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
export async function produceReport(
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
  if (w.pdfSkipped !== null)
    process.stderr.write(`report.pdf skipped: ${w.pdfSkipped}\n`);
}
