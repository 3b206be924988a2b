// The engine builds every session row from the record as received (sessionRowsSelect). Held
// equal, column by column, to the rows the JavaScript mapping builds (test/helpers/session-row.ts)
// for the simulator's whole catalogue of session shapes and the edge cases of the wire format;
// and a record the engine cannot read, although the exporter could, is a dead letter while the
// rest of its block is stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import { parseSession } from "../../../src/api/schemas/session.js";
import { withRun } from "../../../src/pipeline/context.js";
import { SessionWriter } from "../../../src/pipeline/session-writer.js";
import type { Config } from "../../../src/config/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { insertBlock, insertRows } from "../../../src/warehouse/insert.js";
import { RowBlock } from "../../../src/warehouse/row-block.js";
import {
  SessionInputs,
  SESSION_COLUMNS,
  SESSION_ROWS,
  sessionValueProblem,
} from "../../../src/warehouse/session-rows.js";
import { createLogger } from "../../../src/util/logger.js";
import { storedDeadLetters } from "../../helpers/expected.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  DAY0,
  RICH_SESSION,
  sessionCatalogue,
} from "../../helpers/session-shapes.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

const FETCHED = DAY0 + 8 * 3_600_000;

/** The simulator's sessions of six hours under three brand member names, as they come off the wire. */
const catalogue = (): string[] =>
  sessionCatalogue(Infinity).map((r) => JSON.stringify(r));

const base = { ...RICH_SESSION, id: "edge_base" };

/** The wire format's edge cases, each a record the exporter accepts. */
const EDGES: Record<string, unknown>[] = [
  base,
  // Every member omitted that proto3 omits when empty.
  { id: "edge_min", startTime: "2026-11-02T10:04:05Z" },
  // Every timestamp precision and an offset.
  ...["", ".1", ".12", ".123", ".1234", ".123456", ".123456789"].map(
    (frac, i) => ({
      ...base,
      id: `edge_frac_${i}`,
      startTime: `2026-11-02T10:04:05${frac}Z`,
      endTime: `2026-11-02T12:04:05${frac}+02:00`,
      duration: "",
    }),
  ),
  // Durations: fractional digits, halves, none (end − start), open sessions.
  { ...base, id: "edge_dur_9", duration: "12.123456789s" },
  { ...base, id: "edge_dur_half", duration: "0.0005s" },
  { ...base, id: "edge_dur_big", duration: "31536000.999s" },
  { ...base, id: "edge_dur_none", duration: undefined },
  {
    ...base,
    id: "edge_open",
    endTime: undefined,
    duration: undefined,
    sessionStatus: "active",
  },
  // The brand member as the operation list names it (`service`), under another name, and absent.
  {
    ...base,
    id: "edge_service",
    user: { ...base.user, formal: undefined, service: base.user.formal },
  },
  {
    ...base,
    id: "edge_brand_other",
    user: {
      type: "human",
      username: "bob",
      notAnIdentity: { x: 1 },
      someVendor: { endUser: { email: "bob@acme.example" } },
    },
  },
  { ...base, id: "edge_no_brand", user: { type: "native", username: "pg" } },
  { ...base, id: "edge_no_user", user: undefined },
  // A machine user, a native user behind a person, and a child session.
  {
    ...base,
    id: "edge_machine",
    user: {
      type: "machine",
      username: "svc-etl",
      formal: { user: { id: "usr_m", name: "etl", type: "machine" } },
    },
  },
  { ...base, id: "edge_child", parentSessionId: "edge_base" },
];

let w: Warehouse;
let config: Config;
beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
  await w.client.command({
    query: `CREATE TABLE \`${w.database}\`.sessions_js AS \`${w.database}\`.sessions`,
  });
});
afterAll(async () => {
  await w.close();
});

/** Every column of a table, the materialized one included, in a comparable form. */
const rowsOf = (table: string) =>
  select<Record<string, unknown>>(
    w,
    `SELECT ${SESSION_COLUMNS.map((c) => `toString(${c.name}) AS ${c.name}`).join(", ")}
     FROM {db}.${table} ORDER BY id, fetched_at`,
  );

describe("rows built by the engine", () => {
  it("equal the JavaScript mapping's for every shape of the catalogue and the wire's edge cases", async () => {
    const texts = [
      ...catalogue(),
      ...EDGES.map((e, i) => JSON.stringify(e, null, i % 2)),
    ];
    expect(texts.length).toBeGreaterThan(1000);
    const block = new RowBlock();
    const reference = [];
    let k = 0;
    for (const raw of texts) {
      const parsed = parseSession(JSON.parse(raw));
      if (!parsed.success) throw new Error(`rejected: ${raw.slice(0, 200)}`);
      const s = parsed.data;
      const fetchedAtMs = FETCHED + (k % 7) * 1001;
      const held = k % 5 === 0;
      k++;
      expect(sessionValueProblem(s, fetchedAtMs)).toBeUndefined();
      new SessionInputs(fetchedAtMs).push(block, raw, held, s.user.brandMember);
      reference.push(sessionRow(s, raw, fetchedAtMs, undefined, held));
    }
    await insertRows(w, "sessions_js", reference, { retries: 0 });
    const rejected = await insertBlock(
      w,
      "sessions",
      block.take(),
      "engine-rows:1",
      { retries: 0 },
      SESSION_ROWS,
    );
    expect(rejected).toEqual([]);

    const engine = await rowsOf("sessions");
    const js = await rowsOf("sessions_js");
    expect(engine).toHaveLength(texts.length);
    for (let i = 0; i < js.length; i++) expect(engine[i]).toEqual(js[i]);

    // The shapes above are all there: brand members found by shape, native users, open ones.
    const [kinds] = await select<Record<string, string>>(
      w,
      `SELECT countIf(user_email != '') AS people, countIf(native_username != '') AS natives,
              countIf(end_time IS NULL) AS open, countIf(parent_session_id != '') AS children,
              countIf(end_user_email != '') AS end_users, countIf(legal_hold) AS held
       FROM {db}.sessions`,
    );
    for (const [kind, n] of Object.entries(kinds ?? {}))
      expect(Number(n), kind).toBeGreaterThan(0);
    const edges = await select<Record<string, unknown>>(
      w,
      `SELECT id, duration_ms, user_email, end_user_email FROM {db}.sessions
       WHERE id IN ('edge_dur_half', 'edge_brand_other') ORDER BY id`,
    );
    expect(edges).toEqual([
      {
        id: "edge_brand_other",
        duration_ms: 600000,
        user_email: "",
        end_user_email: "bob@acme.example",
      },
      // Half a millisecond rounds up, as JavaScript's Math.round does.
      {
        id: "edge_dur_half",
        duration_ms: 1,
        user_email: "alice@acme.example",
        end_user_email: "",
      },
    ]);
  });

  it("keeps a record the engine cannot read as a dead letter and stores the rest of its block", async () => {
    const good = EDGES.slice(0, 4).map((e, i) =>
      JSON.stringify({ ...e, id: `readable_${i}` }),
    );
    // JSON that JavaScript reads and the engine's JSON reader refuses: a number beyond a
    // double's range, and nesting deeper than the engine allows.
    const huge = JSON.stringify({ ...base, id: "unreadable_huge" }).replace(
      '"kept":[1,',
      '"kept":[1e400,',
    );
    const deep = JSON.stringify({
      ...base,
      id: "unreadable_deep",
      unknownMember: JSON.parse(
        `${"[".repeat(3000)}${"]".repeat(3000)}`,
      ) as unknown,
    });
    // RFC 3339 allows a lower-case "t" and "z"; the engine's time parser does not.
    const lower = JSON.stringify({
      ...base,
      id: "unreadable_time",
      startTime: "2026-11-02t10:04:05.5z",
    });
    const texts = [
      good[0],
      huge,
      good[1],
      lower,
      good[2],
      deep,
      good[3],
    ] as string[];
    for (const t of texts)
      expect(parseSession(JSON.parse(t)).success).toBe(true);

    const logger = createLogger({ level: "silent" });
    const api = ControlPlaneApi.fromConfig(config, logger);
    try {
      await withRun(
        { config, api, warehouse: w, logger },
        "engine-rows",
        async (ctx) => {
          const writer = new SessionWriter(ctx);
          await writer.add(
            texts.map((text) => ({ text, value: JSON.parse(text) as unknown })),
            FETCHED,
          );
          await writer.drain();
          expect(writer.rows).toBe(4);
          expect(writer.deadLetters).toBe(3);
        },
      );
    } finally {
      await api.close();
    }
    const stored = await select<{ id: string }>(
      w,
      "SELECT id FROM {db}.sessions WHERE id LIKE 'readable_%' OR id LIKE 'unreadable_%' ORDER BY id",
    );
    expect(stored.map((r) => r.id)).toEqual([
      "readable_0",
      "readable_1",
      "readable_2",
      "readable_3",
    ]);
    const dead = await storedDeadLetters(w, "engine-rows");
    expect(dead.map((d) => d.record_id).sort()).toEqual([
      "unreadable_deep",
      "unreadable_huge",
      "unreadable_time",
    ]);
    for (const d of dead) {
      expect(d.reason).toMatch(
        d.record_id === "unreadable_time"
          ? /^refused by ClickHouse: Code: 41\. .*Cannot read DateTime/
          : /^refused by ClickHouse: Code: 395\. .*engine cannot read this record as JSON/,
      );
      expect(texts).toContain(d.raw);
    }
  });
});
