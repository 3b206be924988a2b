import { describe, expect, it } from "vitest";
import {
  parseSession,
  sessionSchema,
  type Session,
} from "../../src/api/schemas/session.js";
import { LineBlock } from "../../src/warehouse/line-block.js";
import {
  pushSessionLine,
  SESSION_LINE_COLUMNS,
} from "../../src/warehouse/sessions.js";
import { sessionRow } from "../helpers/session-row.js";

/** The line the sync writes for a session, as text. */
function sessionLine(s: Session, raw: string, fetchedAtMs: number): string {
  const block = new LineBlock();
  pushSessionLine(block, s, raw, fetchedAtMs);
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

  it("writes the same row as the object mapping, with the raw record verbatim", () => {
    const raw = JSON.stringify(base, null, 1);
    const parsed = parseSession(JSON.parse(raw));
    if (!parsed.success) throw new Error("expected a valid session");
    const values = JSON.parse(
      sessionLine(parsed.data, raw, 1_800_000_000_000),
    ) as unknown[];
    const line = Object.fromEntries(
      SESSION_LINE_COLUMNS.map((c, k) => [c, values[k]]),
    );
    const row = sessionRow(
      parsed.data,
      "",
      1_800_000_000_000,
    ) as unknown as Record<string, unknown>;
    expect({ ...line, raw: "" }).toEqual(row);
    expect(Object.keys(row).sort()).toEqual([...SESSION_LINE_COLUMNS].sort());
    expect(
      sessionLine(parsed.data, raw, 1_800_000_000_000).endsWith(`,${raw}]`),
    ).toBe(true);
  });
});
