// A doctor check: a spec (name, family, whether `run` does it at start, the function that
// looks) and its result (status, what was found, what to do). Checks are data: the runner
// (runner.ts) walks a list of specs, and a family is one file of specs.
import { errorMessage, SessionhouseError } from "../../util/errors.js";

export type CheckStatus = "ok" | "warn" | "fail" | "skipped";

type CheckFamily = "config" | "api" | "clickhouse" | "data-dir" | "reports";

/** What one check found. `fix` says what to do when the status is not ok. */
export interface CheckResult {
  name: string;
  family: CheckFamily;
  status: CheckStatus;
  found: string;
  fix?: string | undefined;
}

/** What a check's function returns; the runner adds its name and family. */
export type Finding = Omit<CheckResult, "name" | "family">;

export interface CheckSpec<Ctx> {
  name: string;
  family: CheckFamily;
  /** Part of the quick subset `run` performs at start (no API quota, no browser). */
  fast: boolean;
  run(ctx: Ctx): Promise<Finding> | Finding;
}

export const ok = (found: string): Finding => ({ status: "ok", found });
export const warn = (found: string, fix: string): Finding => ({
  status: "warn",
  found,
  fix,
});
export const fail = (found: string, fix: string): Finding => ({
  status: "fail",
  found,
  fix,
});
export const skipped = (why: string): Finding => ({
  status: "skipped",
  found: why,
});

/** Thrown by a check that cannot look because something it needs is missing: a skip, with why. */
export class Skip extends Error {}

/** A failed check from what its function threw: a Skip is a skip; an error's hint is the fix. */
export function findingOfError(err: unknown): Finding {
  if (err instanceof Skip) return skipped(err.message);
  const hint = err instanceof SessionhouseError ? err.hint : undefined;
  return fail(
    errorMessage(err).split("\n")[0] ?? "",
    hint ?? "see the message",
  );
}

/** Free space below either bound is a warning: a tenth of the disk, or 1 GiB. */
const LOW_SPACE_SHARE = 0.1;
const LOW_SPACE_BYTES = 2 ** 30;

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

/** The free space of a disk as a finding: warned below a tenth of it or 1 GiB. */
export function spaceFinding(
  what: string,
  freeBytes: number,
  totalBytes: number,
): Finding {
  const share = totalBytes > 0 ? freeBytes / totalBytes : 1;
  const text = `${what}: ${gib(freeBytes)} free of ${gib(totalBytes)} (${Math.round(share * 100)}%)`;
  if (share < LOW_SPACE_SHARE || freeBytes < LOW_SPACE_BYTES)
    return warn(
      `${text}, below ${LOW_SPACE_SHARE * 100}% or ${gib(LOW_SPACE_BYTES)}`,
      "free space on that disk, or set retention (SESSIONHOUSE_RETENTION_DAYS) so the tables stop growing",
    );
  return ok(text);
}

/**
 * The specs of one family, in the order given. `fast`: every check of the family is part of
 * `run`'s quick subset, or only the ones named.
 */
export function familySpecs<Ctx>(
  family: CheckFamily,
  fast: boolean | readonly string[],
  checks: readonly (readonly [string, CheckSpec<Ctx>["run"]])[],
): CheckSpec<Ctx>[] {
  return checks.map(([name, run]) => ({
    name,
    family,
    fast: typeof fast === "boolean" ? fast : fast.includes(name),
    run,
  }));
}
