import { describe, expect, it } from "vitest";
import {
  ArrayMemberSplitter,
  JsonShapeError,
  type SplitElement,
} from "../../../src/api/json-stream.js";

function split(
  body: string,
  member: string,
  chunkSizes: number[],
): { items: string[]; others: Record<string, unknown> } {
  const s = new ArrayMemberSplitter(member);
  const bytes = Buffer.from(body, "utf8");
  const items: string[] = [];
  const text = (e: SplitElement): string => {
    if ("problem" in e) throw new Error(`broken element: ${e.problem}`);
    if (!Buffer.isBuffer(e)) throw new Error("no reader was given");
    return e.toString("utf8");
  };
  let at = 0;
  let i = 0;
  while (at < bytes.length) {
    const size = chunkSizes[i++ % chunkSizes.length] ?? 1;
    items.push(...s.push(bytes.subarray(at, at + size)).map(text));
    at += size;
  }
  s.end();
  return { items, others: s.others };
}

const tricky = [
  { id: "a", s: 'quote " and backslash \\ and \\" mixed', n: [1, { x: "]}" }] },
  { id: "b", unicode: "é漢字🙂", empty: {}, arr: [] },
  { id: "c", esc: "ends with backslash \\\\" },
];

describe("ArrayMemberSplitter", () => {
  const body = JSON.stringify({
    before: { n: 1 },
    sessions: tricky,
    listMetadata: { nextCursor: "abc", count: 3 },
  });

  it("cuts each element out as its exact text, whatever the chunking", () => {
    for (const sizes of [[1], [2, 3], [7], [64], [1_000_000]]) {
      const { items, others } = split(body, "sessions", sizes);
      expect(items).toEqual(tricky.map((t) => JSON.stringify(t)));
      expect(others).toEqual({
        before: { n: 1 },
        listMetadata: { nextCursor: "abc", count: 3 },
      });
    }
  });

  it("cuts elements out exactly when a chunk's edge falls anywhere in a run of backslashes", () => {
    const runs = [1, 2, 3, 4, 5].map((n) => ({
      id: `r${n}`,
      s: `${"\\".repeat(n)}"${"\\".repeat(n)}`,
      t: ["x\\", '"\\"', "]}"],
    }));
    const text = JSON.stringify({ sessions: runs, after: "\\" });
    const bytes = Buffer.from(text, "utf8");
    for (let cut = 1; cut < bytes.length; cut++)
      for (const second of [1, 5, bytes.length]) {
        const s = new ArrayMemberSplitter("sessions");
        const items: SplitElement[] = [
          ...s.push(bytes.subarray(0, cut)),
          ...s.push(bytes.subarray(cut, cut + second)),
        ];
        for (let at = cut + second; at < bytes.length; at += second)
          items.push(...s.push(bytes.subarray(at, at + second)));
        s.end();
        expect(items.map((e) => (e as Buffer).toString("utf8"))).toEqual(
          runs.map((r) => JSON.stringify(r)),
        );
        expect(s.others).toEqual({ after: "\\" });
      }
  });

  it("hands over an element within one chunk as a view of it, and copies only the element a chunk's edge cuts", () => {
    const body = Buffer.from(
      JSON.stringify({ sessions: [{ id: "a" }, { id: "b" }, { id: "c" }] }),
    );
    const cut = body.indexOf('"b"');
    // Buffers of their own (small ones from Buffer.from share a pool).
    const own = (bytes: Buffer) => {
      const b = Buffer.alloc(bytes.length);
      bytes.copy(b);
      return b;
    };
    const first = own(body.subarray(0, cut));
    const second = own(body.subarray(cut));
    const s = new ArrayMemberSplitter("sessions");
    const [a] = s.push(first) as Buffer[];
    const [b, c] = s.push(second) as Buffer[];
    s.end();
    expect([a, b, c].map((e) => e?.toString())).toEqual([
      '{"id":"a"}',
      '{"id":"b"}',
      '{"id":"c"}',
    ]);
    expect(a?.buffer).toBe(first.buffer);
    expect(c?.buffer).toBe(second.buffer);
    expect(b?.buffer).not.toBe(second.buffer);
  });

  it("keeps scalar elements and whitespace-formatted bodies", () => {
    const pretty = JSON.stringify(
      { sessions: [1, "two", null, true, { a: [1, 2] }], x: 5 },
      null,
      2,
    );
    const { items, others } = split(pretty, "sessions", [3]);
    expect(items.map((t) => JSON.parse(t) as unknown)).toEqual([
      1,
      "two",
      null,
      true,
      { a: [1, 2] },
    ]);
    expect(others).toEqual({ x: 5 });
  });

  it("reports a body that was cut off", () => {
    const s = new ArrayMemberSplitter("sessions");
    s.push(Buffer.from(body.slice(0, body.length - 10)));
    expect(() => s.end()).toThrow(JsonShapeError);
  });

  it("refuses a body that is not a JSON object (an HTML error page)", () => {
    const s = new ArrayMemberSplitter("sessions");
    expect(() => s.push(Buffer.from("<html>Bad Gateway</html>"))).toThrow(
      /not a JSON object/,
    );
  });

  it("refuses a closing brace or bracket where a value begins, as a body that is not JSON", () => {
    for (const bad of [
      '{"sessions":[1,}],"listMetadata":{}}',
      '{"sessions":[],"listMetadata":}',
      '{"sessions":[],"listMetadata":]}',
      // A record that lost a quote: the strings after it are read inside out.
      '{"sessions":[{"id":"a","connector:{"id":"c"}},{"id":"b","n":"x"}],"listMetadata":{}}',
    ]) {
      for (const size of [1, 7, bad.length]) {
        const s = new ArrayMemberSplitter("sessions");
        expect(() => {
          for (let i = 0; i < bad.length; i += size)
            s.push(Buffer.from(bad.slice(i, i + size)));
          s.end();
        }, bad).toThrow(JsonShapeError);
      }
    }
  });

  it("handles an absent or empty member", () => {
    expect(split("{}", "sessions", [1]).items).toEqual([]);
    expect(
      split('{"sessions":[],"listMetadata":{}}', "sessions", [2]).items,
    ).toEqual([]);
  });
});

describe("ArrayMemberSplitter with a reader: UTF-8 checked over a chunk", () => {
  /** A reader of flat objects: the element ends at its first closing brace. */
  const reader = (buf: Buffer, start: number) => {
    const close = buf.indexOf(0x7d, start);
    return close < 0 ? undefined : { end: close + 1, value: "read" };
  };
  const kinds = (chunks: Buffer[]) => {
    const s = new ArrayMemberSplitter<string>("xs", 1 << 20, reader);
    const out = chunks.flatMap((c) => s.push(c));
    s.end();
    return out.map((e) =>
      Buffer.isBuffer(e)
        ? `bytes ${e.toString("utf8")}`
        : "problem" in e
          ? e.problem
          : `${e.value} ${e.bytes.toString("utf8")}`,
    );
  };
  const body = Buffer.concat([
    Buffer.from('{"xs":[{"a":"é"},{"a":"'),
    Buffer.of(0xff, 0xfe),
    Buffer.from('"},{"a":"漢字"},{"a":"🙂"}],"n":1}'),
  ]);

  it("an element of invalid UTF-8 among valid ones is broken alone, whatever the chunking", () => {
    for (const size of [1, 2, 3, 5, 8, 13, body.length]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < body.length; at += size)
        chunks.push(body.subarray(at, at + size));
      const got = kinds(chunks);
      expect(got).toHaveLength(4);
      expect(got[1]).toBe("invalid-utf8");
      expect(
        [got[0], got[2], got[3]].map((k) => k?.replace(/^\w+ /, "")),
      ).toEqual(['{"a":"é"}', '{"a":"漢字"}', '{"a":"🙂"}']);
    }
  });

  it("elements after a character cut by the chunk's end are read, each exactly", () => {
    const valid = Buffer.from('{"xs":[{"a":"é"},{"b":"漢字"},{"c":"🙂"}]}');
    // The chunk ends inside 漢 (three bytes), the next one starts inside it.
    const cut = valid.indexOf(Buffer.from("漢")) + 1;
    const got = kinds([valid.subarray(0, cut), valid.subarray(cut)]);
    expect(got).toEqual([
      'read {"a":"é"}',
      expect.stringMatching(/\{"b":"漢字"\}$/),
      'read {"c":"🙂"}',
    ]);
  });
});
