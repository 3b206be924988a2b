// The simulator's whole catalogue of session shapes (brand member under several names, native
// users, machine users, open and completed, omitted zero values, every timestamp precision) as
// records off the wire, and the same records broken at a random place in a random way: what the
// checks of a session record (parseSession, scanSession) are held to.
import fc from "fast-check";
import {
  createSessionGenerator,
  sessionToWire,
} from "../../src/simulator/index.js";

export const DAY0 = Date.UTC(2026, 10, 4);

/**
 * A session with every member the row reads filled, identities under the brand member
 * "formal", escapes and non-ASCII text in a name, and a member the schema does not know.
 */
export const RICH_SESSION = {
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
        groups: ["g1", "g2"],
        externalIds: ["okta|1"],
      },
      endUser: { id: "usr_2", type: "human", groups: ["x"] },
    },
    native: { username: "analyst", extra: 1 },
  },
  resource: {
    type: "datastore",
    id: "res_1",
    name: "orders-prod-pg",
    technology: "postgres",
  },
  connector: { id: "con_1", name: 'quote " and \\ backslash, ünïcödé 🚀' },
  parentSessionId: "ses_0",
  unknownMember: { kept: [1, 2.5, null, { deep: true }] },
};

/** The simulator's sessions of six hours under three brand member names, as parsed JSON. */
export function sessionCatalogue(perBrand = 400): Record<string, unknown>[] {
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
    for (const s of sessions.slice(0, perBrand))
      catalogue.push(
        JSON.parse(
          JSON.stringify(sessionToWire(s, gen, nowMs, brand)),
        ) as Record<string, unknown>,
      );
  }
  return catalogue;
}

/** Records of the catalogue, each broken at one random place: a member removed or replaced. */
export function brokenSessionRecords(
  catalogue: readonly Record<string, unknown>[],
): fc.Arbitrary<unknown> {
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

  return fc
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
}
