// One bad row never stalls a stream: a block ClickHouse refuses because of some of its rows is
// split until those rows are found; they come back with the engine's own message, the others
// are stored once (each part under a token derived from the block's), and a statement error
// is not split at all.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  parseSession,
  type Session,
} from "../../../src/api/schemas/session.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { SinkError } from "../../../src/warehouse/errors.js";
import {
  insertBlock,
  MAX_BISECT_INSERTS,
} from "../../../src/warehouse/insert.js";
import { RowBlock, type TakenRows } from "../../../src/warehouse/row-block.js";
import {
  SessionInputs,
  rejectedSessionRow,
  SESSION_ROWS,
} from "../../../src/warehouse/session-rows.js";
import { readSessions } from "../../helpers/expected.js";
import { NOON, testSimulator } from "../../helpers/simulator.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

const FORMAT = SESSION_ROWS;
const OPTIONS = { retries: 0 };

let w: Warehouse;
let records: { session: Session; raw: string }[];

beforeAll(async () => {
  const sim = await testSimulator();
  try {
    const wire = await readSessions(sim, NOON - 6 * 3_600_000, NOON);
    records = [...wire.values()].slice(0, 200).map((r) => {
      const raw = JSON.stringify(r);
      const parsed = parseSession(JSON.parse(raw));
      if (!parsed.success) throw new Error("simulator record rejected");
      return { session: parsed.data, raw };
    });
  } finally {
    await sim.close();
  }
  expect(records).toHaveLength(200);
  w = await migratedWarehouse(await testConfig());
});
afterAll(async () => {
  await w.close();
});

/** A record whose start time no engine can read. */
const unreadable = (raw: string) =>
  JSON.stringify({ ...(JSON.parse(raw) as object), startTime: "not a time" });

/** A block of the records, those at `bad` carrying a start time no engine can read. */
function blockWith(bad: ReadonlySet<number>): TakenRows {
  const block = new RowBlock();
  records.forEach(({ session, raw }, i) => {
    const text = bad.has(i) ? unreadable(raw) : raw;
    new SessionInputs(NOON).push(block, text, false, session.user.brandMember);
  });
  return block.take();
}

const storedIds = async () =>
  (await select<{ id: string }>(w, "SELECT id FROM {db}.sessions")).map(
    (r) => r.id,
  );

describe("a block with rows ClickHouse refuses", () => {
  it("stores every other row once and returns the refused ones with the engine's message", async () => {
    const bad = new Set([17, 150]);
    const block = blockWith(bad);
    const rejected = await insertBlock(
      w,
      "sessions",
      block,
      "t:1",
      OPTIONS,
      FORMAT,
    );
    expect(rejected.map((r) => r.index)).toEqual([17, 150]);
    for (const r of rejected)
      expect(r.message).toMatch(/^Code: \d+\. Cannot read DateTime/);
    const want = records.filter((_, i) => !bad.has(i)).map((r) => r.session.id);
    expect((await storedIds()).sort()).toEqual([...want].sort());

    // What a dead letter of a refused row holds: the session id and the record as received.
    for (const i of bad)
      expect(rejectedSessionRow(block, i)).toEqual({
        recordId: records[i]?.session.id,
        raw: unreadable(records[i]?.raw ?? ""),
      });

    // The same block sent again (a retry after a lost answer): every part is deduplicated.
    const again = await insertBlock(
      w,
      "sessions",
      block,
      "t:1",
      OPTIONS,
      FORMAT,
    );
    expect(again.map((r) => r.index)).toEqual([17, 150]);
    expect(await storedIds()).toHaveLength(198);
  });

  it("gives up past its insert budget without a partial answer", async () => {
    await w.client.command({
      query: `TRUNCATE TABLE \`${w.database}\`.sessions`,
    });
    const everyOther = new Set(
      records.map((_, i) => i).filter((i) => i % 2 === 0),
    );
    const err = await insertBlock(
      w,
      "sessions",
      blockWith(everyOther),
      "t:2",
      OPTIONS,
      FORMAT,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).message).toContain(
      `${MAX_BISECT_INSERTS} inserts did not isolate them`,
    );
  });

  it("does not split a block whose statement is wrong", async () => {
    const err = await insertBlock(
      w,
      "no_such_table",
      blockWith(new Set([3])),
      "t:3",
      OPTIONS,
      FORMAT,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect(((err as SinkError).cause as { code?: string }).code).toBe("60");
    // One insert, failed as a whole: split, the 200 rows would each fail and exhaust the
    // inserts a block may take, and the error would say so.
    expect((err as SinkError).message).toMatch(
      /^insert into no_such_table failed: /,
    );
    expect((err as SinkError).message).not.toContain("did not isolate");
  });
});
