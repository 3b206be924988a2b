// What a kind of report gets to build itself, and what it gives back.
import type { Config } from "../../config/index.js";
import type { ReportReader, SessionSource } from "../../warehouse/index.js";
import type { CoverageRead } from "../coverage.js";
import type { CsvFiles } from "../table-rows.js";
import type { Figure, Notice, ReportSection } from "../model.js";

/** Where the build of a report is: step n of `of` (a table, by its title, or the files written). */
export interface ReportStep {
  n: number;
  of: number;
  what: string;
}

/** Told each step of a report's build as it starts. */
export type ReportProgress = (step: ReportStep) => void;

export interface KindContext {
  reader: ReportReader;
  /** Query parameters: from, to, previousFrom (DateTime64 text), user, resource, environment. */
  params: Record<string, string>;
  config: Config;
  /** Where the person behind a session comes from. */
  source: SessionSource;
  /** What the record covers over the period, read before any kind's tables. */
  coverage: CoverageRead;
  /** Where the tables' CSV files are written as their rows are read (none: no CSV asked for). */
  csv: CsvFiles | undefined;
  /** Told each table as its rows are read (none: nobody is told). */
  progress: ReportProgress | undefined;
}

export interface KindResult {
  title: string;
  summary: Figure[];
  sections: ReportSection[];
  notices: Notice[];
  /** Checkpoint streams the report's data comes from (said on page one when short). */
  streams: string[];
  /** The steps of the build: its tables, then the files written (the last step). */
  steps: number;
}

/** Said when people are the user_key because the control-plane streams are not exported. */
export function personNotice(source: SessionSource): Notice[] {
  return source === "enriched"
    ? []
    : [
        {
          level: "info",
          text: "People are the sessions' user key (the e-mail of a human, the user name of a machine): the control-plane streams (sessions_enriched) are not exported, so the human behind machine and native users is not known.",
        },
      ];
}
