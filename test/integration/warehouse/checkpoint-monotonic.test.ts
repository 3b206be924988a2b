// A checkpoint never moves back, whichever process writes last: a second process that is still
// finishing a window stores an older position after the first stored a later one (two `run`s
// in a rolling update's overlap), or slips in between the other's read and its write. The read
// the sync resumes from, the table read under FINAL as the dashboards read it, and the table
// after its merges all keep the later position.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  readCheckpoint,
  readCheckpoints,
  writeCheckpoint,
} from "../../../src/warehouse/bookkeeping.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { chTime } from "../../../src/warehouse/format.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

// Opened once for the file; every test awaits it.
const opened: Promise<Warehouse> = testConfig().then(migratedWarehouse);
let w: Warehouse;
beforeAll(async () => {
  w = await opened;
}, 120_000);
afterAll(async () => (await opened).close());

const LATER = Date.UTC(2026, 10, 20, 12, 0, 0);
const EARLIER = Date.UTC(2026, 10, 20, 11, 0, 0);

async function finalPosition(stream: string): Promise<string | undefined> {
  const rows = await select<{ p: string }>(
    w,
    "SELECT toString(position) AS p FROM {db}.checkpoints FINAL WHERE stream = {stream:String}",
    { stream },
  );
  return rows[0]?.p;
}

describe("a checkpoint written behind the stored one", () => {
  it("is not written, and the later position stays: read, FINAL, after merges", async () => {
    const stream = "sessions.monotonic";
    const options = { retries: 0 };
    expect(await writeCheckpoint(w, stream, LATER, { by: "a" }, options)).toBe(
      true,
    );
    // The late writer: its position is older, its write is newer.
    expect(
      await writeCheckpoint(w, stream, EARLIER, { by: "b" }, options),
    ).toBe(false);
    expect(await readCheckpoint(w, stream)).toMatchObject({
      positionMs: LATER,
      detail: { by: "a" },
    });
    expect(await finalPosition(stream)).toBe("2026-11-20 12:00:00.000");
    await w.client.command({
      query: `OPTIMIZE TABLE \`${w.database}\`.checkpoints FINAL`,
    });
    expect(await finalPosition(stream)).toBe("2026-11-20 12:00:00.000");
    // The same position again (a window stored twice) is written: it moves nothing back.
    expect(await writeCheckpoint(w, stream, LATER, { by: "c" }, options)).toBe(
      true,
    );
    expect((await readCheckpoint(w, stream))?.detail).toEqual({ by: "c" });
  });

  it("that slipped in between a writer's read and its write is not what the sync reads", async () => {
    // Two writers raced: the older position landed last, with the newest version.
    const stream = "sessions.race";
    await writeCheckpoint(w, stream, LATER, {}, { retries: 0 });
    await w.client.insert({
      table: `\`${w.database}\`.checkpoints`,
      format: "JSONEachRow",
      values: [
        {
          stream,
          position: chTime(EARLIER),
          detail: "{}",
          updated_at: chTime(Date.now() + 60_000),
        },
      ],
    });
    expect((await readCheckpoint(w, stream))?.positionMs).toBe(LATER);
    expect(
      (await readCheckpoints(w, "sessions.")).map((c) => [
        c.stream,
        c.positionMs,
      ]),
    ).toEqual([
      ["sessions.monotonic", LATER],
      ["sessions.race", LATER],
    ]);
    // Nor after the table merged: a merge keeps the greatest position, not the latest row.
    await w.client.command({
      query: `OPTIMIZE TABLE \`${w.database}\`.checkpoints FINAL`,
    });
    expect(await finalPosition(stream)).toBe("2026-11-20 12:00:00.000");
    expect((await readCheckpoint(w, stream))?.positionMs).toBe(LATER);
  });
});
