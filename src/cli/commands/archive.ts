// `sessionhouse archive export|verify|restore`: a month of deduplicated sessions, aggregations
// and control-plane histories as Parquet with a signed, chained manifest; its offline check;
// and its load back into a database.
import type { Config } from "../../config/index.js";
import { trustedPublicKey } from "../../evidence/manifest.js";
import {
  archiveSettleMs,
  exportArchive,
  restoreArchive,
  verifyArchive,
} from "../../pipeline/archive/index.js";
import { FatalError, UsageError } from "../../util/errors.js";
import {
  DEFAULT_ARCHIVE_DIR,
  keepingEverything,
  migrate,
  openScratchEngine,
  openWarehouse,
  retentionSettings,
} from "../../warehouse/index.js";
import { withWarehouse } from "../command-warehouse.js";
import { decision } from "../operator.js";
import { configFrom, type GlobalOptions } from "../runtime.js";
import { counted } from "../output.js";

/** The key signatures are checked by: --public-key, else the configured public key or signing key. */
function trustedKey(config: Config, publicKey: string | undefined) {
  return trustedPublicKey({
    publicKeyFile: publicKey ?? config.evidence.publicKeyFile,
    signingKeyFile: config.evidence.signingKeyFile,
  });
}

interface VerifyFlags {
  publicKey?: string;
  expectHead?: string;
}

interface RestoreFlags {
  month: string;
  from: string;
  database?: string;
  publicKey?: string;
  allowUnsigned?: boolean;
}

interface ExportFlags {
  month: string;
  to?: string;
  skipGap?: boolean;
  reason?: string;
  by?: string;
}

/** --skip-gap with its --reason (and --by), or neither. */
function skipGap(o: ExportFlags): { by: string; reason: string } | undefined {
  const hint =
    'say why the months are left out of the archive: --skip-gap --reason "…"';
  if (o.skipGap !== true) {
    if (o.reason !== undefined || o.by !== undefined)
      throw new UsageError("--reason and --by go with --skip-gap", { hint });
    return undefined;
  }
  if (o.reason === undefined)
    throw new UsageError("--skip-gap needs --reason", { hint });
  return decision({ reason: o.reason, by: o.by }, hint);
}

/** What became of the month's rows, for the operator. */
function markedLine(config: Config, marked: number | undefined): string {
  const retention = config.archive.dir
    ? "the retention may delete them now"
    : "SESSIONHOUSE_ARCHIVE_DIR is not set: the retention deletes by age, archived or not";
  return marked === undefined
    ? `rows not marked archived here (the service's read access cannot write): ${config.archive.dir ? "the service's rollups job marks them at its next run; until then the retention keeps them" : "set SESSIONHOUSE_ARCHIVE_DIR for the service to mark them"}\n`
    : `checked as archive verify checks it; ${marked} rows marked archived (${retention})\n`;
}

/**
 * `archive export`: reads the data, but opens the writer: it migrates first, the embedded engine
 * writes the Parquet files itself, and the month's rows are marked archived after. While the
 * running service holds the data directory, through the service's read access (the service
 * migrated it and encodes the Parquet; its rollups job marks the rows).
 */
export async function runArchiveExport(
  globals: GlobalOptions,
  o: ExportFlags,
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const skip = skipGap(o);
  const w = await openWarehouse(config, { readThroughService: true });
  try {
    // The running service has migrated its database; its read access cannot write.
    if (w.service === undefined)
      await migrate(w, { retention: retentionSettings(config) });
    const r = await exportArchive(w, {
      month: o.month,
      root: o.to ?? config.archive.dir ?? DEFAULT_ARCHIVE_DIR,
      signingKeyFile: config.evidence.signingKeyFile,
      groupReadable: config.files.groupReadable,
      settleMs: archiveSettleMs(config),
      skipGap: skip,
    });
    for (const t of r.tables)
      process.stdout.write(
        `  ${t.table}: ${t.rows} rows${t.file ? ` → ${t.file}` : ""}\n`,
      );
    const perS = r.ms > 0 ? Math.round((r.rows * 1000) / r.ms) : r.rows;
    const skipped = r.skipped
      ? `skipped (recorded in the manifest): ${r.skipped.months.join(", ")} by ${r.skipped.by}: ${r.skipped.reason}\n`
      : "";
    process.stdout.write(
      `${o.month} archived in ${r.dir}: ${r.rows} rows in ${(r.ms / 1000).toFixed(1)} s (${perS} rows/s), ${config.evidence.signingKeyFile ? "signed" : "not signed"}\n` +
        skipped +
        markedLine(config, r.marked) +
        `chain head (keep it in write-once storage): ${r.head}\n`,
    );
  } finally {
    await w.close();
  }
}

/** `archive verify`: the files alone, read by an engine of its own. */
export async function runArchiveVerify(
  globals: GlobalOptions,
  dir: string,
  o: VerifyFlags,
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const trusted = trustedKey(config, o.publicKey);
  const engine = await openScratchEngine();
  try {
    const r = await verifyArchive(dir, engine, {
      publicKey: trusted?.key,
      expectHead: o.expectHead,
    });
    const unchecked = r.unchecked.map((u) => `not checked: ${u}\n`);
    if (r.problems.length > 0)
      throw new FatalError(
        "ARCHIVE_INVALID",
        `the archive in ${dir} does not verify:\n  ${r.problems.join("\n  ")}${unchecked.length > 0 ? `\n${unchecked.join("").trimEnd()}` : ""}`,
        {
          hint: "restore the listed months from an intact copy; never edit an archive in place",
        },
      );
    const months = r.months.length;
    const signatures =
      trusted === undefined
        ? `${r.signed} of ${months} signed, not checked`
        : `${r.signaturesVerified} of ${months} verified by ${trusted.source}`;
    const skipped = r.skipped.map((s) => `skipped: ${s}\n`);
    process.stdout.write(
      `${counted(months, "month")} checked (${r.months[0] ?? ""} … ${r.months.at(-1) ?? ""}${r.skipped.length > 0 ? `, ${counted(r.skipped.length, "gap")} skipped on record` : ", no gap"}): files, chain, ${r.rowsChecked} rows read back\n` +
        skipped.join("") +
        `signatures: ${signatures}\n` +
        `chain head: ${String(r.head)}${o.expectHead === undefined ? "" : " (the expected head)"}\n` +
        unchecked.join(""),
    );
  } finally {
    engine.close();
  }
}

/** `archive restore`: checked as verify checks it, then loaded into the (migrated) database. */
export async function runArchiveRestore(
  globals: GlobalOptions,
  o: RestoreFlags,
): Promise<void> {
  const config = configFrom(
    globals,
    o.database === undefined ? {} : { "clickhouse.database": o.database },
    { needsApi: false },
  );
  const trusted = trustedKey(config, o.publicKey);
  // Restored rows are older than any retention: the target's tables get none.
  const keep = keepingEverything(retentionSettings(config));
  await withWarehouse(
    config,
    "write",
    async (w) => {
      const r = await restoreArchive(w, {
        month: o.month,
        root: o.from,
        trusted: trusted?.key,
        allowUnsigned: o.allowUnsigned === true,
      });
      for (const note of [...r.notes, ...serviceDatabaseNote(config, o)])
        process.stderr.write(`warning: ${note}\n`);
      const restored =
        r.tables.length === 0
          ? "the archive holds no rows"
          : `${r.tables.map((t) => `${t.table} ${t.rows}`).join(", ")} rows (counted in ${w.database} after the load; the archive holds ${r.tables.map((t) => t.archived).join(", ")})`;
      process.stdout.write(
        `${o.month} restored into ${w.database}: ${restored}\n`,
      );
    },
    keep,
  );
}

/** Restoring into the database the service syncs: its next start gives the tables their TTL back. */
function serviceDatabaseNote(config: Config, o: RestoreFlags): string[] {
  const deletes =
    config.clickhouse.retentionDays > 0 ||
    retentionSettings(config).tables.some((t) => t.retentionDays > 0);
  if (o.database !== undefined || !deletes) return [];
  return [
    `${config.clickhouse.database} is the database the service syncs, and the retention is set: its TTL was removed for this restore, and the next migrate, sync or run gives it back, deleting restored rows older than the retention at their next merge; restore into a database of its own (--database)`,
  ];
}
