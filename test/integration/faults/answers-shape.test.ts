// Answers that are HTTP 200 and valid JSON but not the operation's answer: each is a bad answer
// (BAD_RESPONSE), retried, then the run fails naming the operation, the window and what is
// wrong; no checkpoint moves and nothing of the window is lost. The empty pages proto3 writes
// are accepted, and members beside the expected ones stay in the raw records. Cursor loops of
// any length and pages without end stop the run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import { ApiError } from "../../../src/api/errors.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { readSessions } from "../../helpers/expected.js";
import { NOON, testSimulator } from "../../helpers/simulator.js";
import { testConfig } from "../../helpers/warehouse.js";
import { ok, scriptedServer } from "../../helpers/servers.js";
import {
  answer,
  cursorOf,
  FROM,
  HOUR,
  oneDatabaseForFile,
  syncAgainst,
  type SyncOutcome,
} from "../../helpers/sync-fixture.js";

// Every sync of the file in one database, emptied before each.
oneDatabaseForFile();

let sim: Simulator;
let sessions: Record<string, unknown>[];
const idOf = (s: Record<string, unknown>) => s.id as string;

beforeAll(async () => {
  sim = await testSimulator();
  sessions = [...(await readSessions(sim, NOON - 2 * HOUR, NOON)).values()];
  expect(sessions.length).toBeGreaterThanOrEqual(12);
});
afterAll(async () => {
  await sim.close();
});

function expectBadAnswer(o: SyncOutcome, what: RegExp): void {
  expect(o.error).toBeInstanceOf(ApiError);
  expect(o.error?.code).toBe("BAD_RESPONSE");
  const message = o.error?.message ?? "";
  expect(message).toContain("ListSessionsV2");
  expect(message).toContain(
    `window [${new Date(FROM).toISOString()}, ${new Date(NOON).toISOString()})`,
  );
  expect(message).toMatch(what);
  expect(message).toMatch(/gave up after 3 tries/);
  expect(message).not.toContain("sim-test-key");
  // The first try and two retries, and nothing checkpointed.
  expect(o.checkpoints).toBe(0);
}

describe("ListSessionsV2 answers of the wrong shape", () => {
  const page = () => sessions.slice(0, 3);
  const cases: [string, () => unknown, RegExp][] = [
    [
      "sessions under another member",
      () => ({ items: page(), listMetadata: { count: 3 } }),
      /no "sessions" list but "items"/,
    ],
    [
      "an object with neither sessions nor listMetadata",
      () => ({ result: "ok" }),
      /no "sessions" list but "result"/,
    ],
    [
      "sessions that is not a list",
      () => ({ sessions: { first: page()[0] } }),
      /"sessions" is an object, not a list/,
    ],
    [
      "a nextCursor on a page without sessions",
      () => ({ listMetadata: { nextCursor: "more" } }),
      /a nextCursor on a page with no sessions/,
    ],
    [
      "a negative count",
      () => ({ sessions: page(), listMetadata: { count: "-3" } }),
      /listMetadata.count.*cannot be negative/,
    ],
    [
      "a JSON array instead of an object",
      () => [page()],
      /not a ListSessionsV2 answer.*not a JSON object/,
    ],
  ];
  for (const [name, body, what] of cases) {
    it(`${name}: BAD_RESPONSE after the retries, no checkpoint`, async () => {
      const o = await syncAgainst((_n, _req, res) => ok(res, body()));
      expectBadAnswer(o, what);
      expect(o.requests).toHaveLength(3);
    });
  }

  it("a wrong page after good ones: the sessions of the good pages are kept, the window not checkpointed, and a retry that answers right completes it", async () => {
    const all = sessions.slice(0, 6);
    let wrongOnce = true;
    const o = await syncAgainst((_n, req, res) => {
      const cursor = cursorOf(req);
      if (cursor === "") {
        ok(res, {
          sessions: all.slice(0, 3),
          listMetadata: { nextCursor: "p2", count: 3 },
        });
      } else if (wrongOnce) {
        wrongOnce = false;
        // The second page's sessions under another member, with no cursor: read as an empty
        // last page, the window would be checkpointed without them.
        ok(res, { data: all.slice(3) });
      } else {
        ok(res, { sessions: all.slice(3), listMetadata: { count: 3 } });
      }
    });
    expect(o.error).toBeUndefined();
    expect([...o.rows.keys()].sort()).toEqual(all.map(idOf).sort());
    expect(o.checkpoints).toBeGreaterThan(0);
    expect(o.requests.map(cursorOf)).toEqual(["", "p2", "p2"]);
  });

  it("a page whose sessions went missing on every try: the run fails on that page, the checkpoint does not move", async () => {
    const all = sessions.slice(0, 6);
    const o = await syncAgainst((_n, req, res) => {
      if (cursorOf(req) === "")
        ok(res, {
          sessions: all.slice(0, 3),
          listMetadata: { nextCursor: "p2", count: 3 },
        });
      else ok(res, { listMetadata: { nextCursor: "p3" } });
    });
    expectBadAnswer(o, /a nextCursor on a page with no sessions/);
    expect(o.requests.map(cursorOf)).toEqual(["", "p2", "p2", "p2"]);
  });
});

describe("ListSessionsV2 answers that are right", () => {
  for (const [name, body] of [
    ["an empty object", "{}"],
    ["a listMetadata alone", '{"listMetadata":{}}'],
    ["a listMetadata with an empty cursor", '{"listMetadata":{"count":0}}'],
  ] as const) {
    it(`${name} is an empty page`, async () => {
      const o = await syncAgainst((_n, _req, res) => answer(res, body));
      expect(o.error).toBeUndefined();
      expect(o.rows.size).toBe(0);
      expect(o.checkpoints).toBeGreaterThan(0);
      expect(o.requests).toHaveLength(1);
    });
  }

  it("keeps unknown members beside the expected ones, and in the raw records", async () => {
    const page = sessions
      .slice(0, 2)
      .map((s) => ({ ...s, regionOfRecord: "eu-1" }));
    const o = await syncAgainst((_n, _req, res) =>
      ok(res, {
        sessions: page,
        listMetadata: { count: "2", totalSize: 99 },
        nextPageHint: { later: true },
      }),
    );
    expect(o.error).toBeUndefined();
    for (const s of page)
      expect(JSON.parse(o.rows.get(idOf(s)) ?? "{}")).toEqual(s);
  });
});

describe("cursor loops and pages without end", () => {
  it("a cursor that leads back to earlier pages after 4 pages, each time under a new cursor: PAGES_STALLED, no checkpoint", async () => {
    const N = 4;
    const pages = Array.from({ length: N }, (_, i) =>
      sessions.slice(i * 3, i * 3 + 3),
    );
    const o = await syncAgainst((n, _req, res) =>
      // Stops after 200 pages, so that an exporter that does not notice ends too.
      ok(res, {
        sessions: pages[n % N],
        listMetadata: {
          count: 3,
          ...(n < 200 ? { nextCursor: `c${n + 1}` } : {}),
        },
      }),
    );
    expect(o.error?.code).toBe("PAGES_STALLED");
    expect(o.error?.message).toMatch(/ListSessionsV2 is looping for \[/);
    expect(o.error?.message).toContain(new Date(FROM).toISOString());
    // Four distinct pages, then three pages of nothing new.
    expect(o.requests).toHaveLength(N + 3);
    expect(o.checkpoints).toBe(0);
  });

  it("pages that overlap the previous one (the duplicate fault) are not a loop", async () => {
    const o = await syncAgainst((n, _req, res) =>
      ok(res, {
        // Page n repeats the last two sessions of page n-1 and brings one new.
        sessions: sessions.slice(n, n + 3),
        listMetadata: { count: 3, ...(n < 8 ? { nextCursor: `c${n}` } : {}) },
      }),
    );
    expect(o.error).toBeUndefined();
    expect(o.rows.size).toBe(11);
  });

  it("more pages than SESSIONHOUSE_MAX_PAGES_PER_WINDOW: TOO_MANY_PAGES, no checkpoint", async () => {
    const o = await syncAgainst(
      (n, _req, res) =>
        ok(res, {
          sessions: [sessions[n % sessions.length]],
          listMetadata: { count: 1, nextCursor: `c${n + 1}` },
        }),
      { env: { SESSIONHOUSE_MAX_PAGES_PER_WINDOW: "5" } },
    );
    expect(o.error?.code).toBe("TOO_MANY_PAGES");
    expect(o.error?.message).toMatch(/after 5 pages/);
    expect(o.error?.hint).toMatch(/SESSIONHOUSE_MAX_PAGES_PER_WINDOW/);
    expect(o.requests).toHaveLength(5);
    expect(o.checkpoints).toBe(0);
  });
});

describe("GetSession and ListLogAggregations answers", () => {
  async function api(body: () => unknown): Promise<{
    api: ControlPlaneApi;
    close: () => Promise<void>;
    requests: () => number;
  }> {
    const server = await scriptedServer((_n, _req, res) => ok(res, body()));
    const base = await testConfig({
      SESSIONHOUSE_API_URL: server.url,
      SESSIONHOUSE_MAX_RPS: "1000",
    });
    const a = ControlPlaneApi.fromConfig({
      ...base,
      api: { ...base.api, maxRetries: 2, retryBaseMs: 1, retryMaxMs: 5 },
    });
    return {
      api: a,
      requests: () => server.requests.length,
      close: async () => {
        await a.close();
        await server.close();
      },
    };
  }
  const window = { startMs: FROM, endMs: NOON };

  it("a GetSession answer without a session is a bad answer, not a session gone", async () => {
    for (const body of [{}, { session: null }, { item: sessions[0] }]) {
      const a = await api(() => body);
      try {
        const err = await a.api.getSession("s-1").catch((e: unknown) => e);
        expect(err).toMatchObject({ code: "BAD_RESPONSE" });
        expect((err as Error).message).toMatch(/GetSession.*session s-1/);
        expect(a.requests()).toBe(3);
      } finally {
        await a.close();
      }
    }
  });

  for (const [name, body, what] of [
    ["{}", {}, /no "aggregations" member \(an empty object\)/],
    ["numHits alone", { numHits: "12" }, /no "aggregations" member/],
    [
      "aggregations as a list",
      { aggregations: [] },
      /"aggregations" is a list/,
    ],
    [
      "a negative numHits",
      { aggregations: {}, numHits: "-1" },
      /"numHits": a count cannot be negative/,
    ],
    [
      "a fractional numHits",
      { aggregations: {}, numHits: 2.5 },
      /"numHits": expected a whole count/,
    ],
  ] as const) {
    it(`ListLogAggregations ${name}: BAD_RESPONSE naming the window`, async () => {
      const a = await api(() => body);
      try {
        const err = await a.api
          .listLogAggregations(window)
          .catch((e: unknown) => e);
        expect(err).toMatchObject({ code: "BAD_RESPONSE" });
        const message = (err as Error).message;
        expect(message).toContain("ListLogAggregations");
        expect(message).toContain(new Date(FROM).toISOString());
        expect(message).toMatch(what);
        expect(a.requests()).toBe(3);
      } finally {
        await a.close();
      }
    });
  }

  it("ListLogAggregations: an empty window and counts beyond 2^53 are read exactly", async () => {
    const a = await api(() => ({ aggregations: {} }));
    try {
      expect(await a.api.listLogAggregations(window)).toEqual({
        aggregations: {},
      });
    } finally {
      await a.close();
    }
    const server = await scriptedServer((_n, _req, res) =>
      answer(
        res,
        '{"numHits":9007199254740993,"aggregations":{"userEmails":[{"key":"a","count":12345678901234567}],"note":"12345678901234567890"}}',
      ),
    );
    const base = await testConfig({ SESSIONHOUSE_API_URL: server.url });
    const b = ControlPlaneApi.fromConfig(base);
    try {
      const got = (await b.listLogAggregations(window)) as {
        numHits: unknown;
        aggregations: { userEmails: { count: unknown }[]; note: unknown };
      };
      expect(got.numHits).toBe("9007199254740993");
      expect(got.aggregations.userEmails[0]?.count).toBe("12345678901234567");
      expect(got.aggregations.note).toBe("12345678901234567890");
    } finally {
      await b.close();
      await server.close();
    }
  });
});
