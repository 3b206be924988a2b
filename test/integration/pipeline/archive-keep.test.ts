// What is kept is never silently lost, on a real engine: with an archive directory configured
// the retention's TTL (forced with OPTIMIZE … FINAL) deletes no row of a month not archived,
// and the archived month's rows once it is; export refuses a month the retention thinned, one
// no checkpoint covers, one after a gap in the chain (unless skipped on record, which verify
// names), and an archive path the engine would read as a pattern; restore refuses a target
// that deletes and counts the rows that landed.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import type { Config } from "../../../src/config/index.js";
import { writeManifest } from "../../../src/evidence/manifest.js";
import {
  exportArchive,
  restoreArchive,
  verifyArchive,
  warehouseReader,
} from "../../../src/pipeline/archive/index.js";
import { rollUp } from "../../../src/pipeline/rollups.js";
import { createLogger } from "../../../src/util/logger.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { addHold, applyActiveHolds } from "../../../src/warehouse/holds.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import { migrate } from "../../../src/warehouse/migrate.js";
import { retentionSettings } from "../../../src/warehouse/retention.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  markSessionsSynced,
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

const DAY = 86_400_000;
const logger = createLogger({ level: "silent" });

/** The first instant of the month `back` months before the clock's, and its name. */
function monthBack(back: number): { startMs: number; name: string } {
  const now = new Date();
  const startMs = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1);
  return { startMs, name: new Date(startMs).toISOString().slice(0, 7) };
}
const M4 = monthBack(4);
const M3 = monthBack(3);
const M2 = monthBack(2);
const M1 = monthBack(1);

/** `n` completed sessions spread over the month starting at `startMs`, users u0 and u1. */
async function storeMonth(
  w: Warehouse,
  prefix: string,
  startMs: number,
  n: number,
): Promise<void> {
  const step = Math.floor((28 * DAY) / n);
  const rows = Array.from({ length: n }, (_, i) => {
    const start = startMs + i * step + 3_600_000;
    const user = `u${i % 2}`;
    const raw = JSON.stringify({
      id: `${prefix}_${i}`,
      startTime: new Date(start).toISOString(),
      endTime: new Date(start + 60_000).toISOString(),
      duration: "60s",
      sessionStatus: "completed",
      user: {
        type: "human",
        username: user,
        formal: { user: { id: user, email: `${user}@acme.example` } },
      },
      resource: {
        type: "datastore",
        id: "r",
        name: "orders",
        technology: "postgres",
      },
    });
    return sessionRow(sessionSchema.parse(JSON.parse(raw)), raw, Date.now());
  });
  await insertRows(w, "sessions", rows, { retries: 0 });
}

const count = async (w: Warehouse, where = "1") =>
  Number(
    (
      await select<{ n: string }>(
        w,
        `SELECT count() AS n FROM {db}.sessions FINAL WHERE ${where}`,
      )
    )[0]?.n,
  );
const inMonth = (m: { name: string }) =>
  `toStartOfMonth(start_time) = '${m.name}-01'`;
const optimize = (w: Warehouse) =>
  w.client.command({
    query: `OPTIMIZE TABLE \`${w.database}\`.sessions FINAL`,
  });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string; hint?: string },
  );

let tmp: string;
const open: Warehouse[] = [];
async function fresh(env: Record<string, string> = {}): Promise<{
  w: Warehouse;
  config: Config;
}> {
  const config = await testConfig(env);
  const w = await migratedWarehouse(config);
  open.push(w);
  return { w, config };
}

beforeAll(() => {
  tmp = mkdtempSync(join(testTmpDir(), "sessionhouse-archive-keep-"));
});
afterAll(async () => {
  for (const w of open) await w.close();
});

describe("retention with an archive directory", () => {
  it("deletes no row of a month not archived, and the archived month's rows once it is archived, held ones never", async () => {
    const root = join(tmp, "waits");
    const { w } = await fresh({
      SESSIONHOUSE_RETENTION_DAYS: "27",
      SESSIONHOUSE_ARCHIVE_DIR: root,
    });
    await storeMonth(w, "m3", M3.startMs, 40);
    await storeMonth(w, "m2", M2.startMs, 40);
    await markSessionsSynced(
      w,
      new Date(M3.startMs).toISOString(),
      new Date(M1.startMs).toISOString(),
    );
    const [ddl] = await select<{ q: string }>(
      w,
      "SELECT create_table_query AS q FROM system.tables WHERE database = {d:String} AND name = 'sessions'",
      { d: w.database },
    );
    expect(ddl?.q).toMatch(
      /TTL .*WHERE \(legal_hold = false\) AND \(archived = true\)/,
    );
    await optimize(w);
    // Both months are past the retention, and neither is archived: every row stays.
    expect(await count(w)).toBe(80);

    await addHold(
      w,
      {
        scope: "user",
        value: "u1@acme.example",
        reason: "matter 7",
        createdBy: "legal",
      },
      Date.now(),
    );
    await applyActiveHolds(w, "legal", Date.now());
    const r = await exportArchive(w, { month: M3.name, root });
    expect(r.marked).toBe(40);
    await optimize(w);
    // The archived month keeps its held sessions only; the other month is whole.
    expect(await count(w, inMonth(M3))).toBe(20);
    expect(
      await count(w, `${inMonth(M3)} AND user_key = 'u0@acme.example'`),
    ).toBe(0);
    expect(await count(w, inMonth(M2))).toBe(40);
    const verified = await verifyArchive(root, warehouseReader(w));
    expect(verified.problems).toEqual([]);
    expect(verified.rowsChecked).toBe(40);
  });
});

describe("archive export refuses", () => {
  it("a month the retention thinned, saying how many sessions were stored and how many remain", async () => {
    const { w, config } = await fresh();
    await storeMonth(w, "m2", M2.startMs, 56);
    await markSessionsSynced(
      w,
      new Date(M2.startMs).toISOString(),
      new Date(M1.startMs).toISOString(),
    );
    // The rollups count each day's sessions while all of them are kept.
    await rollUp({ config, warehouse: w, logger });
    // Then a retention that reaches into the middle of the month, and a merge.
    const days = Math.ceil((Date.now() - (M2.startMs + 14 * DAY)) / DAY);
    await migrate(w, {
      retention: retentionSettings({
        ...config,
        clickhouse: { ...config.clickhouse, retentionDays: days },
      }),
    });
    await optimize(w);
    const remain = await count(w);
    expect(remain).toBeGreaterThan(0);
    expect(remain).toBeLessThan(56);
    const root = join(tmp, "thinned");
    const e = await failure(exportArchive(w, { month: M2.name, root }));
    expect(e?.code).toBe("MONTH_THINNED");
    expect(e?.message).toMatch(
      new RegExp(
        `^${M2.name} is not whole: on \\d+ day\\(s\\) the rollups counted \\d+ sessions stored, and \\d+ remain`,
      ),
    );
    const [, counted, left] =
      /counted (\d+) sessions stored, and (\d+) remain/.exec(
        e?.message ?? "",
      ) ?? [];
    expect(Number(counted) - Number(left)).toBe(56 - remain);
    expect(e?.hint).toContain("set SESSIONHOUSE_ARCHIVE_DIR");
    expect(existsSync(join(root, M2.name))).toBe(false);
  });

  it("a month no checkpoint covers, then one covered only in part; a covered month exports", async () => {
    const { w } = await fresh();
    await storeMonth(w, "m2", M2.startMs, 10);
    const root = join(tmp, "unsynced");
    const none = await failure(exportArchive(w, { month: M2.name, root }));
    expect(none?.code).toBe("MONTH_NOT_SYNCED");
    expect(none?.message).toContain(
      `${M2.name} is not synced whole: no checkpoint of the sessions stream covers ${new Date(M2.startMs).toISOString()} to ${new Date(M1.startMs).toISOString()}`,
    );
    expect(none?.hint).toContain("sessionhouse sync sessions --from");
    expect(existsSync(join(root, M2.name))).toBe(false);
    const half = new Date(M2.startMs + 10 * DAY).toISOString();
    await markSessionsSynced(w, half, new Date(M1.startMs).toISOString());
    const part = await failure(exportArchive(w, { month: M2.name, root }));
    expect(part?.code).toBe("MONTH_NOT_SYNCED");
    expect(part?.message).toContain(
      `covers ${new Date(M2.startMs).toISOString()} to ${half}`,
    );
    await markSessionsSynced(w, new Date(M2.startMs).toISOString(), half);
    const r = await exportArchive(w, { month: M2.name, root });
    expect(r.tables.find((t) => t.table === "sessions")?.rows).toBe(10);
  });

  it("a month after a gap in the chain, unless the gap is skipped on record; verify names the skip, and a gap without one", async () => {
    const { w } = await fresh();
    await storeMonth(w, "m4", M4.startMs, 6);
    await storeMonth(w, "m2", M2.startMs, 6);
    await markSessionsSynced(
      w,
      new Date(M4.startMs).toISOString(),
      new Date(M1.startMs).toISOString(),
    );
    const root = join(tmp, "gap");
    await exportArchive(w, { month: M4.name, root });
    const gap = await failure(exportArchive(w, { month: M2.name, root }));
    expect(gap?.code).toBe("USAGE");
    expect(gap?.message).toBe(
      `the archive's last month is ${M4.name}: ${M2.name} would leave ${M3.name} out of the chain`,
    );
    expect(gap?.hint).toContain("--skip-gap --reason");
    expect(existsSync(join(root, M2.name))).toBe(false);

    const r = await exportArchive(w, {
      month: M2.name,
      root,
      skipGap: { by: "alice", reason: "the control plane lost that month" },
    });
    expect(r.skipped).toEqual({
      months: [M3.name],
      by: "alice",
      reason: "the control plane lost that month",
    });
    const ok = await verifyArchive(root, warehouseReader(w));
    expect(ok.problems).toEqual([]);
    expect(ok.skipped).toEqual([
      `${M3.name} skipped before ${M2.name} by alice: the control plane lost that month`,
    ]);

    // The same chain with the skip's record removed from the manifest: a gap verify names.
    const silent = join(tmp, "silent-gap");
    cpSync(root, silent, { recursive: true });
    const dir = join(silent, M2.name);
    const m = JSON.parse(
      readFileSync(join(dir, "manifest.json"), "utf8"),
    ) as Record<string, unknown>;
    delete m.skipped;
    delete m.files;
    writeManifest(dir, m);
    const bad = await verifyArchive(silent, warehouseReader(w));
    expect(bad.problems).toContain(
      `${M2.name}: follows ${M4.name}: ${M3.name} missing from the chain, and no skip is recorded`,
    );
  });

  it("an archive path the engine reads as a pattern, in export, verify and restore", async () => {
    const { w } = await fresh();
    await storeMonth(w, "m2", M2.startMs, 4);
    await markSessionsSynced(
      w,
      new Date(M2.startMs).toISOString(),
      new Date(M1.startMs).toISOString(),
    );
    const good = join(tmp, "arch");
    await exportArchive(w, { month: M2.name, root: good });
    for (const root of [
      join(tmp, "arc{h,x}"),
      join(tmp, "arc*"),
      join(tmp, "arc?"),
    ]) {
      mkdirSync(root, { recursive: true });
      cpSync(good, root, { recursive: true });
      const exported = await failure(
        exportArchive(w, { month: M1.name, root }),
      );
      const verified = await failure(verifyArchive(root, warehouseReader(w)));
      const restored = await failure(
        restoreArchive(w, { month: M2.name, root, allowUnsigned: true }),
      );
      for (const e of [exported, verified, restored]) {
        expect(e?.code, root).toBe("USAGE");
        expect(e?.message).toContain(
          "which the engine reads as a file name pattern (* ? { })",
        );
      }
    }
  });
});

describe("archive restore", () => {
  it("refuses a target whose tables delete, and fails when the rows that landed are not the archive's", async () => {
    const { w } = await fresh();
    await storeMonth(w, "m2", M2.startMs, 12);
    await markSessionsSynced(
      w,
      new Date(M2.startMs).toISOString(),
      new Date(M1.startMs).toISOString(),
    );
    const root = join(tmp, "restore");
    await exportArchive(w, { month: M2.name, root });

    const deleting = await fresh({ SESSIONHOUSE_RETENTION_DAYS: "27" });
    const refused = await failure(
      restoreArchive(deleting.w, {
        month: M2.name,
        root,
        allowUnsigned: true,
      }),
    );
    expect(refused?.code).toBe("RESTORE_TARGET_DELETES");
    expect(refused?.message).toContain("sessions after 27 days");
    expect(await count(deleting.w)).toBe(0);

    const target = (await fresh()).w;
    const r = await restoreArchive(target, {
      month: M2.name,
      root,
      allowUnsigned: true,
    });
    expect(r.tables).toEqual([{ table: "sessions", rows: 12, archived: 12 }]);
    // The month's rows deleted from the target, then restored again: the engine drops the
    // repeated insert (same deduplication token), and nothing lands.
    await target.client.command({
      query: `ALTER TABLE \`${target.database}\`.sessions DELETE WHERE 1`,
      clickhouse_settings: { mutations_sync: "2" },
    });
    const again = await failure(
      restoreArchive(target, { month: M2.name, root, allowUnsigned: true }),
    );
    expect(again?.code).toBe("RESTORE_ROWS_MISMATCH");
    expect(again?.message).toContain(
      `sessions 0 rows of ${M2.name} (0 before the load), the archive holds 12`,
    );
  });
});
