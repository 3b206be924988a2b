// Marking a month's rows archived: what lets the retention delete them once an archive
// directory is configured. Export marks the month it wrote, restore the month it loaded, and the
// rollups job every archived month whose rows are not marked yet (markArchives).
import { join, resolve } from "node:path";
import { readManifest } from "../../evidence/manifest.js";
import {
  archiveSpecs,
  markArchived,
  refusePatternPath,
  unmarkedRows,
  type Warehouse,
} from "../../warehouse/index.js";
import { checkWithEngine } from "./check.js";
import {
  archivedMonths,
  type ArchiveManifestFields,
  manifestFieldsSchema,
  monthRange,
} from "./months.js";

/**
 * Marks the rows of every month archived in `root` that are not marked yet (those fetched before
 * the month's export began), each month checked as verify checks it first: the months exported
 * through the running service's read access, or whose marking failed. The rollups job runs it
 * when an archive directory is configured. A month that does not verify is left unmarked (its
 * rows stay) and named. Returns the rows marked per month and the months refused.
 */
export async function markArchives(
  w: Warehouse,
  root: string,
): Promise<{ marked: Record<string, number>; refused: string[] }> {
  refusePatternPath(resolve(root));
  const marked: Record<string, number> = {};
  const refused: string[] = [];
  for (const month of archivedMonths(resolve(root))) {
    const manifest = manifestOf(root, month);
    const before = Date.parse(
      manifest?.fetchedBefore ?? manifest?.exportedAt ?? "",
    );
    if (!Number.isFinite(before) || !(await unmarked(w, month, before)))
      continue;
    const check = await checkWithEngine(w, root, month, {
      allowUnsigned: true,
    });
    if (check.problems.length > 0) {
      refused.push(
        `${month}: ${check.problems.map((p) => p.message).join("; ")}`,
      );
      continue;
    }
    marked[month] = await markMonth(w, month, before);
  }
  return { marked, refused };
}

/** A month's manifest fields as written, or undefined when it is not an archive manifest. */
function manifestOf(
  root: string,
  month: string,
): ArchiveManifestFields | undefined {
  try {
    const parsed = manifestFieldsSchema.safeParse(
      readManifest(join(resolve(root), month)).manifest,
    );
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a flagged table holds rows of `month` fetched before `beforeMs` not marked archived. */
async function unmarked(
  w: Warehouse,
  month: string,
  beforeMs: number,
): Promise<boolean> {
  const range = monthRange(month);
  for (const spec of await archiveSpecs(w))
    if (
      spec.flagged === true &&
      (await unmarkedRows(w, spec, range, beforeMs)) > 0
    )
      return true;
  return false;
}

/** Marks archived every flagged table's rows of `month` fetched before `fetchedBeforeMs`. */
export async function markMonth(
  w: Warehouse,
  month: string,
  fetchedBeforeMs: number,
): Promise<number> {
  const range = monthRange(month);
  let marked = 0;
  for (const spec of await archiveSpecs(w))
    marked += await markArchived(w, spec, range, fetchedBeforeMs);
  return marked;
}
