// The wire faults over real HTTP: answers that arrive intact but lie (wrong shapes, `{}`, counts
// as strings, cursor loops), records that cannot be stored as they are (invalid UTF-8, huge,
// impossible dates), sessions that vanish or show up late, and poisoned aggregation windows.
// Each is served as documented, the same for the same fault seed, counted, and reported exactly
// by faultedRecords / faultedSessions / brokenWindows.

import { afterAll, describe, expect, it } from "vitest";
import {
  CLASSIC_FAULT_KINDS,
  FaultInjector,
  INVALID_UTF8,
  PADDING_MEMBER,
  SimClock,
  WRONG_LIST_MEMBER,
  parseFaultSpec,
  startSimulator,
  type FaultOptions,
  type Simulator,
} from "../../../src/simulator/index.js";
import {
  API_KEY,
  HOUR,
  T0,
  call,
  nextCursorOf,
  pageAll,
  secs,
  sessionsOf,
  type CallResult,
  type WireRecord,
} from "../../helpers/simulator-call.js";

const WINDOW = { startTimestamp: secs(T0 - 4 * HOUR), endTimestamp: secs(T0) };

const OPTIONS = {
  apiKey: API_KEY,
  seed: 1,
  historyDays: 2,
  sessionsPerDay: 4000,
};

/**
 * The fault-free twin, one for the file at T0: it is only read, and it keeps the sessions and
 * logs it generated (a second's work a window) for every case that compares with it.
 */
let twin: Simulator | undefined;
afterAll(async () => {
  await twin?.close();
});

/** A simulator with `faults` (fresh for each case: its counts are the case's) and the twin. */
async function withSims(
  faults: FaultOptions,
  fn: (sim: Simulator, clean: Simulator) => Promise<void>,
  clock: SimClock = SimClock.fixed(T0),
): Promise<void> {
  twin ??= await startSimulator({ ...OPTIONS, clock: SimClock.fixed(T0) });
  const sim = await startSimulator({ ...OPTIONS, clock, faults });
  try {
    await fn(sim, twin);
  } finally {
    await sim.close();
  }
}

/** The raw bytes of a ListSessionsV2 answer. */
async function rawPage(sim: Simulator, body: unknown): Promise<Buffer> {
  const res = await fetch(`${sim.url}/core.v1.SessionsService/ListSessionsV2`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Api-Key": API_KEY },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

const AGG = {
  ...WINDOW,
  histogramInterval: "1h",
  histogramGroupByFields: ["resource.technology"],
};

/** Every number under a `count` member, and numHits, as numbers (strings read as proto3). */
function normalizeCounts(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalizeCounts);
  if (typeof v !== "object" || v === null) return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>).map(([k, x]) => [
      k,
      k === "count" || k === "numHits" ? Number(x) : normalizeCounts(x),
    ]),
  );
}

function countsOf(v: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(v)) for (const x of v) countsOf(x, out);
  else if (typeof v === "object" && v !== null)
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === "count") out.push(x);
      else countsOf(x, out);
    }
  return out;
}

describe("parseFaultSpec: wire faults", () => {
  it("takes kebab-case and camelCase names and the wire-fault options", () => {
    expect(
      parseFaultSpec(
        "wrong-shape=0.02,emptyAggregation=0.01,string-counts=0.1,cursor-cycle=0.01,bad-utf8=0.001,huge-record=0.001,vanished-session=0.01,late-session=0.01,bad-dates=0.002,bad-window=0.05,seed=3,hugeRecordBytes=1048576,late-ms=600000",
      ),
    ).toEqual({
      rates: {
        wrongShape: 0.02,
        emptyAggregation: 0.01,
        stringCounts: 0.1,
        cursorCycle: 0.01,
        badUtf8: 0.001,
        hugeRecord: 0.001,
        vanishedSession: 0.01,
        lateSession: 0.01,
        badDates: 0.002,
        badWindow: 0.05,
      },
      seed: 3,
      hugeRecordBytes: 1048576,
      lateMs: 600000,
    });
  });

  it("all= sets the nine classic faults only", () => {
    const spec = parseFaultSpec("all=0.03,bad-utf8=0.5");
    expect(Object.keys(spec.rates ?? {}).sort()).toEqual(
      [...CLASSIC_FAULT_KINDS, "badUtf8"].sort(),
    );
    expect(spec.rates?.badUtf8).toBe(0.5);
    expect(() => parseFaultSpec("wrong-shapes=0.1")).toThrow(
      /unknown fault "wrong-shapes".*wrong-shape/,
    );
    expect(() => parseFaultSpec("late-ms=-1")).toThrow(
      /late-ms=-1 must be ≥ 0/,
    );
  });
});

describe("wire faults over HTTP", () => {
  it("wrongShape: 200 and JSON, but not the operation's answer; counted", async () => {
    await withSims({ rates: { wrongShape: 1 }, seed: 4 }, async (sim) => {
      const shapes = new Set<string>();
      for (let i = 0; i < 12; i++) {
        const r = await call(sim, "ListSessionsV2", { limit: 50, ...WINDOW });
        expect(r.status).toBe(200);
        expect(r.json).toBeDefined();
        expect(r.json?.sessions).toBeUndefined();
        if (r.json?.[WRONG_LIST_MEMBER] !== undefined) {
          expect(r.json[WRONG_LIST_MEMBER]).toHaveLength(50);
          expect(r.json.listMetadata).toMatchObject({ count: 50 });
          shapes.add("renamed list");
        } else {
          expect(Object.keys(r.json ?? {})).toEqual(["nextCursor"]);
          shapes.add("cursor only");
        }
      }
      expect(shapes).toEqual(new Set(["renamed list", "cursor only"]));
      const id = sim.generator.sessionsStartingIn(T0 - HOUR, T0)[0]?.id;
      const got = await call(sim, "GetSession", { sessionId: id });
      expect([got.status, got.json]).toEqual([200, {}]);
      const agg = await call(sim, "ListLogAggregations", AGG);
      expect(agg.status).toBe(200);
      expect(agg.json?.aggregations).toBeUndefined();
      expect(agg.json?.aggregation).toBeDefined();
      expect(sim.stats().faults.wrongShape).toBe(14);
    });
  });

  it("wrongShape is drawn per request: a retry can succeed, the same way for the same seed", async () => {
    const statuses = async (): Promise<string[]> => {
      const out: string[] = [];
      await withSims({ rates: { wrongShape: 0.4 }, seed: 8 }, async (sim) => {
        for (let i = 0; i < 30; i++) {
          const r = await call(sim, "ListSessionsV2", { limit: 5, ...WINDOW });
          out.push(r.json?.sessions === undefined ? "wrong" : "page");
        }
        expect(sim.stats().faults.wrongShape).toBe(
          out.filter((x) => x === "wrong").length,
        );
      });
      return out;
    };
    const first = await statuses();
    expect(new Set(first)).toEqual(new Set(["wrong", "page"]));
    expect(await statuses()).toEqual(first);
  });

  it("emptyAggregation: ListLogAggregations answers {}", async () => {
    await withSims({ rates: { emptyAggregation: 1 } }, async (sim) => {
      const r = await call(sim, "ListLogAggregations", AGG);
      expect([r.status, r.text]).toEqual([200, "{}"]);
      // Only aggregation answers are emptied.
      const page = await call(sim, "ListSessionsV2", { limit: 5, ...WINDOW });
      expect(sessionsOf(page)).toHaveLength(5);
      expect(sim.stats().faults).toEqual({ emptyAggregation: 1 });
    });
  });

  it("stringCounts: every count a JSON string, the same numbers as a fault-free twin", async () => {
    await withSims({ rates: { stringCounts: 1 } }, async (sim, clean) => {
      for (const body of [
        AGG,
        { ...AGG, histogramGroupByFields: ["user.email", "resource.name"] },
      ]) {
        const r = await call(sim, "ListLogAggregations", body);
        const want = await call(clean, "ListLogAggregations", body);
        const counts = countsOf(r.json);
        expect(counts.length).toBeGreaterThan(10);
        expect(counts.every((c) => typeof c === "string")).toBe(true);
        expect(countsOf(want.json).every((c) => typeof c === "number")).toBe(
          true,
        );
        expect(normalizeCounts(r.json)).toEqual(normalizeCounts(want.json));
      }
      expect(sim.stats().faults.stringCounts).toBe(2);
    });
  });

  it("cursorCycle: a nextCursor points back to a page already served; a retry of the window succeeds", async () => {
    await withSims(
      { rates: { cursorCycle: 0.3 }, seed: 2 },
      async (sim, clean) => {
        const cleanPages = (
          await pageAll(clean, { limit: 200, ...WINDOW })
        ).map((p) => sessionsOf(p).map((s) => s.id as string));
        expect(cleanPages.length).toBeGreaterThan(5);
        const known = new Map(cleanPages.map((ids, i) => [ids.join(","), i]));
        const seen = new Set<string>();
        let cursor: string | undefined;
        let loops = 0;
        let previous = -1;
        for (let pages = 0; pages < 200; pages++) {
          const r = await call(sim, "ListSessionsV2", {
            limit: 200,
            ...WINDOW,
            ...(cursor ? { cursor } : {}),
          });
          const ids = sessionsOf(r).map((s) => s.id as string);
          // Every page is one of the window's real pages: only the cursor lies.
          const index = known.get(ids.join(","));
          expect(index).toBeDefined();
          // A cursor that leads to this page again or to an earlier one is a loop.
          if ((index ?? 0) <= previous) loops++;
          previous = index ?? 0;
          for (const id of ids) seen.add(id);
          cursor = nextCursorOf(r);
          if (!cursor) break;
        }
        expect(loops).toBeGreaterThan(1);
        expect(seen.size).toBe(cleanPages.flat().length);
        expect(sim.stats().faults.cursorCycle).toBe(loops);
      },
    );
  });

  it("record faults: faultedRecords lists exactly the records served broken, with their bytes", async () => {
    const faults: FaultOptions = {
      rates: {
        badRecord: 0.01,
        badUtf8: 0.01,
        hugeRecord: 0.005,
        badDates: 0.02,
      },
      seed: 5,
      hugeRecordBytes: 20_000,
    };
    await withSims(faults, async (sim, clean) => {
      const body = { limit: 100_000, ...WINDOW };
      const bytes = await rawPage(sim, body);
      // The same bytes again (compared as bytes: toEqual walks a megabyte element by element).
      expect((await rawPage(sim, body)).equals(bytes)).toBe(true);
      const served = JSON.parse(bytes.toString("utf8")) as {
        sessions: WireRecord[];
      };
      const want = sessionsOf(await call(clean, "ListSessionsV2", body));
      expect(served.sessions).toHaveLength(want.length);
      const differing = want
        .filter(
          (s, i) => JSON.stringify(served.sessions[i]) !== JSON.stringify(s),
        )
        .map((s) => s.id as string);

      const faulted = sim.faultedRecords();
      expect(faulted.map((f) => f.sessionId).sort()).toEqual(differing.sort());
      const injector = new FaultInjector(faults);
      for (const f of faulted) {
        expect(injector.recordFault(f.sessionId)).toBe(f.kind);
        expect(bytes.includes(f.bytes), f.sessionId).toBe(true);
      }
      const kinds = new Set(faulted.map((f) => f.kind));
      for (const k of ["badUtf8", "hugeRecord", "badDates"])
        expect(kinds.has(k as never), k).toBe(true);
      // The classic broken records are still reported by brokenRecords too.
      expect(
        sim
          .brokenRecords()
          .map((b) => b.raw)
          .sort(),
      ).toEqual(
        faulted
          .filter((f) =>
            ["missingId", "numericStartTime", "invalidStartTime"].includes(
              f.kind,
            ),
          )
          .map((f) => f.raw)
          .sort(),
      );
      const count = (k: string) => faulted.filter((f) => f.kind === k).length;
      expect(sim.stats().faults).toEqual({
        badRecord:
          2 * count("missingId") +
          2 * count("numericStartTime") +
          2 * count("invalidStartTime"),
        badUtf8: 2 * count("badUtf8"),
        hugeRecord: 2 * count("hugeRecord"),
        badDates: 2 * count("badDates"),
      });
    });
  });

  it("badUtf8: the record's bytes are not UTF-8, the rest of the record intact", async () => {
    await withSims(
      { rates: { badUtf8: 0.02 }, seed: 6 },
      async (sim, clean) => {
        const body = { limit: 100_000, ...WINDOW };
        const bytes = await rawPage(sim, body);
        expect(() =>
          new TextDecoder("utf-8", { fatal: true }).decode(bytes),
        ).toThrow();
        const want = new Map(
          sessionsOf(await call(clean, "ListSessionsV2", body)).map((s) => [
            s.id,
            s,
          ]),
        );
        const faulted = sim.faultedRecords();
        expect(faulted.length).toBeGreaterThan(5);
        for (const f of faulted) {
          expect(f.kind).toBe("badUtf8");
          expect(f.bytes.includes(INVALID_UTF8)).toBe(true);
          expect(() =>
            new TextDecoder("utf-8", { fatal: true }).decode(f.bytes),
          ).toThrow();
          // Valid again once the invalid bytes are taken out: only the resource name is damaged.
          const at = f.bytes.indexOf(INVALID_UTF8);
          const repaired = Buffer.concat([
            f.bytes.subarray(0, at),
            f.bytes.subarray(at + INVALID_UTF8.length),
          ]);
          expect(JSON.parse(repaired.toString("utf8"))).toEqual(
            want.get(f.sessionId),
          );
        }
      },
    );
  });

  it("hugeRecord: padded past hugeRecordBytes with an unknown member", async () => {
    await withSims(
      { rates: { hugeRecord: 0.01 }, seed: 6, hugeRecordBytes: 50_000 },
      async (sim, clean) => {
        const body = { limit: 100_000, ...WINDOW };
        await rawPage(sim, body);
        const want = new Map(
          sessionsOf(await call(clean, "ListSessionsV2", body)).map((s) => [
            s.id,
            s,
          ]),
        );
        const faulted = sim.faultedRecords();
        expect(faulted.length).toBeGreaterThan(2);
        for (const f of faulted) {
          expect(f.kind).toBe("hugeRecord");
          expect(f.bytes.length).toBe(50_001);
          const { [PADDING_MEMBER]: padding, ...rest } = JSON.parse(
            f.raw,
          ) as WireRecord;
          expect(padding).toMatch(/^x+$/);
          expect(rest).toEqual(want.get(f.sessionId));
        }
      },
    );
  });

  it("badDates: impossible calendar dates, years 1800 and 2400, negative durations", async () => {
    await withSims(
      { rates: { badDates: 0.05 }, seed: 6 },
      async (sim, clean) => {
        const body = { limit: 100_000, ...WINDOW };
        await rawPage(sim, body);
        const want = new Map(
          sessionsOf(await call(clean, "ListSessionsV2", body)).map((s) => [
            s.id,
            s,
          ]),
        );
        const faulted = sim.faultedRecords();
        expect(new Set(faulted.map((f) => f.variant))).toEqual(
          new Set([
            "impossibleDate",
            "year1800",
            "year2400",
            "negativeDuration",
          ]),
        );
        for (const f of faulted) {
          const got = JSON.parse(f.raw) as WireRecord;
          const orig = want.get(f.sessionId) as Record<
            string,
            string | undefined
          >;
          const start = String(orig.startTime);
          switch (f.variant) {
            case "impossibleDate":
              expect(got.startTime).toBe(
                `${start.slice(0, 4)}-02-30${start.slice(10)}`,
              );
              break;
            case "year1800":
              expect(got.startTime).toBe(`1800${start.slice(4)}`);
              break;
            case "year2400":
              if (orig.endTime === undefined)
                expect(got.startTime).toBe(`2400${start.slice(4)}`);
              else expect(got.endTime).toBe(`2400${orig.endTime.slice(4)}`);
              break;
            case "negativeDuration":
              expect(got.duration).toBe(`-${orig.duration ?? ""}`);
              break;
          }
        }
      },
    );
  });

  it("vanishedSession: GetSession of an open chosen session is not_found; faultedSessions lists them", async () => {
    // The last hour: every session of it is asked for one by one (a few hundred requests).
    const hour = { startTimestamp: secs(T0 - HOUR), endTimestamp: secs(T0) };
    await withSims(
      { rates: { vanishedSession: 0.3 }, seed: 3 },
      async (sim) => {
        const listed = (await pageAll(sim, { limit: 1000, ...hour })).flatMap(
          sessionsOf,
        );
        const notFound: string[] = [];
        for (const s of listed) {
          const r = await call(sim, "GetSession", { sessionId: s.id });
          if (r.status === 404) {
            expect(r.json?.code).toBe("not_found");
            expect(s.sessionStatus).not.toBe("completed");
            notFound.push(s.id as string);
          } else {
            expect(r.status).toBe(200);
            expect((r.json?.session as WireRecord).id).toBe(s.id);
          }
        }
        expect(notFound.length).toBeGreaterThan(3);
        const faulted = sim.faultedSessions(T0 - HOUR, T0);
        expect(faulted.every((f) => f.kind === "vanishedSession")).toBe(true);
        expect(faulted.map((f) => f.sessionId).sort()).toEqual(notFound.sort());
        expect(sim.stats().faults.vanishedSession).toBe(notFound.length);
        // Persistent: asked again, still gone.
        const again = await call(sim, "GetSession", { sessionId: notFound[0] });
        expect(again.status).toBe(404);
      },
    );
  });

  it("lateSession: listed only lateMs after its start; the pages show it then", async () => {
    const clock = SimClock.fixed(T0);
    await withSims(
      { rates: { lateSession: 0.2 }, seed: 3, lateMs: HOUR },
      async (sim, clean) => {
        const ids = async (s: Simulator) =>
          (await pageAll(s, { limit: 500, ...WINDOW }))
            .flatMap(sessionsOf)
            .map((x) => x.id as string);
        const all = await ids(clean);
        const early = await ids(sim);
        const missing = all.filter((id) => !early.includes(id));
        const faulted = sim.faultedSessions(T0 - 4 * HOUR, T0);
        const late = faulted.filter((f) => (f.listedFromMs ?? 0) > T0);
        expect(late.length).toBeGreaterThan(5);
        expect(faulted.every((f) => f.kind === "lateSession")).toBe(true);
        expect(late.map((f) => f.sessionId).sort()).toEqual(missing.sort());
        for (const f of late) {
          expect(f.startMs).toBeGreaterThan(T0 - HOUR);
          expect(f.listedFromMs).toBe(f.startMs + HOUR);
        }
        const lateOne = late[0]?.sessionId;
        expect(
          (await call(sim, "GetSession", { sessionId: lateOne })).status,
        ).toBe(404);
        expect(sim.stats().faults.lateSession).toBeGreaterThanOrEqual(
          late.length,
        );
        // An hour later every session of the window is listed.
        clock.set(T0 + HOUR);
        expect(await ids(sim)).toEqual(all);
        expect(
          (await call(sim, "GetSession", { sessionId: lateOne })).status,
        ).toBe(200);
      },
      clock,
    );
  });

  it("badWindow: a poisoned window answers broken every time; isBrokenWindow and brokenWindows tell which", async () => {
    await withSims(
      { rates: { badWindow: 0.4 }, seed: 11 },
      async (sim, clean) => {
        const groupBy = ["resource.technology"];
        let broken = 0;
        for (let h = 1; h <= 12; h++) {
          const body = {
            ...AGG,
            startTimestamp: secs(T0 - (h + 1) * HOUR),
            endTimestamp: secs(T0 - h * HOUR),
          };
          const answers: CallResult[] = [];
          for (let i = 0; i < 2; i++)
            answers.push(await call(sim, "ListLogAggregations", body));
          const want = await call(clean, "ListLogAggregations", body);
          expect(answers[1]?.text).toBe(answers[0]?.text);
          const poisoned = sim.isBrokenWindow("", groupBy, T0 - (h + 1) * HOUR);
          if (poisoned) {
            broken++;
            expect(answers[0]?.text).not.toBe(want.text);
          } else expect(answers[0]?.text).toBe(want.text);
        }
        expect(broken).toBeGreaterThan(1);
        expect(broken).toBeLessThan(12);
        const listed = sim.brokenWindows();
        expect(listed).toHaveLength(broken);
        for (const w of listed) {
          expect(w.query).toBe("");
          expect(w.groupBy).toEqual(groupBy);
          expect(sim.isBrokenWindow(w.query, w.groupBy, w.startMs)).toBe(true);
        }
        expect(sim.stats().faults.badWindow).toBe(2 * broken);
      },
    );
  });

  it("badWindow variants: no aggregations, a negative numHits, a fractional count", async () => {
    await withSims({ rates: { badWindow: 1 }, seed: 11 }, async (sim) => {
      const seen = new Set<string>();
      for (let h = 1; h <= 12; h++) {
        const r = await call(sim, "ListLogAggregations", {
          ...AGG,
          startTimestamp: secs(T0 - (h + 1) * HOUR),
          endTimestamp: secs(T0 - h * HOUR),
        });
        const json = r.json ?? {};
        if (json.aggregations === undefined) seen.add("missingAggregations");
        else if (json.numHits === "-5") seen.add("negativeNumHits");
        else {
          expect(countsOf(json).some((c) => !Number.isInteger(c))).toBe(true);
          seen.add("fractionalCount");
        }
      }
      expect([...seen].sort()).toEqual(
        sim
          .brokenWindows()
          .map((w) => w.variant)
          .filter((v, i, a) => a.indexOf(v) === i)
          .sort(),
      );
      expect(seen.size).toBe(3);
    });
  });

  it("is reproducible: the same requests meet the same wire faults", async () => {
    const spec = parseFaultSpec(
      "wrong-shape=0.2,empty-aggregation=0.2,string-counts=0.2,cursor-cycle=0.2,bad-utf8=0.01,bad-dates=0.01,seed=9",
    );
    const transcript = async (): Promise<string[]> => {
      const out: string[] = [];
      await withSims(spec, async (sim) => {
        for (let i = 0; i < 10; i++) {
          out.push(
            (await rawPage(sim, { limit: 100, ...WINDOW })).toString("base64"),
          );
          out.push((await call(sim, "ListLogAggregations", AGG)).text);
        }
        out.push(JSON.stringify(sim.stats().faults));
      });
      return out;
    };
    expect(await transcript()).toEqual(await transcript());
  });
});
