// The scan of a record's text (scanSession) never accepts what parseSession rejects, and what it
// returns is what parseSession reads: on the simulator's catalogue, on its records broken at a
// random member, and on their text broken at a random character.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  scanSession,
  scanSessionAt,
  type SessionScan,
} from "../../../src/api/schemas/session-scan.js";
import {
  ArrayMemberSplitter,
  type SplitElement,
} from "../../../src/api/json-stream.js";
import { parseSession } from "../../../src/api/schemas/session.js";
import { timestampMs } from "../../../src/api/schemas/common.js";

/** The scan of a record's text, as its UTF-8 bytes. */
const scanText = (text: string): SessionScan => scanSession(Buffer.from(text));
import {
  brokenSessionRecords,
  sessionCatalogue,
} from "../../helpers/session-shapes.js";

const catalogue = sessionCatalogue();

/** The scan agrees with JSON.parse + parseSession on `text`; returns the scan. */
function agree(text: string): SessionScan {
  const scan = scanSession(Buffer.from(text));
  if (scan === undefined) return scan;
  expect("ambiguous" in scan, text).toBe(false);
  if ("ambiguous" in scan) return scan;
  let value: unknown;
  expect(() => {
    value = JSON.parse(text) as unknown;
  }, text).not.toThrow();
  const parsed = parseSession(value);
  expect(parsed.success, text).toBe(true);
  if (!parsed.success) return scan;
  const s = parsed.data;
  expect(scan, text).toEqual({
    id: s.id,
    startMs: timestampMs(s.startTime),
    endMs: s.endTime === undefined ? undefined : timestampMs(s.endTime),
    brandMember: s.user.brandMember,
  });
  return scan;
}

describe("scanSession", () => {
  it("accepts every record of the catalogue, compact or indented, and reads it as parseSession does", () => {
    expect(catalogue.length).toBeGreaterThan(600);
    for (const record of catalogue)
      for (const text of [
        JSON.stringify(record),
        JSON.stringify(record, null, 2),
      ])
        expect(agree(text)).toBeDefined();
  });

  it("never accepts what parseSession rejects, on 3000 records broken at a random member", () => {
    const broken = brokenSessionRecords(catalogue);
    let accepted = 0;
    fc.assert(
      fc.property(broken, (record) => {
        if (agree(JSON.stringify(record)) !== undefined) accepted++;
      }),
      { numRuns: 3000, seed: 20261123 },
    );
    // Most breakages hit a member the row does not read, or break it in a way the scan sees.
    expect(accepted).toBeGreaterThan(300);
  });

  it("never accepts text that is not JSON, on 5000 records broken at a random character", () => {
    const texts = catalogue.map((r) => JSON.stringify(r));
    const noise = fc.constantFrom(
      ...'{}[]:,"\\ \n\t\u0000\u001fe+-.0123456789tnfalsu'.split(""),
      "true",
      "null",
      "\\u00",
      '"id":"x",',
      "1e400",
    );
    const mutated = fc
      .record({
        i: fc.integer({ min: 0, max: texts.length - 1 }),
        at: fc.nat(),
        cut: fc.integer({ min: 0, max: 3 }),
        insert: fc.option(noise, { nil: "" }),
      })
      .map(({ i, at, cut, insert }) => {
        const t = texts[i] as string;
        const p = at % t.length;
        return t.slice(0, p) + insert + t.slice(p + cut);
      });
    fc.assert(
      fc.property(mutated, (text) => {
        const scan = scanSession(Buffer.from(text));
        if (scan !== undefined && !("ambiguous" in scan)) agree(text);
      }),
      { numRuns: 5000, seed: 7 },
    );
  });

  it("calls a record ambiguous when it names a member the row reads twice", () => {
    const r = catalogue.find(
      (c) => (c.user as Record<string, unknown> | undefined)?.formal,
    ) as Record<string, unknown>;
    const text = JSON.stringify(r);
    expect(scanText(text.replace("{", '{"id":"other",'))).toEqual({
      ambiguous: "id",
    });
    const user = JSON.stringify(r.user);
    const twice = text.replace(user, user.replace("{", '{"formal":{},'));
    expect(scanText(twice)).toEqual({ ambiguous: "user.formal" });
    // A member the row does not read may repeat.
    expect(scanText(text.replace("{", '{"extra":1,"extra":2,'))).toMatchObject({
      id: r.id,
    });
  });

  it("leaves escapes in the values it returns, and nulls, to parseSession", () => {
    const r = catalogue[0] as Record<string, unknown>;
    const text = JSON.stringify(r);
    const escaped = text.replace(`"id":"${String(r.id)}"`, '"id":"a\\u0062c"');
    expect(scanText(escaped)).toBeUndefined();
    expect(parseSession(JSON.parse(escaped)).success).toBe(true);
    const nullEnd = text.replace("{", '{"parentSessionId":null,');
    expect(scanText(nullEnd)).toBeUndefined();
    expect(parseSession(JSON.parse(nullEnd)).success).toBe(false);
  });

  it("reads dates from 1000 to 2999 as Date.parse does, leap days and century years included", () => {
    const r = catalogue[0] as Record<string, unknown>;
    const expectRead = (t: number) => {
      const startTime = new Date(t).toISOString();
      const scan = scanText(
        JSON.stringify({ ...r, startTime, endTime: undefined, duration: "" }),
      );
      if (scan === undefined || "ambiguous" in scan || scan.startMs !== t)
        expect(scan, startTime).toMatchObject({ startMs: t });
    };
    // The days around the end of February and of the year, in leap, common and century years.
    for (const year of [
      1000, 1600, 1700, 1900, 1999, 2000, 2023, 2024, 2100, 2400,
    ])
      for (const [month, day] of [
        [1, 28],
        [1, 29],
        [2, 1],
        [11, 31],
        [0, 1],
      ] as const) {
        const t = Date.UTC(year, month, day, 23, 59, 59, 999);
        if (new Date(t).getUTCMonth() === month) expectRead(t);
      }
    // And a sweep at a step that lands on every weekday and time of day in turn.
    let checked = 0;
    for (
      let t = Date.UTC(1000, 0, 1, 0, 0, 0, 1);
      t < Date.UTC(3000, 0, 1);
      t += 5 * 86_400_000 + 3_723_001
    ) {
      expectRead(t);
      checked++;
    }
    expect(checked).toBeGreaterThan(140_000);
  });

  it("reads times at every precision, offset and case as Date.parse does, and leaves impossible ones to the value checks", () => {
    const r = catalogue[0] as Record<string, unknown>;
    const withTimes = (startTime: string, duration?: string) =>
      JSON.stringify({
        ...r,
        startTime,
        endTime: undefined,
        duration,
        sessionStatus: "active",
      });
    for (const t of [
      "2026-11-16T10:00:00Z",
      "2026-11-16T10:00:00.1Z",
      "2026-11-16T10:00:00.12Z",
      "2026-11-16T10:00:00.123Z",
      "2026-11-16T10:00:00.1239Z",
      "2026-11-16T10:00:00.123456789Z",
      "2026-11-16t10:00:00.5z",
      "2026-11-16T11:30:00.999+01:30",
      "2026-11-16T00:10:00-23:59",
      "2024-02-29T23:59:59.999999Z",
      "1900-01-01T00:00:00Z",
    ]) {
      const scan = agree(withTimes(t));
      expect(scan, t).toMatchObject({ startMs: Date.parse(t) });
    }
    // Days and times no calendar has (Date.parse would move them), years before 1000, offsets
    // beyond a day: parseSession and sessionValueProblem decide and name them.
    for (const t of [
      "2026-02-29T10:00:00Z",
      "2026-04-31T10:00:00Z",
      "2026-11-16T24:00:00Z",
      "2026-11-16T10:60:00Z",
      "2026-11-16T10:00:60Z",
      "2026-13-01T10:00:00Z",
      "0999-11-16T10:00:00Z",
      "2026-11-16T10:00:00+24:00",
      "2026-11-16T10:00:00.Z",
      "2026-11-16T10:00:00.1234567890Z",
      "2026-11-16 10:00:00Z",
      "2026-11-16T10:00:00",
    ])
      expect(scanText(withTimes(t)), t).toBeUndefined();
    for (const d of ["0s", "1799.877s", "9999999999.123456789s", ""])
      expect(agree(withTimes("2026-11-16T10:00:00Z", d)), d).toBeDefined();
    for (const d of ["-1s", "10000000000s", " 5s", "5.s", "5", "1.1234567890s"])
      expect(scanText(withTimes("2026-11-16T10:00:00Z", d)), d).toBeUndefined();
  });
});

describe("scanSessionAt, reading a page's records as it splits them", () => {
  /** What the sessions source makes of an element: its bytes and their scan. */
  const asRecord = (e: SplitElement<NonNullable<SessionScan>>) =>
    Buffer.isBuffer(e)
      ? { text: e.toString("utf8"), scan: scanSession(e), read: false }
      : "value" in e
        ? { text: e.bytes.toString("utf8"), scan: e.value, read: true }
        : { text: e.problem, scan: undefined, read: false };

  const split = (
    page: Buffer,
    cuts: number[],
    reader: boolean,
  ): ReturnType<typeof asRecord>[] => {
    const splitter = new ArrayMemberSplitter<NonNullable<SessionScan>>(
      "sessions",
      Number.MAX_SAFE_INTEGER,
      reader ? scanSessionAt : undefined,
    );
    const out: ReturnType<typeof asRecord>[] = [];
    let at = 0;
    for (const cut of [...cuts.map((c) => c % page.length)].sort(
      (a, b) => a - b,
    )) {
      for (const e of splitter.push(page.subarray(at, cut)))
        out.push(asRecord(e));
      at = cut;
    }
    for (const e of splitter.push(page.subarray(at))) out.push(asRecord(e));
    splitter.end();
    return out;
  };

  it("hands over the same records with the same scans as splitting first and scanning after, whatever the chunks", () => {
    const texts = catalogue.map((r) => JSON.stringify(r));
    const record = fc.oneof(
      fc.constantFrom(...texts),
      fc
        .constantFrom(...texts)
        .map((t) => JSON.stringify(JSON.parse(t), null, 1)),
      brokenSessionRecords(catalogue).map((r) => JSON.stringify(r) ?? "null"),
      fc
        .record({ t: fc.constantFrom(...texts), at: fc.nat(), cut: fc.nat(3) })
        .map(({ t, at, cut }) => {
          const p = at % t.length;
          // Broken text stays one element: no brackets, braces or commas are added.
          return t.slice(0, p) + t.slice(p + cut);
        }),
    );
    let read = 0;
    let total = 0;
    fc.assert(
      fc.property(
        fc.array(record, { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (records, cuts) => {
          const page = Buffer.from(
            `{"sessions":[${records.join(" ,\n")}],"listMetadata":{"count":"1"}}`,
          );
          let plain: ReturnType<typeof asRecord>[];
          try {
            plain = split(page, cuts, false);
          } catch {
            // A record broken into something that is not one JSON value breaks the page: the
            // splitter refuses it the same way with a reader (checked below).
            expect(() => split(page, cuts, true)).toThrow();
            return;
          }
          const fused = split(page, cuts, true);
          expect(fused.map((r) => [r.text, r.scan])).toEqual(
            plain.map((r) => [r.text, r.scan]),
          );
          read += fused.filter((r) => r.read).length;
          total += fused.length;
        },
      ),
      { numRuns: 1500, seed: 20261124 },
    );
    // Most records are read in the splitting pass; those cut by a chunk's edge are not.
    expect(read).toBeGreaterThan(total / 2);
  });
});
