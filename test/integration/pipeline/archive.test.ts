// Monthly archives on a real engine: export → verify → restore into a fresh database gives the
// same rows; restoring twice changes nothing; a changed byte, a removed month, a head that is
// not the expected one or another signing key fail the verification.
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import {
  cpSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import type { Config } from "../../../src/config/index.js";
import {
  MANIFEST_FILE,
  readPublicKey,
  writeManifest,
} from "../../../src/evidence/manifest.js";
import {
  exportArchive,
  restoreArchive,
  verifyArchive,
} from "../../../src/pipeline/archive/index.js";
import {
  ARCHIVE_TABLES,
  storedColumns,
  type ScratchEngine,
} from "../../../src/warehouse/archive.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import { selectRows } from "../../../src/warehouse/select.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  freshDatabaseName,
  markSessionsSynced,
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let w: Warehouse;
let config: Config;
let root: string;
let keyFile: string;
let pub: KeyObject;
let otherPub: KeyObject;
/** The archive files are read back by this process's engine (the CLI opens one of its own). */
let engine: ScratchEngine;

beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
  engine = { rows: (sql) => selectRows(w, sql), close: () => undefined };
  const dir = mkdtempSync(join(testTmpDir(), "sessionhouse-archive-"));
  root = join(dir, "archive");
  const keys = generateKeyPairSync("ed25519");
  keyFile = join(dir, "signing.pem");
  const pubFile = join(dir, "signing.pub");
  const otherPubFile = join(dir, "other.pub");
  writeFileSync(
    keyFile,
    keys.privateKey.export({ type: "pkcs8", format: "pem" }),
  );
  writeFileSync(
    pubFile,
    keys.publicKey.export({ type: "spki", format: "pem" }),
  );
  writeFileSync(
    otherPubFile,
    generateKeyPairSync("ed25519").publicKey.export({
      type: "spki",
      format: "pem",
    }),
  );
  pub = readPublicKey(pubFile);
  otherPub = readPublicKey(otherPubFile);
  const reads = [];
  for (let i = 0; i < 60; i++) {
    const start = Date.parse("2026-09-20T00:00:00Z") + i * 20 * 3_600_000;
    const base = {
      id: `s${i}`,
      startTime: new Date(start).toISOString(),
      user: {
        type: "human",
        username: `u${i % 4}`,
        formal: {
          user: {
            id: `u${i % 4}`,
            email: `u${i % 4}@acme.example`,
            groups: ["g"],
          },
        },
      },
      resource: {
        type: "datastore",
        id: "r",
        name: `res${i % 3}`,
        technology: "postgres",
      },
    };
    const open = JSON.stringify({ ...base, sessionStatus: "active" });
    const done = JSON.stringify({
      ...base,
      sessionStatus: "completed",
      endTime: new Date(start + 60_000).toISOString(),
      duration: "60s",
    });
    reads.push(
      sessionRow(sessionSchema.parse(JSON.parse(open)), open, start + 1000),
    );
    reads.push(
      sessionRow(sessionSchema.parse(JSON.parse(done)), done, start + 90_000),
    );
  }
  await insertRows(w, "sessions", reads, { retries: 0 });
  await insertRows(
    w,
    "agg_histogram",
    [0, 1, 2].map((k) => ({
      job: "logs_by_technology",
      bucket_time: `2026-10-0${k + 1} 10:00:00`,
      interval_s: 300,
      level: 1,
      field1: "resource.technology",
      key1: "postgres",
      field2: "",
      key2: "",
      field3: "",
      key3: "",
      count: 10 + k,
      window_start: `2026-10-0${k + 1} 10:00:00`,
      fetched_at: "2026-10-05 00:00:00.000",
    })),
    { retries: 0 },
  );
  await markSessionsSynced(w, "2026-08-01T00:00:00Z", "2026-11-01T00:00:00Z");
});
afterAll(async () => {
  await w.close();
});

const OCTOBER = "toStartOfMonth(start_time) = '2026-10-01'";

/** `target` holds October's sessions as the exported warehouse does, row for row. */
async function expectSameOctober(target: Warehouse): Promise<void> {
  const rows = (x: Warehouse) =>
    selectRows(
      x,
      `SELECT * FROM \`${x.database}\`.sessions FINAL WHERE ${OCTOBER} ORDER BY id`,
    );
  const original = await rows(w);
  expect(original.length).toBeGreaterThan(30);
  expect(await rows(target)).toEqual(original);
}

describe("archives", () => {
  let head: string;

  it("exports months as sorted Parquet with a signed manifest chained to the previous month", async () => {
    const sept = await exportArchive(w, {
      month: "2026-09",
      root,
      signingKeyFile: keyFile,
    });
    const oct = await exportArchive(w, {
      month: "2026-10",
      root,
      signingKeyFile: keyFile,
    });
    head = oct.head;
    const [n] = await select<{ n: string }>(
      w,
      `SELECT count() AS n FROM {db}.sessions FINAL WHERE ${OCTOBER}`,
    );
    expect(oct.tables.find((t) => t.table === "sessions")?.rows).toBe(
      Number(n?.n),
    );
    expect(oct.tables.find((t) => t.table === "agg_histogram")?.rows).toBe(3);
    const manifest = JSON.parse(
      readFileSync(join(oct.dir, "manifest.json"), "utf8"),
    ) as {
      previous: { month: string; manifestSha256: string };
      files: Array<{ path: string }>;
      signature?: unknown;
    };
    expect(manifest.previous).toEqual({
      month: "2026-09",
      manifestSha256: sept.head,
    });
    expect(manifest.files.map((f) => f.path)).toEqual([
      "agg_histogram.parquet",
      "sessions.parquet",
    ]);
    expect(manifest.signature).toBeDefined();
    // Sorted by the table's key, one row per session (the completed read).
    const ids = await select<{ id: string; session_status: string }>(
      w,
      `SELECT id, session_status FROM file('${join(oct.dir, "sessions.parquet")}', 'Parquet')`,
    );
    expect(new Set(ids.map((r) => r.session_status))).toEqual(
      new Set(["completed"]),
    );
    expect(ids.length).toBe(Number(n?.n));

    const again = await exportArchive(w, { month: "2026-10", root }).catch(
      (e: unknown) => e,
    );
    expect((again as Error).message).toMatch(/archived already/);
    const before = await exportArchive(w, { month: "2026-08", root }).catch(
      (e: unknown) => e,
    );
    expect((before as Error).message).toMatch(/only grows at its end/);
  });

  it("verifies hashes, signatures, chain, head and row counts", async () => {
    const ok = await verifyArchive(root, engine, {
      publicKey: pub,
      expectHead: head,
    });
    expect(ok.problems).toEqual([]);
    expect(ok).toMatchObject({
      months: ["2026-09", "2026-10"],
      head,
      signed: 2,
      signaturesVerified: 2,
      unchecked: [],
    });
    const [stored] = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.sessions FINAL WHERE start_time >= '2026-09-01' AND start_time < '2026-11-01'",
    );
    expect(ok.rowsChecked).toBe(Number(stored?.n) + 3);

    const other = await verifyArchive(root, engine, {
      publicKey: otherPub,
    });
    expect(other.problems.join("\n")).toMatch(/not by the given public key/);
    const stale = await verifyArchive(root, engine, {
      expectHead: "0".repeat(64),
    });
    expect(stale.problems.join("\n")).toMatch(/not the expected/);
  });

  it("restores into a fresh database the same rows, and restoring twice changes nothing", async () => {
    const database = freshDatabaseName();
    const target = await migratedWarehouse({
      ...config,
      clickhouse: { ...config.clickhouse, database },
    });
    try {
      await restoreArchive(target, {
        month: "2026-10",
        root,
        trusted: pub,
      });
      await expectSameOctober(target);
      const physical = `SELECT count() AS n FROM \`${database}\`.sessions`;
      const [once] = await selectRows<{ n: string }>(target, physical);
      await restoreArchive(target, { month: "2026-10", root, trusted: pub });
      const [twice] = await selectRows<{ n: string }>(target, physical);
      expect(twice).toEqual(once);
      await expectSameOctober(target);
      const hist = `SELECT key1, count FROM \`{d}\`.agg_histogram FINAL ORDER BY bucket_time`;
      expect(await selectRows(target, hist.replace("{d}", database))).toEqual(
        await selectRows(w, hist.replace("{d}", w.database)),
      );
    } finally {
      await target.close();
    }
  });

  it("restores a month archived under the oldest schema the archive was written under (0018: no is_deleted)", async () => {
    // The month as a database migrated to 0018 archived it: the sessions file and its manifest
    // hold that schema's stored columns (upgrade fixture 0018-8f0c16b), unsigned.
    const fixture = new URL(
      "../../fixtures/upgrade/0018-8f0c16b/manifest.json",
      import.meta.url,
    );
    const then = (
      JSON.parse(readFileSync(fixture, "utf8")) as {
        tables: { name: string; columns: string[] }[];
      }
    ).tables
      .find((t) => t.name === "sessions")
      ?.columns.map((c) => c.split(" ")[0] as string);
    expect(then).not.toContain("is_deleted");
    const oldRoot = join(
      mkdtempSync(join(testTmpDir(), "sessionhouse-archive-0018-")),
      "archive",
    );
    const dir = join(oldRoot, "2026-10");
    cpSync(join(root, "2026-10"), dir, { recursive: true });
    const file = join(dir, "sessions.parquet");
    await w.client.command({
      query: `INSERT INTO FUNCTION file('${file}.old', 'Parquet') SELECT ${(then ?? []).join(", ")} FROM file('${file}', 'Parquet')`,
    });
    renameSync(`${file}.old`, file);
    const manifest = JSON.parse(
      readFileSync(join(dir, MANIFEST_FILE), "utf8"),
    ) as {
      files?: unknown;
      signature?: unknown;
      tables: { table: string; columns: { name: string }[] }[];
    };
    delete manifest.files;
    delete manifest.signature;
    for (const t of manifest.tables)
      if (t.table === "sessions")
        t.columns = t.columns.filter((c) => then?.includes(c.name));
    rmSync(join(dir, MANIFEST_FILE));
    writeManifest(dir, manifest);

    const database = freshDatabaseName();
    const target = await migratedWarehouse({
      ...config,
      clickhouse: { ...config.clickhouse, database },
    });
    try {
      await restoreArchive(target, {
        month: "2026-10",
        root: oldRoot,
        allowUnsigned: true,
      });
      await expectSameOctober(target);
    } finally {
      await target.close();
    }
  });

  it("holds every data table of the database and nothing else: the sessions, aggregations and every *_history", async () => {
    const tables = await selectRows<{ name: string }>(
      w,
      `SELECT name FROM system.tables WHERE database = {db:String} AND engine LIKE '%MergeTree'
         AND (endsWith(name, '_history') OR name IN ('sessions', 'agg_histogram', 'agg_top_values', 'agg_windows'))
       ORDER BY name`,
      { db: w.database },
    );
    expect(ARCHIVE_TABLES.map((s) => s.table).sort()).toEqual(
      tables.map((t) => t.name),
    );
    for (const s of ARCHIVE_TABLES) {
      const columns = await storedColumns(w, s.table);
      expect(columns.map((c) => c.name)).toContain(s.timeColumn);
    }
  });

  it("fails verification for a changed byte or a removed month", async () => {
    const file = join(root, "2026-10", "sessions.parquet");
    const bytes = readFileSync(file);
    const changed = Buffer.from(bytes);
    const at = Math.floor(changed.length / 2);
    changed.writeUInt8(changed.readUInt8(at) ^ 0xff, at);
    writeFileSync(file, changed);
    const broken = await verifyArchive(root, engine);
    expect(broken.problems.join("\n")).toMatch(
      /2026-10: sessions\.parquet: SHA-256 is/,
    );
    writeFileSync(file, bytes);
    expect((await verifyArchive(root, engine)).problems).toEqual([]);

    renameSync(join(root, "2026-09"), join(root, "removed-2026-09"));
    const gap = await verifyArchive(root, engine);
    expect(gap.problems.join("\n")).toMatch(
      /chained to 2026-09, which is not in the archive/,
    );
    renameSync(join(root, "removed-2026-09"), join(root, "2026-09"));
  });
});
