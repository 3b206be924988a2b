// Verifying an archive directory: every month checked (checkMonth), the chain from the first
// month to the last, and its head against the one the operator keeps.
import type { KeyObject } from "node:crypto";
import { resolve } from "node:path";
import { MANIFEST_FILE } from "../../evidence/manifest.js";
import { refusePatternPath } from "../../warehouse/index.js";
import { type ArchiveReader, checkMonth } from "./check.js";
import { archivedMonths, type SkippedMonths } from "./months.js";

/** "2026-09 skipped by alice: reason", for verify's output. */
function skippedLine(month: string, s: SkippedMonths): string {
  return `${s.months.join(", ")} skipped before ${month} by ${s.by}: ${s.reason}`;
}

export interface VerifyResult {
  months: string[];
  /** SHA-256 of the last month's manifest. */
  head: string | null;
  problems: string[];
  /** What was not checked, and what that leaves open: one sentence each. */
  unchecked: string[];
  /** Months signed (whether or not by a key given). */
  signed: number;
  /** Months whose signature was checked against the key given. */
  signaturesVerified: number;
  rowsChecked: number;
  /** The months left out of the chain on purpose, with who and why: one line each. */
  skipped: string[];
}

/** The sentences `archive verify` prints for what it did not check. */
export const NOT_CHECKED = {
  signatures:
    "signatures not checked: no public key given (--public-key, or SESSIONHOUSE_PUBLIC_KEY_FILE)",
  head: "the last month is not checked against a head you keep: no --expect-head given; a removed last month would go unnoticed",
  rows: "rows and time ranges not read back: no engine to read the Parquet",
} as const;

/**
 * Checks every month under `root` (checkMonth), the chain from the first month to the last,
 * and the head against `expectHead`; says what it could not check (no key, no head).
 */
export async function verifyArchive(
  root: string,
  engine: ArchiveReader | undefined,
  options: {
    publicKey?: KeyObject | undefined;
    expectHead?: string | undefined;
  } = {},
): Promise<VerifyResult> {
  refusePatternPath(resolve(root));
  const months = archivedMonths(resolve(root));
  const problems: string[] = [];
  if (months.length === 0)
    problems.push(`no archived month (YYYY-MM/${MANIFEST_FILE}) in ${root}`);
  let signed = 0;
  let signaturesVerified = 0;
  let rowsChecked = 0;
  const skipped: string[] = [];
  let head: string | null = null;
  for (const month of months) {
    const check = await checkMonth(root, month, {
      trusted: options.publicKey,
      reader: engine,
    });
    problems.push(...check.problems.map((p) => `${month}: ${p.message}`));
    if (check.previousAbsent !== undefined)
      problems.push(
        `${month}: chained to ${check.previousAbsent}, which is not in the archive (a month was removed)`,
      );
    const skip = check.manifest?.skipped;
    if (skip !== undefined) skipped.push(skippedLine(month, skip));
    if (check.signature.state !== "unsigned") signed++;
    if (check.signature.state === "verified") signaturesVerified++;
    rowsChecked += check.rowsChecked;
    head = check.manifestSha256 ?? null;
  }
  if (options.expectHead !== undefined && options.expectHead !== head)
    problems.push(
      `the chain's head is ${String(head)}, not the expected ${options.expectHead} (the last month was removed, changed or added)`,
    );
  const unchecked: string[] = [];
  if (options.publicKey === undefined) unchecked.push(NOT_CHECKED.signatures);
  if (options.expectHead === undefined) unchecked.push(NOT_CHECKED.head);
  if (engine === undefined) unchecked.push(NOT_CHECKED.rows);
  return {
    months,
    head,
    problems,
    unchecked,
    signed,
    signaturesVerified,
    rowsChecked,
    skipped,
  };
}
