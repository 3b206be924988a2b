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
} from "../../pipeline/archive.js";
import { FatalError } from "../../util/errors.js";
import {
  migrate,
  openScratchEngine,
  openWarehouse,
  retentionSettings,
} from "../../warehouse/index.js";
import { withWarehouse } from "../command-warehouse.js";
import { configFrom, type GlobalOptions } from "../runtime.js";

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

/**
 * `archive export`: reads the data, but opens the writer: it migrates first, and the embedded
 * engine writes the Parquet files itself. While the running service holds the data directory,
 * through the service's read access (the service migrated it and encodes the Parquet).
 */
export async function runArchiveExport(
  globals: GlobalOptions,
  o: { month: string; to: string },
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const w = await openWarehouse(config, { readThroughService: true });
  try {
    // The running service has migrated its database; its read access cannot write.
    if (w.service === undefined)
      await migrate(w, { retention: retentionSettings(config) });
    const r = await exportArchive(w, {
      month: o.month,
      root: o.to,
      signingKeyFile: config.evidence.signingKeyFile,
      groupReadable: config.files.groupReadable,
      settleMs: archiveSettleMs(config),
    });
    for (const t of r.tables)
      process.stdout.write(
        `  ${t.table}: ${t.rows} rows${t.file ? ` → ${t.file}` : ""}\n`,
      );
    const perS = r.ms > 0 ? Math.round((r.rows * 1000) / r.ms) : r.rows;
    process.stdout.write(
      `${o.month} archived in ${r.dir}: ${r.rows} rows in ${(r.ms / 1000).toFixed(1)} s (${perS} rows/s), ${config.evidence.signingKeyFile ? "signed" : "not signed"}\n` +
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
    process.stdout.write(
      `${months} month(s) checked (${r.months[0] ?? ""} … ${r.months.at(-1) ?? ""}): files, chain, ${r.rowsChecked} rows read back\n` +
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
  await withWarehouse(config, "write", async (w) => {
    const r = await restoreArchive(w, {
      month: o.month,
      root: o.from,
      trusted: trusted?.key,
      allowUnsigned: o.allowUnsigned === true,
    });
    for (const note of r.notes) process.stderr.write(`warning: ${note}\n`);
    const restored =
      r.tables.length === 0
        ? "the archive holds no rows"
        : `${r.tables.map((t) => `${t.table} ${t.rows}`).join(", ")} rows`;
    process.stdout.write(
      `${o.month} restored into ${w.database}: ${restored}\n`,
    );
  });
}
