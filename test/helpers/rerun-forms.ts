// Which statement boundaries test/slow/warehouse/interrupted-migrations.test.ts stops a migration
// at. A resumed `migrate` skips the statements the ledger recorded and runs the others, by the
// same code for every statement. A stop after a statement whose form makes a second run a no-op
// (`CREATE … IF NOT EXISTS`, `DROP … IF EXISTS`, one `ADD/DROP COLUMN/INDEX IF [NOT] EXISTS`)
// resumes as the stop just before that statement does: the statement runs (again) and changes
// nothing more, so such a stop proves nothing the kept ones do not. Kept: the stop after every
// other statement (INSERT … SELECT, EXCHANGE, ATTACH PARTITION, MATERIALIZE, MODIFY …, an ALTER
// of several commands), and after the last statement of each file stopped in (the file run
// whole, not yet recorded applied). The bootstrap has a path of its own (it runs until the
// ledger exists): every boundary of it. test/unit/warehouse/rerun-forms.test.ts holds the forms.

/** Whole statements that change nothing when run a second time, by their form alone. */
const SAFE_FORMS: readonly RegExp[] = [
  /^CREATE\s+(?:DATABASE|TABLE|VIEW|MATERIALIZED\s+VIEW)\s+IF\s+NOT\s+EXISTS\s/i,
  /^DROP\s+(?:DATABASE|TABLE|VIEW)\s+IF\s+EXISTS\s+\S+$/i,
  /^ALTER\s+TABLE\s+\S+\s+(?:ADD\s+(?:COLUMN|INDEX)\s+IF\s+NOT\s+EXISTS|DROP\s+(?:COLUMN|INDEX)\s+IF\s+EXISTS)\s/i,
];

/** True when the statement has a comma outside brackets and quotes (an ALTER of several commands). */
function hasTopLevelComma(sql: string): boolean {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < sql.length; i++) {
    const c = sql.charAt(i);
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"' || c === "`") quote = c;
    else if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === "," && depth === 0) return true;
  }
  return false;
}

/** True when running the statement again after it ran changes nothing, by its form alone. */
export function safeToRerunByForm(sql: string): boolean {
  const s = sql.trim();
  if (!SAFE_FORMS.some((form) => form.test(s))) return false;
  // A CREATE's commas are its columns' and its query's; an ALTER's are further commands.
  return !/^ALTER\s/i.test(s) || !hasTopLevelComma(s);
}

/**
 * The stops made in a file: k statements applied (1 … n), for each k whose statement is not
 * safe to run again by its form, and n when there is one; every k for the bootstrap.
 */
export function stopBoundaries(
  statements: readonly string[],
  options: { bootstrap: boolean },
): number[] {
  const all = statements.map((_, i) => i + 1);
  if (options.bootstrap) return all;
  const stops = all.filter((k) => !safeToRerunByForm(statements[k - 1] ?? ""));
  if (stops.length > 0 && stops.at(-1) !== statements.length)
    stops.push(statements.length);
  return stops;
}
