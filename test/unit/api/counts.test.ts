// Counts are integers whatever their JSON type: numbers or digit strings, range-checked, exact
// beyond 2^53; negative or fractional counts are refused.
import { describe, expect, it } from "vitest";
import { parseExactJson } from "../../../src/api/exact-json.js";
import { ArrayMemberSplitter } from "../../../src/api/json-stream.js";
import { count32, count64 } from "../../../src/api/schemas/common.js";
import { listLogAggregationsResponseSchema } from "../../../src/api/schemas/logs.js";

describe("count32 and count64", () => {
  it("read numbers and digit strings alike; proto3's omitted zero is 0", () => {
    expect(count32.parse(7)).toBe(7);
    expect(count32.parse("7")).toBe(7);
    expect(count32.parse(undefined)).toBe(0);
    expect(count64.parse("12345")).toBe(12345n);
    expect(count64.parse(12345)).toBe(12345n);
    expect(count64.parse(undefined)).toBe(0n);
  });

  it("keep 64-bit counts beyond 2^53 exact", () => {
    expect(count64.parse("9007199254740993")).toBe(9007199254740993n);
    expect(count64.parse("9223372036854775807")).toBe(2n ** 63n - 1n);
  });

  it("refuse negative, fractional, out-of-range and non-numeric counts", () => {
    for (const bad of [-1, "-1", 1.5, "1.5", "1e3", "", "abc", null, true])
      expect(count64.safeParse(bad).success, String(bad)).toBe(false);
    expect(count64.safeParse("9223372036854775808").success).toBe(false);
    expect(count32.safeParse(2 ** 31).success).toBe(false);
    expect(count32.safeParse("2147483647").success).toBe(true);
    // A JSON number past 2^53 no longer holds what was sent.
    expect(count64.safeParse(2 ** 60).success).toBe(false);
  });

  it("numHits and bucket counts as strings or numbers give the same exact answer", () => {
    const body =
      '{"numHits":"18446744073","aggregations":{"logsOverTime":[{"datetime":"2026-11-02T10:00:00Z","count":"3","buckets":[{"key":"pg","count":12345678901234567}]}],"userEmails":[{"key":"a","count":"2"}]}}';
    const r = listLogAggregationsResponseSchema.parse(parseExactJson(body));
    expect(r.numHits).toBe(18446744073n);
    expect(r.aggregations.logsOverTime?.[0]?.count).toBe(3n);
    expect(r.aggregations.logsOverTime?.[0]?.buckets[0]?.count).toBe(
      12345678901234567n,
    );
    expect(
      listLogAggregationsResponseSchema.safeParse({
        aggregations: {},
        numHits: -4,
      }).success,
    ).toBe(false);
  });
});

describe("parseExactJson", () => {
  it("quotes integer literals longer than 15 digits, outside strings only", () => {
    expect(
      parseExactJson(
        '{"a":12345678901234567890,"b":-12345678901234567,"c":"99999999999999999\\"","d":[1,2.5e300,1234567890123456.5],"e":123456789012345}',
      ),
    ).toEqual({
      a: "12345678901234567890",
      b: "-12345678901234567",
      c: '99999999999999999"',
      d: [1, 2.5e300, 1234567890123456.5],
      e: 123456789012345,
    });
  });

  it("still refuses what is not JSON", () => {
    expect(() => parseExactJson('{"a":1')).toThrow();
  });
});

describe("ArrayMemberSplitter limits", () => {
  it("hands an element past the limit over as its first bytes, and keeps scanning after it", () => {
    const big = JSON.stringify({ id: "big", s: `x\\"${"y".repeat(5000)}\\\\` });
    const body = `{"sessions":[{"id":"a"},${big},{"id":"b"}],"listMetadata":{}}`;
    const s = new ArrayMemberSplitter("sessions", 1024);
    const bytes = Buffer.from(body);
    const out = [];
    for (let at = 0; at < bytes.length; at += 100)
      out.push(...s.push(bytes.subarray(at, at + 100)));
    s.end();
    expect(out[0]).toEqual(Buffer.from('{"id":"a"}'));
    expect(out[2]).toEqual(Buffer.from('{"id":"b"}'));
    const broken = out[1];
    expect(broken).toBeDefined();
    expect(Buffer.isBuffer(broken)).toBe(false);
    if (broken !== undefined && "problem" in broken) {
      expect(broken.problem).toBe("too-large");
      expect(broken.size).toBe(Buffer.byteLength(big));
      expect(broken.bytes.toString()).toBe(big);
    }
  });

  it("hands an element that is not UTF-8 over as broken, with its exact bytes; a real U+FFFD is valid", () => {
    const bad = Buffer.from([
      0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d,
    ]);
    const body = Buffer.concat([
      Buffer.from('{"sessions":['),
      bad,
      Buffer.from(',{"a":"\uFFFD"}]}'),
    ]);
    const s = new ArrayMemberSplitter("sessions");
    const out = s.push(body);
    s.end();
    expect(out[0]).toEqual({ problem: "invalid-utf8", bytes: bad, size: 9 });
    expect(out[1]).toEqual(Buffer.from('{"a":"\uFFFD"}'));
  });
});
