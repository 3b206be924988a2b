// A report's filters must name something the record holds: a value never seen in a session
// that started before the period's end (a misspelt e-mail, say) is refused with the nearest
// values seen, since a report of nobody would read as "no access"; with --force the report is
// written and page one says the filter matches nothing stored. A value seen only before the
// period is said on page one: nobody matched it in the period; so are filters each seen in the
// period that no session matches all at once.
import { UsageError } from "../util/errors.js";
import { byNearness } from "../util/nearest.js";
import {
  chTime,
  filteredSessionsQuery,
  filterSeenQuery,
  filterValuesQuery,
  type ReportReader,
  type SessionSource,
} from "../warehouse/index.js";
import { FILTER_KEYS, type ReportRequest } from "./build.js";
import type { Notice } from "./model.js";

/** Values a refusal offers, nearest first. */
const OFFERED = 5;

/**
 * Checks every filter of `req` against the sessions stored; refuses one never seen (unless
 * `force`) and returns what page one says of the filters.
 */
export async function checkFilters(
  reader: ReportReader,
  req: ReportRequest & { force?: boolean },
): Promise<Notice[]> {
  const source: SessionSource = reader.has("sessions_enriched")
    ? "enriched"
    : "plain";
  const notices: Notice[] = [];
  for (const key of FILTER_KEYS) {
    const value = req.filters[key];
    if (value === undefined || value === "") continue;
    const params = {
      from: chTime(req.fromMs),
      to: chTime(req.toMs),
      value,
    };
    const seen = (await reader.rows(filterSeenQuery(key, source), params))?.[0];
    if (seen === undefined) continue; // its tables are absent: page one says so
    const inPeriod = Number(seen.in_period);
    const before = Number(seen.before);
    if (inPeriod > 0) continue;
    if (before > 0) {
      notices.push({
        level: "warning",
        text: `The filter ${key}=${value} matched nobody in the period: no session of it started between the period's start and end (its last session before the period started at ${String(seen.last_before)} UTC). Every figure of this report is about nobody; it is not a finding that ${value} had no access rights.`,
      });
      continue;
    }
    const values =
      (await reader.rows(filterValuesQuery(key, source), params)) ?? [];
    const nearest = byNearness(
      value,
      values.map((r) => String(r.value)),
    ).slice(0, OFFERED);
    const offered =
      nearest.length > 0
        ? `the nearest seen: ${nearest.join(", ")}`
        : "no value of it was seen at all";
    if (!req.force)
      throw new UsageError(
        `--filter ${key}=${value}: no session stored up to the period's end has this ${key} (${offered})`,
        {
          hint: `a report of nobody would read as "no access": check the spelling, or give --force to write the report anyway (page one will say the filter matches nothing stored)`,
        },
      );
    notices.push({
      level: "warning",
      text: `The filter ${key}=${value} matches no session stored up to the period's end (${offered}); the report was written with --force, and every figure of it is about nobody.`,
    });
  }
  if (notices.length === 0)
    notices.push(...(await together(reader, req, source)));
  return notices;
}

/** What page one says when filters each seen in the period match no session all at once. */
async function together(
  reader: ReportReader,
  req: ReportRequest,
  source: SessionSource,
): Promise<Notice[]> {
  const given = FILTER_KEYS.flatMap((k) => {
    const v = req.filters[k];
    return v ? [`${k}=${v}`] : [];
  });
  if (given.length < 2) return [];
  const params: Record<string, string> = {
    from: chTime(req.fromMs),
    to: chTime(req.toMs),
  };
  for (const k of FILTER_KEYS) params[k] = req.filters[k] ?? "";
  const [row] =
    (await reader.rows(filteredSessionsQuery(source), params)) ?? [];
  if (row === undefined || Number(row.sessions) > 0) return [];
  return [
    {
      level: "warning",
      text: `The filters ${given.join(", ")} matched nobody in the period together: each of them matched sessions in it, and no session matches them all. Every figure of this report is about nobody; it is not a finding of no access.`,
    },
  ];
}
