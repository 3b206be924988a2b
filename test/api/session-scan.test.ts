// The scan of a record's text (scanSession) never accepts what parseSession rejects, and what it
// returns is what parseSession reads: on the simulator's catalogue, on its records broken at a
// random member, and on their text broken at a random character.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  scanSession,
  type SessionScan,
} from "../../src/api/schemas/session-scan.js";
import { parseSession } from "../../src/api/schemas/session.js";
import {
  brokenSessionRecords,
  sessionCatalogue,
} from "../helpers/session-shapes.js";

const catalogue = sessionCatalogue();

/** The scan agrees with JSON.parse + parseSession on `text`; returns the scan. */
function agree(text: string): SessionScan {
  const scan = scanSession(text);
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
    startTime: s.startTime,
    endTime: s.endTime,
    duration: s.duration,
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
        const scan = scanSession(text);
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
    expect(scanSession(text.replace("{", '{"id":"other",'))).toEqual({
      ambiguous: "id",
    });
    const user = JSON.stringify(r.user);
    const twice = text.replace(user, user.replace("{", '{"formal":{},'));
    expect(scanSession(twice)).toEqual({ ambiguous: "formal" });
    // A member the row does not read may repeat.
    expect(
      scanSession(text.replace("{", '{"extra":1,"extra":2,')),
    ).toMatchObject({ id: r.id });
  });

  it("leaves escapes in the values it returns, and nulls, to parseSession", () => {
    const r = catalogue[0] as Record<string, unknown>;
    const text = JSON.stringify(r);
    const escaped = text.replace(`"id":"${String(r.id)}"`, '"id":"a\\u0062c"');
    expect(scanSession(escaped)).toBeUndefined();
    expect(parseSession(JSON.parse(escaped)).success).toBe(true);
    const nullEnd = text.replace("{", '{"parentSessionId":null,');
    expect(scanSession(nullEnd)).toBeUndefined();
    expect(parseSession(JSON.parse(nullEnd)).success).toBe(false);
  });
});
