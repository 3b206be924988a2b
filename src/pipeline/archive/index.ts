// Monthly archives that outlive the database: a directory per month (`<root>/YYYY-MM/`) with one
// Parquet file per table and a manifest (src/evidence/manifest.ts: every file's SHA-256, the
// optional Ed25519 signature) that records each table's rows, time range and schema and the
// SHA-256 of the previous archived month's manifest. The months form a chain: removing or
// editing one breaks the next one's link, and the last one's hash (the head) is what an
// operator keeps in write-once storage. The format itself is src/warehouse/archive.ts.
//
// The archive's one entry: each stage is its own file, and code outside this folder imports
// from here only. export.ts writes a month, check.ts checks one (`checkMonth`, what verify
// reports and restore requires), verify.ts checks a directory's chain, restore.ts loads a month
// back; mark.ts marks archived rows, months.ts holds what the stages share.
export { archiveSettleMs, exportArchive } from "./export.js";
export { markArchives } from "./mark.js";
export { NOT_CHECKED, verifyArchive } from "./verify.js";
export { restoreArchive } from "./restore.js";
export { warehouseReader, type ArchiveReader } from "./check.js";
export type { ArchiveManifestFields } from "./months.js";
