import { describe, expect, expectTypeOf, it } from "vitest";
import {
  KNOWN_AGGREGATION_MEMBERS,
  listLogAggregationsRequestSchema,
  listLogAggregationsResponseSchema,
  logsOverTimeDatetimeMs,
  sessionSchema,
  topValueMembers,
  type LogBucket,
} from "../../../src/api/schemas/index.js";

describe("session schema", () => {
  const base = { id: "sess-1", startTime: "2026-11-02T10:04:05.123456Z" };

  it("reads the brand-named user member by its shape", () => {
    const s = sessionSchema.parse({
      ...base,
      user: {
        type: "human",
        formal: {
          user: { id: "u1", email: "a@example.com", groups: ["dba"] },
          endUser: { id: "e1", name: "Eve" },
        },
      },
    });
    expect(s.user.identity).toMatchObject({
      id: "u1",
      email: "a@example.com",
      groups: ["dba"],
      externalIds: [],
    });
    expect(s.user.endUser).toMatchObject({ id: "e1", name: "Eve", email: "" });
    expect(s.user).toHaveProperty("formal.user.id", "u1");
  });

  it("still reads the spec's spelling `service`", () => {
    const s = sessionSchema.parse({
      ...base,
      user: { service: { user: { id: "u2" } } },
    });
    expect(s.user.identity?.id).toBe("u2");
    expect(s.user.endUser).toBeUndefined();
  });

  it("fails without an id", () => {
    const r = sessionSchema.safeParse({ startTime: base.startTime });
    expect(r.success).toBe(false);
    if (!r.success)
      expect(r.error.issues[0]?.message).toBe("session has no id");
  });
});

describe("ListLogAggregations", () => {
  const body = {
    numHits: "1234567",
    aggregations: {
      logsOverTime: [
        {
          datetime: "1793613600000",
          count: 7,
          buckets: [
            {
              key: "postgres",
              count: 5,
              buckets: [
                {
                  key: "alice@example.com",
                  count: 4,
                  buckets: [{ key: 200, count: 4 }],
                },
                { key: "bob@example.com", buckets: [] },
              ],
            },
          ],
        },
        { datetime: "2026-11-02T10:05:00Z" },
      ],
      userEmails: [
        { key: "alice@example.com", count: 4 },
        { key: "bob@example.com" },
      ],
      sessionRegions: [{ key: "eu-west-1", count: 2, extra: "kept" }],
      resourceTypes: [],
      brokenMember: { key: "x" },
    },
  };

  it("parses three nesting levels, numHits as a string and datetime as epoch milliseconds", () => {
    const r = listLogAggregationsResponseSchema.parse(body);
    expect(r.numHits).toBe(1234567n);
    const first = r.aggregations.logsOverTime?.[0];
    expect(first?.datetime).toBe("1793613600000");
    expect(logsOverTimeDatetimeMs(first?.datetime ?? "")).toBe(1793613600000);
    const level1 = first?.buckets[0];
    const level2 = level1?.buckets[1];
    const level3 = level1?.buckets[0]?.buckets[0];
    expect(level1).toMatchObject({ key: "postgres", count: 5n });
    expect(level2).toEqual({ key: "bob@example.com", count: 0n, buckets: [] });
    expect(level3).toEqual({ key: "200", count: 4n, buckets: [] });
    expectTypeOf(level3).toEqualTypeOf<LogBucket | undefined>();

    const second = r.aggregations.logsOverTime?.[1];
    expect(second).toEqual({
      datetime: "2026-11-02T10:05:00Z",
      count: 0n,
      buckets: [],
    });
    expect(logsOverTimeDatetimeMs(second?.datetime ?? "")).toBe(
      Date.parse("2026-11-02T10:05:00Z"),
    );
  });

  it("returns known and unknown key/count members and reports the rest", () => {
    const r = listLogAggregationsResponseSchema.parse(body);
    const { members, rejected } = topValueMembers(r.aggregations);
    expect(members.map((m) => m.member)).toEqual([
      "userEmails",
      "sessionRegions",
      "resourceTypes",
    ]);
    expect(members.find((m) => m.member === "sessionRegions")?.values).toEqual([
      { key: "eu-west-1", count: 2n, extra: "kept" },
    ]);
    expect(members.find((m) => m.member === "userEmails")?.values[1]).toEqual({
      key: "bob@example.com",
      count: 0n,
    });
    expect(members.find((m) => m.member === "resourceTypes")?.values).toEqual(
      [],
    );
    expect(rejected).toHaveLength(1);
    expect(rejected[0]?.member).toBe("brokenMember");
    expect(rejected[0]?.value).toEqual({ key: "x" });
    expect(rejected[0]?.error).toContain("expected array");
  });

  it("defaults an empty response and accepts numeric datetime and numHits", () => {
    expect(listLogAggregationsResponseSchema.parse({})).toEqual({
      aggregations: {},
      numHits: 0n,
    });
    const r = listLogAggregationsResponseSchema.parse({
      numHits: 3,
      aggregations: { logsOverTime: [{ datetime: 1793613600000, count: 3 }] },
    });
    expect(r.aggregations.logsOverTime?.[0]?.datetime).toBe("1793613600000");
  });

  it("rejects a datetime that is neither RFC 3339 nor epoch milliseconds", () => {
    const r = listLogAggregationsResponseSchema.safeParse({
      aggregations: { logsOverTime: [{ datetime: "soon" }] },
    });
    expect(r.success).toBe(false);
    expect(logsOverTimeDatetimeMs("soon")).toBeNaN();
  });

  it("lists the spec's members in order", () => {
    expect(KNOWN_AGGREGATION_MEMBERS[0]).toBe("sessionTypes");
    expect(KNOWN_AGGREGATION_MEMBERS.at(-1)).toBe("llmStopReasons");
    expect(KNOWN_AGGREGATION_MEMBERS).toHaveLength(67);
    expect(new Set(KNOWN_AGGREGATION_MEMBERS).size).toBe(67);
  });

  it("checks a request: required timestamps, at most 3 group-by fields, known modes", () => {
    const ok = {
      startTimestamp: "1793613600",
      endTimestamp: "1793617200",
      histogramGroupByFields: ["a", "b", "c"],
    };
    expect(listLogAggregationsRequestSchema.safeParse(ok).success).toBe(true);
    expect(
      listLogAggregationsRequestSchema.safeParse({
        ...ok,
        histogramGroupByFields: ["a", "b", "c", "d"],
      }).success,
    ).toBe(false);
    expect(
      listLogAggregationsRequestSchema.safeParse({ ...ok, startTimestamp: "" })
        .success,
    ).toBe(false);
    expect(
      listLogAggregationsRequestSchema.safeParse({ ...ok, mode: "everything" })
        .success,
    ).toBe(false);
    expect(
      listLogAggregationsRequestSchema.safeParse({
        ...ok,
        mode: "logs_over_time_only",
      }).success,
    ).toBe(true);
  });
});
