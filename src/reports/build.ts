// Builds a report of a kind over a period from what the warehouse holds: the kind's tables, the
// coverage of the streams it relies on (said on page one), and every query as it ran. The
// tables' rows are streamed to their CSV files as they are read (table-rows.ts).
import type { Config, ReportKind } from "../config/index.js";
import {
  chTime,
  type ExecutedQuery,
  type FilterKey,
  ReportReader,
  type Warehouse,
} from "../warehouse/index.js";
import { PRODUCT } from "../util/version.js";
import { readCoverage, type Coverage } from "./coverage.js";
import { accessReview } from "./kinds/access-review.js";
import type { KindContext, ReportProgress } from "./kinds/context.js";
import { coverageAndIntegrity } from "./kinds/coverage-and-integrity.js";
import { policyExceptions } from "./kinds/policy-exceptions.js";
import { sensitiveDataAccess } from "./kinds/sensitive-data-access.js";
import type { Notice, Report } from "./model.js";
import type { CsvFiles } from "./table-rows.js";
import type { Kind } from "./spec.js";

/** Every kind of report, as its spec. */
export const KINDS: Record<ReportKind, Kind> = {
  "access-review": accessReview,
  "sensitive-data-access": sensitiveDataAccess,
  "policy-exceptions": policyExceptions,
  "coverage-and-integrity": coverageAndIntegrity,
};

/** Filters of a report: a person (e-mail, user key), a resource name, an environment. */
export const FILTER_KEYS = [
  "user",
  "resource",
  "environment",
] as const satisfies readonly FilterKey[];
export type ReportFilters = Partial<
  Record<(typeof FILTER_KEYS)[number], string>
>;

export interface ReportRequest {
  kind: ReportKind;
  fromMs: number;
  toMs: number;
  filters: ReportFilters;
  /** Told each step of the build as it starts (a terminal shows it). */
  progress?: ReportProgress | undefined;
}

export interface BuiltReport {
  report: Report;
  coverage: Coverage;
  queries: ExecutedQuery[];
  /** The steps of the build (ReportStep.of): its tables, then the files written. */
  steps: number;
}

/** What was read before the build: its reader (its queries go in the manifest) and page one's first notices. */
interface BuildStart {
  reader: ReportReader;
  notices: Notice[];
}

/**
 * Builds the report; with `csv`, every table's rows are written to its CSV file there as they
 * are read (the report then holds the first TOP_ROWS of each).
 */
export async function buildReport(
  w: Warehouse,
  config: Config,
  req: ReportRequest,
  csv?: CsvFiles,
  start?: BuildStart,
): Promise<BuiltReport> {
  const reader = start?.reader ?? (await ReportReader.open(w));
  const params: Record<string, string> = {
    from: chTime(req.fromMs),
    to: chTime(req.toMs),
    previousFrom: chTime(req.fromMs - (req.toMs - req.fromMs)),
  };
  for (const key of FILTER_KEYS) params[key] = req.filters[key] ?? "";
  const period = {
    from: new Date(req.fromMs).toISOString(),
    to: new Date(req.toMs).toISOString(),
  };
  const ctx: KindContext = {
    reader,
    params,
    config,
    source: reader.has("sessions_enriched") ? "enriched" : "plain",
    coverage: await readCoverage(reader, params, period, {
      days: config.clickhouse.retentionDays,
      nowMs: Date.now(),
    }),
    csv,
    progress: req.progress,
  };
  const result = await KINDS[req.kind].build(ctx);
  const { coverage, notices } = ctx.coverage.forStreams(result.streams);
  const filters = Object.fromEntries(
    FILTER_KEYS.flatMap((k) => {
      const v = req.filters[k];
      return v ? [[k, v]] : [];
    }),
  );
  return {
    report: {
      kind: req.kind,
      title: result.title,
      product: { name: PRODUCT.name, version: PRODUCT.version },
      database: w.database,
      period,
      filters,
      notices: [
        ...(start?.notices ?? []),
        ...result.notices.filter((n) => n.level === "warning"),
        ...notices,
        ...result.notices.filter((n) => n.level === "info"),
      ],
      summary: result.summary,
      sections: result.sections,
    },
    coverage,
    queries: reader.executed,
    steps: result.steps,
  };
}
