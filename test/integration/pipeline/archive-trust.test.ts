// An archive is evidence only as far as it can be checked: months written by `archive export`
// on a real engine, then tampered with (a table renamed to legal_holds in a re-signed manifest,
// a file path ../x, a symbolic link, an extra or a missing column, an unsigned month, a manifest
// re-signed by another key, a removed last month), are refused by restore with a code naming the
// problem, and nothing outside the archive's data tables changes (legal_holds FINAL, its events,
// the bookkeeping). Verify says what it could not check. A month that has not ended is not
// exported. Archive files are the owner's only.
import {
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from "node:crypto";
import {
  cpSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  existsSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import type { Config } from "../../../src/config/index.js";
import {
  MANIFEST_FILE,
  writeManifest,
} from "../../../src/evidence/manifest.js";
import {
  NOT_CHECKED,
  exportArchive,
  restoreArchive,
  verifyArchive,
  warehouseReader,
  type ArchiveManifestFields,
  type ArchiveReader,
} from "../../../src/pipeline/archive/index.js";
import { storedColumns } from "../../../src/warehouse/archive.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  addHold,
  applyActiveHolds,
  countHeldSessions,
} from "../../../src/warehouse/holds.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import { Tables } from "../../../src/warehouse/tables.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  markSessionsSynced,
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let w: Warehouse;
let config: Config;
let tmp: string;
/** The intact archive: 2026-09 and 2026-10, signed by `keyFile`. */
let root: string;
let keyFile: string;
let trusted: KeyObject;
let otherKeyFile: string;
let head: string;
let reader: ArchiveReader;

const MONTH = "2026-10";

beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
  reader = warehouseReader(w);
  tmp = mkdtempSync(join(testTmpDir(), "sessionhouse-archive-trust-"));
  root = join(tmp, "archive");
  const keys = generateKeyPairSync("ed25519");
  keyFile = join(tmp, "signing.pem");
  writeFileSync(
    keyFile,
    keys.privateKey.export({ type: "pkcs8", format: "pem" }),
  );
  trusted = createPublicKey(keys.privateKey);
  otherKeyFile = join(tmp, "other.pem");
  writeFileSync(
    otherKeyFile,
    generateKeyPairSync("ed25519").privateKey.export({
      type: "pkcs8",
      format: "pem",
    }),
  );
  const rows = [];
  for (let i = 0; i < 40; i++) {
    const start = Date.parse("2026-09-20T00:00:00Z") + i * 24 * 3_600_000;
    const raw = JSON.stringify({
      id: `s${i}`,
      startTime: new Date(start).toISOString(),
      endTime: new Date(start + 60_000).toISOString(),
      sessionStatus: "completed",
      user: {
        type: "human",
        username: `u${i % 2}`,
        formal: { user: { id: `u${i % 2}`, email: `u${i % 2}@acme.example` } },
      },
      resource: {
        type: "datastore",
        id: "r",
        name: `res${i % 3}`,
        technology: "postgres",
      },
    });
    rows.push(
      sessionRow(sessionSchema.parse(JSON.parse(raw)), raw, start + 90_000),
    );
  }
  await insertRows(w, "sessions", rows, { retries: 0 });
  await insertRows(
    w,
    "agg_histogram",
    [0, 1].map((k) => ({
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
  await markSessionsSynced(w, "2026-09-01T00:00:00Z", "2026-11-01T00:00:00Z");
  await exportArchive(w, { month: "2026-09", root, signingKeyFile: keyFile });
  head = (
    await exportArchive(w, { month: MONTH, root, signingKeyFile: keyFile })
  ).head;
  // An active hold on the sessions of the resource res0, made after the export.
  await addHold(
    w,
    {
      scope: "resource",
      value: "res0",
      reason: "litigation",
      createdBy: "counsel",
    },
    Date.now(),
  );
  await applyActiveHolds(w, "test", Date.now());
}, 120_000);

afterAll(async () => {
  await w.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Tables outside the archive that hold state of their own (not derived from sessions). */
const STATE_TABLES = [
  Tables.checkpoints,
  Tables.runs,
  Tables.deadLetters,
  Tables.aggJobs,
  Tables.streamWindows,
  Tables.schemaMigrations,
  Tables.sessionPolls,
  Tables.rollupDays,
  Tables.retentionSettings,
  Tables.users,
  Tables.nativeUsers,
  Tables.policySuspensions,
];

/** What no restore may change: the holds, their log, and the tables of state. */
async function untouchable(): Promise<unknown> {
  const counts: Record<string, unknown> = {};
  for (const t of STATE_TABLES) {
    const [r] = await select<{ n: string }>(
      w,
      `SELECT count() AS n FROM {db}.\`${t}\``,
    );
    counts[t] = r?.n;
  }
  return {
    holds: await select(
      w,
      "SELECT * FROM {db}.legal_holds FINAL ORDER BY hold_id",
    ),
    events: await select(
      w,
      "SELECT * FROM {db}.legal_hold_events ORDER BY at, hold_id, action",
    ),
    counts,
  };
}

async function sessionRowsStored(): Promise<number> {
  const [r] = await select<{ n: string }>(
    w,
    "SELECT count() AS n FROM {db}.sessions",
  );
  return Number(r?.n);
}

/** A copy of the intact archive whose month `MONTH` `edit` changes. */
function tampered(edit: (dir: string, copy: string) => void): string {
  const copy = mkdtempSync(join(tmp, "copy-"));
  cpSync(root, copy, { recursive: true });
  edit(join(copy, MONTH), copy);
  return copy;
}

/** Rewrites a month's manifest with `change` applied, signed by `signingKeyFile` (or not). */
function resign(
  dir: string,
  change: (m: ArchiveManifestFields) => void,
  signingKeyFile: string | undefined,
): void {
  const m = JSON.parse(
    readFileSync(join(dir, MANIFEST_FILE), "utf8"),
  ) as Record<string, unknown>;
  delete m.files;
  delete m.signature;
  change(m as unknown as ArchiveManifestFields);
  writeManifest(dir, m, { signingKeyFile });
}

async function refusal(p: Promise<unknown>): Promise<{
  code: string;
  message: string;
  hint: string | undefined;
}> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string; hint?: string },
  );
  expect(err, "the restore was expected to be refused").toBeDefined();
  return {
    code: String(err?.code),
    message: String(err?.message),
    hint: err?.hint,
  };
}

describe("archive restore trusts only what verify trusts", () => {
  it("refuses a month naming legal_holds in a manifest re-signed by the trusted key, and the hold stays", async () => {
    const before = await untouchable();
    const held = await countHeldSessions(w);
    expect(held).toBeGreaterThan(0);
    const copy = tampered((dir) => rmSync(join(dir, "agg_histogram.parquet")));
    const dir = join(copy, MONTH);
    // The hold as released, written by the engine as an export writes a table.
    await w.client.command({
      query: `INSERT INTO FUNCTION file('${join(dir, "legal_holds.parquet")}', 'Parquet')
        SELECT hold_id, scope, value, reason, created_by, created_at, until,
               now64(3, 'UTC') AS released_at, 'mallory' AS released_by,
               'archived' AS release_reason, now64(3, 'UTC') + 1 AS updated_at
        FROM \`${w.database}\`.legal_holds FINAL`,
    });
    const columns = await storedColumns(w, "legal_holds");
    resign(
      dir,
      (m) => {
        const t = m.tables.find((x) => x.table === "agg_histogram");
        if (t === undefined) throw new Error("no agg_histogram in the month");
        Object.assign(t, {
          table: "legal_holds",
          file: "legal_holds.parquet",
          timeColumn: "bucket_time",
          rows: 1,
          columns,
        });
      },
      keyFile,
    );
    for (const allowUnsigned of [false, true]) {
      const r = await refusal(
        restoreArchive(w, { month: MONTH, root: copy, trusted, allowUnsigned }),
      );
      expect(r.code).toBe("ARCHIVE_TABLE_REFUSED");
      expect(r.message).toMatch(
        /names the table "legal_holds", which is not one of the archive's tables/,
      );
      expect(r.hint).toMatch(/sessions, agg_histogram/);
    }
    // The same month unsigned and restored with --allow-unsigned: refused all the same.
    resign(dir, () => undefined, undefined);
    const unsigned = await refusal(
      restoreArchive(w, { month: MONTH, root: copy, allowUnsigned: true }),
    );
    expect(unsigned.code).toBe("ARCHIVE_TABLE_REFUSED");
    // Verify says the same.
    const v = await verifyArchive(copy, reader, { publicKey: trusted });
    expect(v.problems.join("\n")).toMatch(/legal_holds/);

    expect(await untouchable()).toEqual(before);
    await applyActiveHolds(w, "test", Date.now());
    expect(await countHeldSessions(w)).toBe(held);
  });

  it("refuses a file path ../x and a symbolic link leading out of the month's directory", async () => {
    const before = await untouchable();
    const rows = await sessionRowsStored();
    const outside = tampered((dir, copy) => {
      cpSync(join(dir, "sessions.parquet"), join(copy, "outside.parquet"));
      resign(
        dir,
        (m) => {
          const t = m.tables.find((x) => x.table === "sessions");
          if (t) t.file = "../outside.parquet";
        },
        keyFile,
      );
    });
    const r = await refusal(
      restoreArchive(w, { month: MONTH, root: outside, trusted }),
    );
    expect(r.code).toBe("ARCHIVE_PATH_REFUSED");
    expect(r.message).toContain(
      'sessions: file "../outside.parquet" is not a plain file name inside the month\'s directory',
    );

    const linked = tampered((dir, copy) => {
      cpSync(join(dir, "sessions.parquet"), join(copy, "outside.parquet"));
      rmSync(join(dir, "sessions.parquet"));
      symlinkSync(join(copy, "outside.parquet"), join(dir, "sessions.parquet"));
    });
    const l = await refusal(
      restoreArchive(w, { month: MONTH, root: linked, trusted }),
    );
    expect(l.code).toBe("ARCHIVE_PATH_REFUSED");
    expect(l.message).toMatch(/sessions\.parquet: a symbolic link/);

    expect(await sessionRowsStored()).toBe(rows);
    expect(await untouchable()).toEqual(before);
  });

  it("refuses columns that are not exactly the target table's: one added, one left out", async () => {
    const before = await untouchable();
    const rows = await sessionRowsStored();
    const extra = tampered((dir) =>
      resign(
        dir,
        (m) => {
          m.tables
            .find((x) => x.table === "sessions")
            ?.columns.push({ name: "x", type: "String" });
        },
        keyFile,
      ),
    );
    const e = await refusal(
      restoreArchive(w, { month: MONTH, root: extra, trusted }),
    );
    expect(e.code).toBe("ARCHIVE_COLUMNS_MISMATCH");
    expect(e.message).toContain(
      `sessions in ${w.database}: column "x" is not in the table`,
    );

    // Without legal_hold the restored rows would take its default, false: held rows unflagged.
    const missing = tampered((dir) =>
      resign(
        dir,
        (m) => {
          const t = m.tables.find((x) => x.table === "sessions");
          if (t) t.columns = t.columns.filter((c) => c.name !== "legal_hold");
        },
        keyFile,
      ),
    );
    const mi = await refusal(
      restoreArchive(w, { month: MONTH, root: missing, trusted }),
    );
    expect(mi.code).toBe("ARCHIVE_COLUMNS_MISMATCH");
    expect(mi.message).toContain("column legal_hold is not in the archive");

    expect(await sessionRowsStored()).toBe(rows);
    expect(await untouchable()).toEqual(before);
  });

  it("restores a month archived before is_deleted existed: its rows are live ones", async () => {
    const rows = await sessionRowsStored();
    // The month's sessions file as an archive made before migration 0023 holds it.
    const { stream } = await w.client.exec({
      query: `SELECT * EXCEPT (is_deleted) FROM \`${w.database}\`.sessions FINAL
              WHERE toStartOfMonth(start_time) = toDate('${MONTH}-01') ORDER BY start_time, id
              FORMAT Parquet`,
    });
    const chunks: Buffer[] = [];
    for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
    const older = tampered((dir) => {
      writeFileSync(join(dir, "sessions.parquet"), Buffer.concat(chunks));
      resign(
        dir,
        (m) => {
          const t = m.tables.find((x) => x.table === "sessions");
          if (t) t.columns = t.columns.filter((c) => c.name !== "is_deleted");
        },
        keyFile,
      );
    });
    const r = await restoreArchive(w, { month: MONTH, root: older, trusted });
    expect(r.tables.find((t) => t.table === "sessions")?.rows).toBeGreaterThan(
      0,
    );
    const [live] = await select<{ n: string; deleted: string }>(
      w,
      "SELECT count() AS n, countIf(is_deleted = 1) AS deleted FROM {db}.sessions",
    );
    expect(Number(live?.deleted)).toBe(0);
    expect(Number(live?.n)).toBeGreaterThanOrEqual(rows);
  });

  it("restores an unsigned month only with allowUnsigned, and says so", async () => {
    const before = await untouchable();
    const rows = await sessionRowsStored();
    const copy = tampered((dir) => resign(dir, () => undefined, undefined));
    for (const key of [undefined, trusted]) {
      const r = await refusal(
        restoreArchive(w, { month: MONTH, root: copy, trusted: key }),
      );
      expect(r.code).toBe("ARCHIVE_UNSIGNED");
      expect(r.message).toContain(`the archive of ${MONTH} is not signed`);
      expect(r.hint).toMatch(/--allow-unsigned/);
    }
    expect(await sessionRowsStored()).toBe(rows);
    const ok = await restoreArchive(w, {
      month: MONTH,
      root: copy,
      trusted,
      allowUnsigned: true,
    });
    expect(ok.notes).toContain(
      `${MONTH} is not signed: restored because --allow-unsigned was given; nothing shows who wrote it`,
    );
    expect(ok.tables.map((t) => t.table)).toEqual([
      "sessions",
      "agg_histogram",
    ]);
    expect(await untouchable()).toEqual(before);
  });

  it("refuses a manifest re-signed by another key: without a key as unchecked, with the key as not its signature", async () => {
    const before = await untouchable();
    const rows = await sessionRowsStored();
    const copy = tampered((dir) =>
      resign(
        dir,
        (m) => {
          m.exportedAt = "2026-11-02T00:00:00.000Z";
        },
        otherKeyFile,
      ),
    );
    const none = await refusal(restoreArchive(w, { month: MONTH, root: copy }));
    expect(none.code).toBe("PUBLIC_KEY_REQUIRED");
    expect(none.message).toMatch(
      /is signed \(key [0-9a-f]{64}\), and no public key is given/,
    );
    expect(none.hint).toMatch(/--public-key/);
    const other = await refusal(
      restoreArchive(w, { month: MONTH, root: copy, trusted }),
    );
    expect(other.code).toBe("ARCHIVE_SIGNATURE_INVALID");
    expect(other.message).toMatch(/not by the given public key/);
    expect(await sessionRowsStored()).toBe(rows);
    expect(await untouchable()).toEqual(before);

    // Verify without a key does not call the other key's signature verified, and says why.
    const v = await verifyArchive(copy, reader);
    expect(v.signed).toBe(2);
    expect(v.signaturesVerified).toBe(0);
    expect(v.unchecked).toContain(NOT_CHECKED.signatures);
    const withKey = await verifyArchive(copy, reader, { publicKey: trusted });
    expect(withKey.problems.join("\n")).toMatch(
      new RegExp(
        `${MONTH}: signed by key [0-9a-f]{64}, not by the given public key`,
      ),
    );
  });

  it("restores the intact month, signed by the trusted key, writing only the data tables, and held sessions stay held", async () => {
    // The flags as the holds say (a restore above loaded rows archived before the hold).
    await applyActiveHolds(w, "test", Date.now());
    const held = await countHeldSessions(w);
    expect(held).toBeGreaterThan(0);
    const before = await untouchable();
    const r = await restoreArchive(w, { month: MONTH, root, trusted });
    expect(r.notes).toEqual([]);
    expect(r.tables.find((t) => t.table === "sessions")?.rows).toBeGreaterThan(
      0,
    );
    expect(await untouchable()).toEqual(before);
    // The archived rows (exported before the hold, unflagged) do not replace the held ones.
    await w.client.command({
      query: `OPTIMIZE TABLE \`${w.database}\`.sessions FINAL`,
    });
    expect(await countHeldSessions(w)).toBe(held);
  });
});

describe("archive verify says what it could not check", () => {
  it("a removed last month goes unnoticed without a head, and verify says so; with the head kept it fails", async () => {
    const intact = await verifyArchive(root, reader, {
      publicKey: trusted,
      expectHead: head,
    });
    expect(intact.problems).toEqual([]);
    expect(intact.unchecked).toEqual([]);
    expect(intact.signaturesVerified).toBe(2);

    const copy = tampered((dir) => rmSync(dir, { recursive: true }));
    const blind = await verifyArchive(copy, reader, { publicKey: trusted });
    expect(blind.problems).toEqual([]);
    expect(blind.months).toEqual(["2026-09"]);
    expect(blind.unchecked).toEqual([NOT_CHECKED.head]);
    expect(NOT_CHECKED.head).toBe(
      "the last month is not checked against a head you keep: no --expect-head given; a removed last month would go unnoticed",
    );
    const kept = await verifyArchive(copy, reader, {
      publicKey: trusted,
      expectHead: head,
    });
    expect(kept.problems.join("\n")).toMatch(/not the expected/);

    const nothing = await verifyArchive(root, reader);
    expect(nothing.problems).toEqual([]);
    expect(nothing.signaturesVerified).toBe(0);
    expect(nothing.unchecked).toEqual([
      NOT_CHECKED.signatures,
      NOT_CHECKED.head,
    ]);
  });
});

describe("archive export", () => {
  it("refuses a month that has not ended and settled, naming when it can be exported", async () => {
    const fresh = join(tmp, "early");
    const early = await exportArchive(w, {
      month: "2026-11",
      root: fresh,
      settleMs: 3_600_000,
      nowMs: Date.parse("2026-12-01T00:30:00Z"),
    }).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string; hint?: string },
    );
    expect(early?.code).toBe("MONTH_NOT_ENDED");
    expect(early?.message).toMatch(/2026-11 has not ended for the archive/);
    expect(early?.hint).toContain("at or after 2026-12-01T01:00:00.000Z");
    expect(existsSync(join(fresh, "2026-11"))).toBe(false);
    // The month in progress by the clock.
    const current = new Date().toISOString().slice(0, 7);
    const now = await exportArchive(w, { month: current, root: fresh }).then(
      () => undefined,
      (e: unknown) => e as { code: string },
    );
    expect(now?.code).toBe("MONTH_NOT_ENDED");
    // Settled and synced: exported.
    await markSessionsSynced(w, "2026-09-01T00:00:00Z", "2026-12-01T00:00:00Z");
    const done = await exportArchive(w, {
      month: "2026-11",
      root: fresh,
      settleMs: 3_600_000,
      nowMs: Date.parse("2026-12-01T01:00:00Z"),
    });
    expect(done.tables.map((t) => t.table)).toContain("sessions");
  });

  it("writes the archive readable by its owner only", () => {
    const mode = (p: string) => statSync(p).mode & 0o777;
    const dir = join(root, MONTH);
    expect(mode(root)).toBe(0o700);
    expect(mode(dir)).toBe(0o700);
    for (const f of [
      "sessions.parquet",
      "agg_histogram.parquet",
      MANIFEST_FILE,
    ])
      expect([f, mode(join(dir, f))]).toEqual([f, 0o600]);
  });
});
