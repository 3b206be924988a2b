// The access review reads the period's sessions once: every table of sessions (per person,
// systems per person, new access, privileged or production access, sessions per day, the
// accounts without activity) and page one's totals come from that one read
// (src/warehouse/reports/access-one-read.ts), and each table equals, row for row and in its
// order, the query of that table alone (accessQueries, controlPlaneQueries.inactiveAccounts) on
// simulator data of several people, resources and days: the person from sessions_enriched or
// as the user key, with no filter and with each filter.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildReport, type ReportFilters } from "../../../src/reports/build.js";
import { typedRow, type ReportTable } from "../../../src/reports/model.js";
import {
  accessQueries,
  chTime,
  controlPlaneQueries,
  ReportReader,
  type ReportQuery,
  type SessionSource,
} from "../../../src/warehouse/index.js";
import { NOON } from "../../helpers/simulator.js";
import { reportFixture, type Fixture } from "../../helpers/report-fixture.js";
import { select } from "../../helpers/warehouse.js";

const DAY = 86_400_000;
/** Two days and a half up to the simulator's noon: three calendar days, the day before empty of sessions. */
const PERIODS = [
  { fromMs: NOON - DAY, toMs: NOON },
  { fromMs: NOON - 2.5 * DAY, toMs: NOON },
];

let f: Fixture;
/** A person, a resource and an environment with sessions in the period. */
let some: { person: string; resource: string; environment: string };

beforeAll(async () => {
  f = await reportFixture();
  const [row] = await select<{
    person: string;
    resource: string;
    environment: string;
  }>(
    f.w,
    `SELECT person_email AS person, s.resource_name AS resource, e.environment AS environment
     FROM {db}.sessions_enriched AS s
     INNER JOIN {db}.resource_environments AS e ON e.resource_name = s.resource_name
     WHERE person_email != '' AND start_time >= {from:DateTime64(3, 'UTC')}
     ORDER BY person, resource LIMIT 1`,
    { from: chTime(NOON - DAY) },
  );
  if (!row) throw new Error("no session with a person and an environment");
  some = row;
  await f.sim.close();
}, 180_000);

afterAll(async () => {
  await f?.w.close();
});

/** Each table of sessions and the query of it alone. */
const ALONE: Record<string, (s: SessionSource) => ReportQuery> = {
  "access-per-person": (s) => accessQueries(s).perPerson,
  "access-per-person-system": (s) => accessQueries(s).perPersonSystem,
  "access-new": (s) => accessQueries(s).newAccess,
  "access-privileged-production": (s) => accessQueries(s).privileged,
  "access-inactive-accounts": () => controlPlaneQueries.inactiveAccounts,
};

function tableOf(
  built: Awaited<ReturnType<typeof buildReport>>,
  id: string,
): ReportTable {
  const t = built.report.sections
    .flatMap((s) => s.tables)
    .find((x) => x.id === id);
  if (!t) throw new Error(`no table ${id}`);
  return t;
}

/** Compares every table of the one read with its query alone; the rows of each table. */
async function compare(
  source: SessionSource,
  period: { fromMs: number; toMs: number },
  filters: ReportFilters,
): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  const built = await buildReport(f.w, f.config, {
    kind: "access-review",
    ...period,
    filters,
  });
  const reader = await ReportReader.open(f.w);
  const params = {
    from: chTime(period.fromMs),
    to: chTime(period.toMs),
    previousFrom: chTime(2 * period.fromMs - period.toMs),
    user: filters.user ?? "",
    resource: filters.resource ?? "",
    environment: filters.environment ?? "",
  };
  const place = (table: string) => ({ report: "", section: "", table });
  const say = `${source} ${JSON.stringify(filters)} ${chTime(period.fromMs)}`;
  for (const [id, alone] of Object.entries(ALONE)) {
    const q = alone(source);
    const t = tableOf(built, id);
    const rows = (await reader.rows(q, params)) ?? [];
    expect(rows.length, `${id} ${say}`).toBeLessThan(500);
    expect(t.total, `${id} ${say}`).toBe(rows.length);
    totals[id] = t.total;
    expect(t.rows, `${id} ${say}`).toEqual(
      rows.map((r) => typedRow(r, t.columns, place(id))),
    );
  }
  const all =
    (await reader.rows(accessQueries(source).totalsAndDays, params)) ?? [];
  const whole = all.find((r) => Number(r.whole_period) === 1) ?? {};
  const days = all.filter((r) => Number(r.whole_period) !== 1);
  const perDay = tableOf(built, "access-per-day");
  expect(perDay.rows, say).toEqual(
    days.map((r) => typedRow(r, perDay.columns, place("access-per-day"))),
  );
  const figure = (label: string) =>
    built.report.summary.find((x) => x.label === label)?.value;
  expect(
    [
      "People",
      "Sessions",
      "Systems",
      "Production sessions",
      "Privileged sessions",
    ].map(figure),
    say,
  ).toEqual(
    [
      "people",
      "sessions",
      "systems",
      "production_sessions",
      "privileged_sessions",
    ].map((k) => Number(whole[k] ?? 0)),
  );
  // The sessions are read by the one read, and else only by page one's extent of the record
  // (every session, not the period's) and the sessions of the detection hits.
  const reads = built.queries
    .filter((q) => /\.`?sessions(_enriched)?`?\b/.test(q.sql))
    .map((q) => q.id);
  expect(reads, say).toEqual([
    "coverage.sessions_extent",
    ...(source === "plain" ? ["access.sessions_per_day_rollups"] : []),
    "access.one_read",
    "access.detection_hits",
  ]);
  return { ...totals, "access-per-day": perDay.total };
}

describe("the access review's one read of the sessions", () => {
  it("gives each table the rows of its query alone, in its order, with the person from sessions_enriched", async () => {
    expect(some.person).toContain("@");
    for (const period of PERIODS) {
      const rows = await compare("enriched", period, {});
      // Several people, systems and days; new, privileged and unused access among them.
      for (const [id, n] of Object.entries(rows))
        expect(n, id).toBeGreaterThan(id === "access-per-day" ? 1 : 2);
    }
    const [period] = PERIODS;
    if (!period) throw new Error("no period");
    for (const filters of [
      { user: some.person },
      { resource: some.resource },
      { environment: some.environment },
      { user: some.person, resource: some.resource },
    ])
      await compare("enriched", period, filters);
  });

  it("and with the person as the user key (no sessions_enriched)", async () => {
    await f.w.client.command({
      query: `DROP VIEW ${f.w.database}.sessions_enriched`,
    });
    for (const period of PERIODS) await compare("plain", period, {});
    const [period] = PERIODS;
    if (!period) throw new Error("no period");
    await compare("plain", period, { resource: some.resource });
  });
});
