import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  parseSession,
  sessionSchema,
  type Session,
} from "../../src/api/schemas/session.js";
import { LineBlock } from "../../src/warehouse/line-block.js";
import { pushSessionInput } from "../../src/warehouse/sessions.js";
import {
  createSessionGenerator,
  sessionToWire,
} from "../../src/simulator/index.js";
import { sessionRow } from "../helpers/session-row.js";

const DAY0 = Date.UTC(2026, 10, 4);

/** The input line the sync writes for a session, as text. */
function sessionLine(s: Session, raw: string, fetchedAtMs: number): string {
  const block = new LineBlock();
  pushSessionInput(block, raw, fetchedAtMs, false, s.user.brandMember);
  return block.take().body.toString("utf8");
}

const base = {
  id: "ses_1",
  startTime: "2026-11-02T10:04:05.123456Z",
  endTime: "2026-11-02T10:14:05Z",
  duration: "600.000s",
  sessionStatus: "completed",
  network: { clientIpAddress: "10.0.0.1" },
  sidecar: { id: "sdc_1", name: "eu-1", technology: "postgres" },
  user: {
    type: "human",
    username: "alice",
    formal: {
      user: {
        id: "usr_1",
        name: "Alice Ärger",
        email: "alice@acme.example",
        groups: ["g1"],
        externalIds: ["okta|1"],
      },
      endUser: { id: "usr_2", type: "human" },
    },
    native: { username: "analyst", extra: 1 },
  },
  resource: {
    type: "datastore",
    id: "res_1",
    name: "orders-prod-pg",
    technology: "postgres",
  },
  connector: { id: "con_1", name: 'quote " and \\ backslash' },
  parentSessionId: "ses_0",
  unknownMember: { kept: true },
};

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
    expect(sessionLine(parsed.data, raw, 1_800_000_000_000)).toBe(
      `[1800000000000,false,"formal",${raw}]`,
    );
    const service = parseSession(variants[2]);
    expect(service.success && service.data.user.brandMember).toBe("service");
    const none = parseSession(variants[3]);
    if (!none.success) throw new Error("expected a valid session");
    expect(none.data.user.brandMember).toBeUndefined();
    expect(sessionLine(none.data, "{}", 1)).toBe("[1,false,null,{}]");
  });
});

// The simulator's whole catalogue of session shapes (brand member under several names, native
// users, machine users, open and completed, omitted zero values, every timestamp precision),
// each then broken at a random place in a random way: the fast path reads every one exactly as
// the zod schema does, or rejects it as the schema does.
describe("parseSession agrees with the zod schema on every simulator shape, broken at random", () => {
  const catalogue: Record<string, unknown>[] = [];
  for (const [seed, brand] of [
    [1, "formal"],
    [2, "acme"],
    [3, "service"],
  ] as const) {
    const gen = createSessionGenerator({
      seed,
      historyStartMs: DAY0 - 2 * 86_400_000,
    });
    const sessions = gen.sessionsStartingIn(DAY0, DAY0 + 6 * 3_600_000);
    const nowMs = DAY0 + 7 * 3_600_000;
    for (const s of sessions.slice(0, 400))
      catalogue.push(
        JSON.parse(
          JSON.stringify(sessionToWire(s, gen, nowMs, brand)),
        ) as Record<string, unknown>,
      );
  }

  const junk = fc.oneof(
    fc.constant(null),
    fc.constant(undefined),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.string(),
    fc.constantFrom(
      "",
      "2026-02-30T10:00:00Z",
      "1800-01-01T00:00:00Z",
      "-5s",
      "12.5s",
    ),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.dictionary(fc.string({ maxLength: 4 }), fc.string(), { maxKeys: 2 }),
  );

  /** Every path to a member of the record, nested objects and arrays included. */
  function paths(
    v: unknown,
    prefix: (string | number)[] = [],
  ): (string | number)[][] {
    if (typeof v !== "object" || v === null) return [];
    const out: (string | number)[][] = [];
    for (const [k, x] of Object.entries(v)) {
      const p = [...prefix, Array.isArray(v) ? Number(k) : k];
      out.push(p, ...paths(x, p));
    }
    return out;
  }

  function withValue(
    record: unknown,
    path: readonly (string | number)[],
    value: unknown,
    remove: boolean,
  ): unknown {
    const copy = structuredClone(record) as Record<string | number, unknown>;
    let at = copy;
    for (const k of path.slice(0, -1))
      at = at[k] as Record<string | number, unknown>;
    const last = path.at(-1) as string | number;
    if (remove && Array.isArray(at)) at.splice(Number(last), 1);
    else if (remove) delete at[last];
    else at[last] = value;
    // As a record comes off the wire: through JSON (undefined members vanish).
    return JSON.parse(JSON.stringify(copy)) as unknown;
  }

  const broken = fc
    .integer({ min: 0, max: catalogue.length - 1 })
    .chain((i) => {
      const record = catalogue[i] as Record<string, unknown>;
      const all = paths(record);
      return fc.record({
        record: fc.constant(record),
        path: fc.constantFrom(...all),
        value: junk,
        remove: fc.boolean(),
      });
    })
    .map(({ record, path, value, remove }) =>
      withValue(record, path, value, remove),
    );

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
    expect(sessionRow(fast.data, "", DAY0)).toEqual(
      sessionRow(slow.data, "", DAY0),
    );
    expect(fast.data.user.identity).toEqual(slow.data.user.identity);
    expect(fast.data.user.endUser).toEqual(slow.data.user.endUser);
    expect(fast.data.user.brandMember).toBe(slow.data.user.brandMember);
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
