import { describe, expect, it } from "vitest";
import { SimConnectError } from "../../../src/simulator/connect.js";
import {
  EXTRA_MEMBERS,
  LOG_FIELDS,
  MEMBER_OF_FIELD,
  MEMBERS,
  MULTI_VALUED_FIELDS,
  type HistogramBucket,
  type ListLogAggregationsResponse,
  type TopValue,
} from "../../../src/simulator/logs/aggregate.js";
import { LogEventStore } from "../../../src/simulator/logs/events.js";
import {
  eventRecord,
  HOME_OF_FIELD,
  NUMBER_COLUMN,
  numberOf,
  type EventBatch,
  type FieldGroup,
} from "../../../src/simulator/logs/fields.js";
import {
  createListLogAggregationsHandler,
  type LogsRouteContext,
} from "../../../src/simulator/logs/handler.js";
import { createSessionGenerator } from "../../../src/simulator/sessions.js";
import { DAY, HOUR, T0 } from "../../helpers/simulator-call.js";

const SEED = 7;
const generator = createSessionGenerator({
  seed: SEED,
  sessionsPerDay: 2000,
  historyStartMs: T0 - 10 * DAY,
});
const handler = createListLogAggregationsHandler();
const ctx = (nowMs = T0): LogsRouteContext => ({
  nowMs,
  generator,
  seed: SEED,
});
const secs = (ms: number): string => String(Math.floor(ms / 1000));

type Body = Record<string, unknown>;

function ask(body: Body, nowMs = T0): ListLogAggregationsResponse {
  return handler(body, ctx(nowMs));
}

function window(startMs: number, endMs: number, extra: Body = {}): Body {
  return { startTimestamp: secs(startMs), endTimestamp: secs(endMs), ...extra };
}

function hits(r: ListLogAggregationsResponse): number {
  return Number(r.numHits ?? "0");
}

function invalid(body: Body): SimConnectError {
  try {
    ask(body);
  } catch (err) {
    if (err instanceof SimConnectError) {
      expect(err.code).toBe("invalid_argument");
      return err;
    }
    throw err;
  }
  throw new Error(`expected invalid_argument for ${JSON.stringify(body)}`);
}

const sum = (buckets: readonly { count?: number }[] | undefined): number =>
  (buckets ?? []).reduce((a, b) => a + (b.count ?? 0), 0);

/** The top-value members of a ListLogAggregations answer known today, in the API's order. */
const SPEC_MEMBERS =
  "sessionTypes, sessionIds, sessionApplicationNames, sessionClientIpAddresses, sessionServerIpAddresses, queryFingerprints, queryNormalized, queryReceived, querySent, resourceIds, resourceNames, resourceTypes, resourceHostnames, resourceTechnologies, connectorNames, connectorIds, spaceNames, spaceIds, userTypes, userSubTypes, userEmails, userUsernames, userIds, endUserTypes, endUserNames, endUserEmails, triggeredPolicyIds, triggeredPolicyNames, triggeredPolicyStatuses, triggeredPolicyTypes, responseDataVolumes, responseReturnedColumnNames, responseReturnedColumnPaths, responseReturnedColumnDataLabels, responseRowsSent, responseRowsReceived, deviceSystemVersions, deviceKernelVersions, deviceComputerNames, deviceUserNames, deviceModelNames, deviceModelIdentifiers, deviceModelNumbers, deviceSerialNumbers, userGroups, endUserGroups, controlPlaneCommandNames, controlPlaneCommandTypes, controlPlanePolicyActions, controlPlaneServices, controlPlaneMethods, controlPlaneUserEmails, controlPlaneUserTypes, controlPlaneUserIds, workflowIds, workflowNames, stepNames, stepTypes, triggerTypes, triggerNames, triggerUserEmails, triggerUserTypes, triggerUserIds, llmToolCallNames, llmModels, llmProviders, llmStopReasons".split(
    ", ",
  );

describe("fields", () => {
  it("maps a field to every member of the spec, plus exactly one extra member", () => {
    const members = Object.values(MEMBER_OF_FIELD) as string[];
    expect(new Set(members).size).toBe(members.length);
    expect(members.filter((m) => !SPEC_MEMBERS.includes(m))).toEqual([
      ...EXTRA_MEMBERS,
    ]);
    expect(SPEC_MEMBERS.filter((m) => !members.includes(m))).toEqual([]);
    expect(MEMBERS).toEqual(members);
    expect(LOG_FIELDS).toEqual(
      expect.arrayContaining(Object.keys(MEMBER_OF_FIELD)),
    );
    expect(MEMBER_OF_FIELD["resource.technology"]).toBe("resourceTechnologies");
  });

  it("fills every member, keeps each field at its home and multi-valued fields distinct", () => {
    const store = new LogEventStore(generator, { seed: SEED });
    const seen = new Set<string>();
    const checked = new Set<FieldGroup>();
    const problems: string[] = [];
    const checkGroup = (g: FieldGroup | undefined, home: string): void => {
      if (g === undefined || checked.has(g)) return;
      checked.add(g);
      for (const [f, v] of Object.entries(g.own)) {
        seen.add(f);
        const actual = HOME_OF_FIELD[f as keyof typeof HOME_OF_FIELD];
        if (actual !== home) problems.push(`${f} in ${home}, home ${actual}`);
        if (Array.isArray(v)) {
          if (!(MULTI_VALUED_FIELDS as readonly string[]).includes(f)) {
            problems.push(`${f} is multi-valued`);
          }
          if (new Set(v).size !== v.length) problems.push(`${f}: duplicates`);
        }
      }
      for (const p of g.parents) checkGroup(p, home);
    };
    store.forEachInWindow(T0 - DAY, T0, (b, from, to) => {
      checkGroup(b.ctx, "ctx");
      for (let i = from; i < to; i++) {
        checkGroup(b.detail[i], "detail");
        checkGroup(b.policy[i], "policy");
        if (numberOf(b, NUMBER_COLUMN.rowsReceived, i) >= 0) {
          seen.add("response.rows_received");
        }
        if (numberOf(b, NUMBER_COLUMN.rowsSent, i) >= 0) {
          seen.add("response.rows_sent");
        }
        if (numberOf(b, NUMBER_COLUMN.dataVolume, i) >= 0) {
          seen.add("response.data_volume");
        }
      }
    });
    expect(problems).toEqual([]);
    expect(LOG_FIELDS.filter((f) => !seen.has(f))).toEqual([]);
  });

  it("flattens an event into one record", () => {
    const store = new LogEventStore(generator, { seed: SEED });
    const s = generator
      .sessionsStartingIn(T0 - 2 * HOUR, T0)
      .find(
        (x) =>
          x.endUserId === "" &&
          numberOf(store.eventsOfSession(x), NUMBER_COLUMN.rowsSent, 0) >= 0,
      );
    expect(s).toBeDefined();
    if (s === undefined) return;
    const record = eventRecord(store.eventsOfSession(s), 0);
    expect(record.ts).toBe(s.startMs);
    expect(record["session.id"]).toBe(s.id);
    expect(record["resource.id"]).toBe(s.resourceId);
    expect(record["user.id"]).toBe(s.userId);
    expect(record["query.fingerprint"]).toMatch(/^[0-9a-f]{16}$/);
    expect(record["query.received"]).toEqual(expect.any(String));
    expect(record["response.rows_sent"]).toMatch(/^\d+$/);
    expect(record["end_user.email"]).toBeUndefined();
  });

  it("keeps a session's events inside the session and sorted", () => {
    const store = new LogEventStore(generator, { seed: SEED });
    const sessions = generator.sessionsStartingIn(T0 - 2 * HOUR, T0);
    let total = 0;
    for (const s of sessions) {
      const b = store.eventsOfSession(s);
      total += b.ts.length;
      expect(b.ts[0]).toBe(s.startMs);
      for (let i = 0; i < b.ts.length; i++) {
        const ts = b.ts[i] ?? NaN;
        expect(ts).toBeGreaterThanOrEqual(s.startMs);
        expect(ts).toBeLessThanOrEqual(s.startMs + s.durationMs);
        if (i > 0) expect(ts).toBeGreaterThanOrEqual(b.ts[i - 1] ?? NaN);
      }
      expect(b.ctx?.get("session.id")).toBe(s.id);
    }
    const mean = total / sessions.length;
    expect(mean).toBeGreaterThanOrEqual(5);
    expect(mean).toBeLessThanOrEqual(20);
  });
});

describe("ListLogAggregations", () => {
  it("makes numHits the sum of logsOverTime, with every step present", () => {
    const start = T0 - 6 * HOUR + 17 * 60_000; // not aligned on purpose
    const r = ask(window(start, T0, { histogramInterval: "5m" }));
    const steps = r.aggregations.logsOverTime ?? [];
    expect(hits(r)).toBeGreaterThan(0);
    expect(typeof r.numHits).toBe("string");
    expect(sum(steps)).toBe(hits(r));
    // From floor(start) to the last step before the end, every 5 minutes.
    const first = Math.floor(start / 300_000) * 300_000;
    expect(steps).toHaveLength((T0 - first) / 300_000);
    steps.forEach((s, i) => {
      expect(s.datetime).toBe(
        new Date(first + i * 300_000).toISOString().replace(".000Z", "Z"),
      );
      expect(s.datetime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    });
  });

  it("keeps empty steps, without count or buckets (proto3)", () => {
    const r = ask(
      window(T0 - 2 * HOUR, T0, {
        query: "session.id:nothing-like-this",
        histogramInterval: "30m",
        histogramGroupByFields: ["resource.technology"],
      }),
    );
    expect(r.numHits).toBeUndefined();
    expect(r.aggregations.logsOverTime).toEqual([
      { datetime: "2026-11-04T10:00:00Z" },
      { datetime: "2026-11-04T10:30:00Z" },
      { datetime: "2026-11-04T11:00:00Z" },
      { datetime: "2026-11-04T11:30:00Z" },
    ]);
    expect(Object.keys(r.aggregations)).toEqual(["logsOverTime"]);
  });

  it("aligns steps to epoch multiples of the interval, daily ones at UTC midnight", () => {
    const r = ask(
      window(T0 - 3 * DAY + 5 * HOUR, T0, { histogramInterval: "1d" }),
      T0,
    );
    expect(r.aggregations.logsOverTime?.map((s) => s.datetime)).toEqual([
      "2026-11-01T00:00:00Z",
      "2026-11-02T00:00:00Z",
      "2026-11-03T00:00:00Z",
      "2026-11-04T00:00:00Z",
    ]);
  });

  it("nests buckets in the order of histogramGroupByFields and adds single-valued levels up exactly", () => {
    const fields = ["resource.technology", "user.type", "session.type"];
    const base = window(T0 - 4 * HOUR, T0, {
      histogramInterval: "1h",
      // Control-plane events have no resource: keep them out so that every level adds up.
      query: "resource.technology:*",
      mode: "logs_over_time_only",
    });
    const r = ask({ ...base, histogramGroupByFields: fields });
    const technologies = new Set<string>();
    for (const step of r.aggregations.logsOverTime ?? []) {
      expect(sum(step.buckets)).toBe(step.count ?? 0);
      for (const tech of step.buckets ?? []) {
        technologies.add(tech.key);
        expect(["human", "machine"]).toEqual(
          expect.arrayContaining((tech.buckets ?? []).map((b) => b.key)),
        );
        expect(sum(tech.buckets)).toBe(tech.count);
        for (const userType of tech.buckets ?? []) {
          expect(sum(userType.buckets)).toBe(userType.count);
          for (const family of userType.buckets ?? []) {
            expect(family.buckets).toBeUndefined();
          }
        }
      }
    }
    expect(technologies.has("postgres")).toBe(true);

    // Another order, other nesting; the same totals per (technology, user type).
    const swapped = ask({
      ...base,
      histogramGroupByFields: ["user.type", "resource.technology"],
    });
    const pairs = (
      steps: typeof r.aggregations.logsOverTime,
      swap: boolean,
    ): Map<string, number> => {
      const out = new Map<string, number>();
      for (const step of steps ?? []) {
        for (const a of step.buckets ?? []) {
          for (const b of a.buckets ?? []) {
            const key = swap ? `${b.key}|${a.key}` : `${a.key}|${b.key}`;
            out.set(key, (out.get(key) ?? 0) + b.count);
          }
        }
      }
      return out;
    };
    const first = (swapped.aggregations.logsOverTime ?? []).find(
      (s) => s.buckets,
    )?.buckets;
    expect(first?.map((b) => b.key).sort()).toEqual(["human", "machine"]);
    expect(pairs(swapped.aggregations.logsOverTime, true)).toEqual(
      pairs(r.aggregations.logsOverTime, false),
    );

    // A bucket's count is the number of events a query on its path finds.
    const narrowed = ask({
      ...base,
      query: "resource.technology:postgres AND user.type:human",
    });
    expect(hits(narrowed)).toBe(
      pairs(r.aggregations.logsOverTime, false).get("postgres|human"),
    );
  });

  it("sorts buckets by count, then key", () => {
    const r = ask(
      window(T0 - 6 * HOUR, T0, {
        histogramGroupByFields: ["resource.name", "policy.name"],
      }),
    );
    const check = (buckets: readonly HistogramBucket[] | undefined): void => {
      const list = buckets ?? [];
      for (let i = 1; i < list.length; i++) {
        const a = list[i - 1];
        const b = list[i];
        if (a === undefined || b === undefined) continue;
        expect(
          a.count > b.count || (a.count === b.count && a.key < b.key),
        ).toBe(true);
      }
      for (const b of list) check(b.buckets);
    };
    for (const step of r.aggregations.logsOverTime ?? []) check(step.buckets);
  });

  it("counts an event in every value of a multi-valued field, and nowhere when it lacks the field", () => {
    const body = window(T0 - 6 * HOUR, T0, {
      histogramInterval: "6h",
      histogramGroupByFields: ["policy.name"],
    });
    const r = ask(body);
    const step = r.aggregations.logsOverTime?.[0];
    const buckets = step?.buckets ?? [];
    expect(buckets.length).toBeGreaterThan(3);
    const noPolicy = hits(ask({ ...body, query: "NOT policy.name:*" }));
    const withPolicy = hits(ask({ ...body, query: "policy.name:*" }));
    expect(noPolicy + withPolicy).toBe(step?.count);
    // Events triggering several policies count once per policy: more than the events.
    expect(sum(buckets)).toBeGreaterThan(withPolicy);
    for (const b of buckets) {
      expect(hits(ask({ ...body, query: `policy.name:${b.key}` }))).toBe(
        b.count,
      );
    }
  });

  it("returns sorted top-N members, omits empty ones, and adds a member the spec lacks", () => {
    const small = createListLogAggregationsHandler({ topN: 5 });
    const r = small(
      window(T0 - DAY, T0, { mode: "field_aggregations_only" }),
      ctx(),
    );
    expect(r.aggregations.logsOverTime).toBeUndefined();
    for (const [member, list] of Object.entries(r.aggregations) as [
      string,
      TopValue[],
    ][]) {
      expect(list.length, member).toBeGreaterThan(0);
      expect(list.length, member).toBeLessThanOrEqual(5);
      for (let i = 1; i < list.length; i++) {
        const a = list[i - 1];
        const b = list[i];
        if (a === undefined || b === undefined) continue;
        expect(
          a.count > b.count || (a.count === b.count && a.key < b.key),
          member,
        ).toBe(true);
      }
    }
    expect(Object.keys(r.aggregations)).toEqual(
      expect.arrayContaining(SPEC_MEMBERS),
    );
    expect(r.aggregations.llmToolCallCounts?.length).toBeGreaterThan(0);
    // Top values agree with a filtered count.
    const tech = r.aggregations.resourceTechnologies?.[0];
    const filtered = small(
      window(T0 - DAY, T0, { query: `resource.technology:${tech?.key ?? ""}` }),
      ctx(),
    );
    expect(hits(filtered)).toBe(tech?.count);

    // Only control-plane events: session and query members disappear.
    const cp = small(
      window(T0 - DAY, T0, {
        query: "control_plane.command_name:* OR workflow.id:*",
        mode: "field_aggregations_only",
      }),
      ctx(),
    );
    expect(hits(cp)).toBeGreaterThan(0);
    const members = Object.keys(cp.aggregations);
    expect(members).toContain("controlPlaneMethods");
    expect(members).toContain("workflowNames");
    expect(members).not.toContain("sessionIds");
    expect(members).not.toContain("queryFingerprints");
  });

  it("honours mode", () => {
    const body = window(T0 - 2 * HOUR, T0);
    const both = ask(body);
    const fieldsOnly = ask({ ...body, mode: "field_aggregations_only" });
    const timeOnly = ask({ ...body, mode: "logs_over_time_only" });
    expect(both.aggregations.logsOverTime).toBeDefined();
    expect(both.aggregations.sessionIds).toBeDefined();
    expect(fieldsOnly.aggregations.logsOverTime).toBeUndefined();
    expect(fieldsOnly.aggregations.sessionIds).toEqual(
      both.aggregations.sessionIds,
    );
    expect(Object.keys(timeOnly.aggregations)).toEqual(["logsOverTime"]);
    expect(timeOnly.aggregations.logsOverTime).toEqual(
      both.aggregations.logsOverTime,
    );
    for (const r of [fieldsOnly, timeOnly])
      expect(r.numHits).toBe(both.numHits);
    expect(ask({ ...body, mode: "" })).toEqual(both);
  });

  it("rejects bad requests with invalid_argument", () => {
    const ok = window(T0 - HOUR, T0);
    expect(invalid({ endTimestamp: secs(T0) }).message).toMatch(
      /startTimestamp is required/,
    );
    expect(invalid({ ...ok, endTimestamp: "" }).message).toMatch(
      /endTimestamp is required/,
    );
    expect(invalid({ ...ok, startTimestamp: "yesterday" }).message).toMatch(
      /startTimestamp/,
    );
    expect(invalid(window(T0, T0)).message).toMatch(/before endTimestamp/);
    expect(invalid(window(T0, T0 - HOUR)).message).toMatch(
      /before endTimestamp/,
    );
    for (const interval of ["1w", "5 m", "0s", "-1h", "1.5h", "m", "PT5M"]) {
      expect(invalid({ ...ok, histogramInterval: interval }).message).toMatch(
        /histogramInterval/,
      );
    }
    expect(invalid({ ...ok, histogramInterval: 30 }).message).toMatch(
      /histogramInterval/,
    );
    expect(
      invalid(window(T0 - 30 * DAY, T0, { histogramInterval: "1s" })).message,
    ).toMatch(/more than 100000/);
    const four = [
      "resource.technology",
      "user.type",
      "session.type",
      "policy.name",
    ];
    expect(invalid({ ...ok, histogramGroupByFields: four }).message).toMatch(
      /at most 3/,
    );
    const unknown = invalid({
      ...ok,
      histogramGroupByFields: ["user.type", "resourceTechnologies"],
    });
    expect(unknown.message).toMatch(/unknown field "resourceTechnologies"/);
    expect(unknown.message).toMatch(/\[1\]/);
    expect(unknown.message).toMatch(/did you mean "resource.technology"/);
    expect(
      invalid({ ...ok, histogramGroupByFields: ["no.such_field"] }).message,
    ).toMatch(/unknown field "no.such_field"/);
    expect(
      invalid({ ...ok, histogramGroupByFields: "user.type" }).message,
    ).toMatch(/array/);
    expect(invalid({ ...ok, mode: "both" }).message).toMatch(/mode/);
    const q = invalid({ ...ok, query: "user.type:human AND (" });
    expect(q.message).toMatch(/^query: query syntax error at character 22/);
    expect(invalid({ ...ok, query: 42 }).message).toMatch(
      /query: expected a string/,
    );
  });

  it("accepts the proto field names too, as proto3 JSON parsers do", () => {
    const body = window(T0 - HOUR, T0, {
      histogramInterval: "5m",
      histogramGroupByFields: ["user.type"],
    });
    const snake = {
      start_timestamp: body.startTimestamp,
      end_timestamp: body.endTimestamp,
      histogram_interval: "5m",
      histogram_group_by_fields: ["user.type"],
    };
    expect(ask(snake)).toEqual(ask(body));
    expect(
      invalid({ ...body, start_timestamp: body.startTimestamp }).message,
    ).toMatch(/set twice/);
  });

  it("accepts RFC 3339 timestamps like Unix seconds", () => {
    const a = ask(window(T0 - HOUR, T0));
    const b = ask({
      startTimestamp: new Date(T0 - HOUR).toISOString(),
      endTimestamp: "2026-11-04T13:00:00+01:00",
    });
    expect(b).toEqual(a);
  });

  it("lets a window grow while the clock passes it (late data), never shrink", () => {
    const start = T0 - HOUR;
    const end = T0 + HOUR;
    const body = window(start, end, { histogramInterval: "10m" });
    let previous: ListLogAggregationsResponse | undefined;
    const totals: number[] = [];
    for (
      let now = T0 - 30 * 60_000;
      now <= end + 3 * HOUR;
      now += 20 * 60_000
    ) {
      const r = ask(body, now);
      totals.push(hits(r));
      const steps = r.aggregations.logsOverTime ?? [];
      expect(sum(steps)).toBe(hits(r));
      // Steps after now are not there yet.
      expect(steps.length).toBe(
        Math.ceil((Math.min(end, now) - start) / 600_000),
      );
      previous?.aggregations.logsOverTime?.forEach((s, i) => {
        expect(steps[i]?.datetime).toBe(s.datetime);
        expect(steps[i]?.count ?? 0).toBeGreaterThanOrEqual(s.count ?? 0);
      });
      previous = r;
    }
    for (let i = 1; i < totals.length; i++) {
      expect(totals[i]).toBeGreaterThanOrEqual(totals[i - 1] ?? 0);
    }
    // Once the clock has passed the end, the window is final.
    const closed = Math.ceil((end - (T0 - 30 * 60_000)) / (20 * 60_000));
    expect(new Set(totals.slice(closed)).size).toBe(1);
    expect(totals[closed]).toBeGreaterThan(totals[0] ?? 0);
  });

  it("makes an open session produce events as the clock advances", () => {
    const s = generator
      .sessionsStartingIn(T0 - 6 * HOUR, T0)
      .find(
        (x) => x.durationMs > 2 * HOUR && x.startMs + x.durationMs > T0 + HOUR,
      );
    expect(s).toBeDefined();
    if (s === undefined) return;
    const body = window(s.startMs, s.startMs + s.durationMs + 1000, {
      query: `session.id:${s.id}`,
      histogramInterval: "1d",
    });
    const seen = [
      T0,
      T0 + HOUR / 2,
      T0 + HOUR,
      s.startMs + s.durationMs + 1,
    ].map((now) => hits(ask(body, now)));
    for (let i = 1; i < seen.length; i++)
      expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1] ?? 0);
    expect(seen[seen.length - 1]).toBeGreaterThan(seen[0] ?? 0);
  });

  it("is deterministic: same seed, same bytes; another seed, other data", () => {
    const body = window(T0 - 3 * HOUR, T0, {
      histogramInterval: "15m",
      histogramGroupByFields: ["user.email", "policy.type"],
    });
    const once = JSON.stringify(ask(body));
    expect(JSON.stringify(ask(body))).toBe(once);
    // A fresh generator and handler, and a cache that has seen other windows first.
    const fresh = createListLogAggregationsHandler();
    const twin = createSessionGenerator({
      seed: SEED,
      sessionsPerDay: 2000,
      historyStartMs: T0 - 10 * DAY,
    });
    fresh(window(T0 - 2 * DAY, T0 - DAY), {
      nowMs: T0,
      generator: twin,
      seed: SEED,
    });
    expect(
      JSON.stringify(fresh(body, { nowMs: T0, generator: twin, seed: SEED })),
    ).toBe(once);
    const other = createSessionGenerator({
      seed: SEED + 1,
      sessionsPerDay: 2000,
      historyStartMs: T0 - 10 * DAY,
    });
    expect(
      JSON.stringify(
        fresh(body, { nowMs: T0, generator: other, seed: SEED + 1 }),
      ),
    ).not.toBe(once);
  });

  it("returns nothing before the history starts, and nothing after now", () => {
    const before = ask(
      window(T0 - 20 * DAY, T0 - 15 * DAY, { histogramInterval: "1d" }),
    );
    expect(before.numHits).toBeUndefined();
    // Daily steps from the midnight before the start: 20 days ago to 16 days ago.
    expect(before.aggregations.logsOverTime).toHaveLength(6);
    const future = ask(window(T0 + HOUR, T0 + 2 * HOUR));
    expect(future).toEqual({ aggregations: {} });
  });
});

describe("ListLogAggregations at the default volume", () => {
  it("aggregates a day of 10 000 sessions, and a second call generates no event again", () => {
    const day = createSessionGenerator({
      seed: 3,
      historyStartMs: T0 - 5 * DAY,
    });
    const h = createListLogAggregationsHandler();
    const body = window(T0 - DAY, T0, {
      histogramInterval: "5m",
      histogramGroupByFields: ["resource.technology", "user.type"],
    });
    const c = { nowMs: T0, generator: day, seed: 3 };
    expect(hits(h(body, c))).toBeGreaterThan(50_000);
    // What keeps a repeated call cheap: the store's default cache holds the whole day, so a
    // second pass over it visits the very batches the first one generated.
    const store = new LogEventStore(day, { seed: 3 });
    const first = new Set<EventBatch>();
    store.forEachInWindow(T0 - DAY, T0, (b) => first.add(b));
    const again: EventBatch[] = [];
    store.forEachInWindow(T0 - DAY, T0, (b) => again.push(b));
    expect(again).toHaveLength(first.size);
    expect(again.filter((b) => !first.has(b))).toEqual([]);
  });
});
