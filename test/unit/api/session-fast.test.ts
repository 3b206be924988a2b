import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  parseSession,
  sessionSchema,
  type Session,
} from "../../../src/api/schemas/session.js";
import { RowBlock } from "../../../src/warehouse/row-block.js";
import {
  RECORD_MEMBERS,
  SessionInputs,
} from "../../../src/warehouse/session-rows.js";
import { z } from "zod";
import { sessionRow } from "../../helpers/session-row.js";
import {
  brokenSessionRecords,
  DAY0,
  RICH_SESSION,
  sessionCatalogue,
} from "../../helpers/session-shapes.js";

/** The input row the sync writes for a session, its RowBinary columns read back. */
function inputRow(s: Session, raw: string, fetchedAtMs: number) {
  const block = new RowBlock();
  new SessionInputs(fetchedAtMs).push(block, raw, false, s.user.brandMember);
  const { body, tails } = block.take();
  const isNull = body[9] === 1;
  const brand = isNull
    ? null
    : body.toString("utf8", 11, 11 + (body[10] as number));
  return {
    fetchedMs: Number(body.readBigInt64LE(0)),
    held: body[8] === 1,
    brand,
    raw: body.toString("utf8", tails[0]),
  };
}

const base = RICH_SESSION;

// Records of every shape the fast path must either read exactly as zod does, or hand to zod.
const variants: unknown[] = [
  base,
  { id: "ses_min", startTime: "2026-11-02T10:04:05Z" },
  {
    ...base,
    user: { ...base.user, service: base.user.formal, formal: undefined },
  },
  { ...base, user: undefined },
  { ...base, endTime: undefined, duration: undefined, sessionStatus: "active" },
  { ...base, id: "" },
  { ...base, id: 7 },
  { ...base, startTime: 1762077845 },
  { ...base, startTime: "not-a-date" },
  { ...base, startTime: "2026-13-45T10:04:05Z" },
  { ...base, endTime: null },
  { ...base, duration: "ten minutes" },
  { ...base, network: null },
  { ...base, network: { clientIpAddress: 42 } },
  { ...base, sidecar: "sdc_1" },
  { ...base, user: { ...base.user, type: 1 } },
  { ...base, user: { ...base.user, native: { username: null } } },
  {
    ...base,
    user: { ...base.user, formal: { user: { id: "x", groups: "g1" } } },
  },
  {
    ...base,
    user: { ...base.user, formal: { user: { id: "x", groups: [1] } } },
  },
  { ...base, parentSessionId: null },
  null,
  [],
  "ses_1",
];

describe("parseSession (the fast path) agrees with the zod schema", () => {
  it.each(variants.map((v, i) => [i, v] as const))("variant %i", (_i, v) => {
    const fast = parseSession(v);
    const slow = sessionSchema.safeParse(v);
    expect(fast.success).toBe(slow.success);
    if (fast.success && slow.success) expect(fast.data).toEqual(slow.data);
  });

  it("names the brand member it found, and passes the record on verbatim", () => {
    const raw = JSON.stringify(base, null, 1);
    const parsed = parseSession(JSON.parse(raw));
    if (!parsed.success) throw new Error("expected a valid session");
    expect(parsed.data.user.brandMember).toBe("formal");
    expect(inputRow(parsed.data, raw, 1_800_000_000_000)).toEqual({
      fetchedMs: 1_800_000_000_000,
      held: false,
      brand: "formal",
      raw,
    });
    const service = parseSession(variants[2]);
    expect(service.success && service.data.user.brandMember).toBe("service");
    const none = parseSession(variants[3]);
    if (!none.success) throw new Error("expected a valid session");
    expect(none.data.user.brandMember).toBeUndefined();
    expect(inputRow(none.data, "{}", 1)).toEqual({
      fetchedMs: 1,
      held: false,
      brand: null,
      raw: "{}",
    });
  });
});

// The simulator's whole catalogue of session shapes (brand member under several names, native
// users, machine users, open and completed, omitted zero values, every timestamp precision),
// each then broken at a random place in a random way: the fast path reads every one exactly as
// the zod schema does, or rejects it as the schema does.
describe("parseSession agrees with the zod schema on every simulator shape, broken at random", () => {
  const catalogue = sessionCatalogue();
  const broken = brokenSessionRecords(catalogue);

  /**
   * Both accept or both reject; when both accept, the row written and the identities read are
   * the same. (The fast path fills defaults into the brand member in place, which the schema
   * keeps as it came: that copy is never read.)
   */
  function agree(record: unknown): void {
    // parseSession may complete the object it is given; each side reads its own copy.
    const fast = parseSession(structuredClone(record));
    const slow = sessionSchema.safeParse(structuredClone(record));
    expect(fast.success).toBe(slow.success);
    if (!fast.success || !slow.success) return;
    const read = (s: Session) => ({
      row: sessionRow(s, "", DAY0),
      identity: s.user.identity,
      endUser: s.user.endUser,
      brandMember: s.user.brandMember,
    });
    const [a, b] = [read(fast.data), read(slow.data)];
    // expect's deep comparison only to show a difference: it took most of this file's time.
    if (!isDeepStrictEqual(a, b)) expect(a).toEqual(b);
  }

  it("holds on the catalogue itself", () => {
    expect(catalogue.length).toBeGreaterThan(600);
    for (const record of catalogue) {
      expect(parseSession(structuredClone(record)).success).toBe(true);
      agree(record);
    }
  });

  it("holds on 3000 records broken at random", () => {
    fc.assert(
      fc.property(broken, (record) => {
        agree(record);
      }),
      { numRuns: 3000, seed: 20261123 },
    );
  });
});

// The members the row is built from (RECORD_MEMBERS, read from the session column list) and the
// members the schema declares: the fast path checks each as the schema does. A member added to
// the schema or read by a new column that the fast path's lists do not follow fails here.
describe("the members of a session record", () => {
  /** The schema of a member under the wrappers that leave its members as they are. */
  function unwrap(s: z.ZodType): z.ZodType {
    if (
      s instanceof z.ZodPrefault ||
      s instanceof z.ZodOptional ||
      s instanceof z.ZodDefault
    )
      return unwrap(s.def.innerType as z.ZodType);
    if (s instanceof z.ZodPipe) return unwrap(s.def.in as z.ZodType);
    return s;
  }

  /** The schema the session schema declares at `path`; undefined when it declares none. */
  function declaredAt(path: string): z.ZodType | undefined {
    let at: z.ZodType | undefined = sessionSchema;
    for (const key of path.split(".")) {
      const s: z.ZodType | undefined =
        at === undefined ? undefined : unwrap(at);
      at =
        s instanceof z.ZodObject
          ? (s.shape as Record<string, z.ZodType>)[key]
          : undefined;
    }
    return at;
  }

  /** A copy of `record` with `value` at `path` (objects on the way created). */
  function withMember(record: object, path: string, value: unknown): unknown {
    const copy = structuredClone(record) as Record<string, unknown>;
    const keys = path.split(".");
    let at = copy;
    for (const key of keys.slice(0, -1)) {
      const next = at[key];
      at = (
        typeof next === "object" && next !== null ? next : (at[key] = {})
      ) as Record<string, unknown>;
    }
    at[keys.at(-1) as string] = value;
    return copy;
  }

  const topLevel = Object.keys(sessionSchema.shape);
  const paths = [...new Set([...topLevel, ...RECORD_MEMBERS])];

  it("every member the row is built from is one the session schema declares", () => {
    expect(RECORD_MEMBERS).toContain("network.clientIpAddress");
    expect(RECORD_MEMBERS.filter((p) => declaredAt(p) === undefined)).toEqual(
      [],
    );
  });

  it.each(paths)(
    "%s: the fast path accepts and rejects what the schema does",
    (path) => {
      for (const value of [42, "x", "", {}, ["x"], null, undefined]) {
        const record = withMember(base, path, value);
        const fast = parseSession(structuredClone(record));
        const slow = sessionSchema.safeParse(structuredClone(record));
        expect([path, value, fast.success]).toEqual([
          path,
          value,
          slow.success,
        ]);
        if (fast.success && slow.success) expect(fast.data).toEqual(slow.data);
      }
    },
  );
});
