// Argument parsers shared by the commands: whole numbers in a range, and the --from/--to range
// of a sync, both checked before anything is opened.
import { InvalidArgumentError } from "commander";
import { UsageError } from "../util/errors.js";
import { parseInstant } from "../util/time.js";

/** A commander parser for a whole number from min to max; `name` is the flag in the message. */
export function intArg(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `${name} must be a whole number from ${min} to ${max}`,
      );
    }
    return n;
  };
}

export interface RangeFlags {
  from?: string;
  to?: string;
}

/** A parsed --from/--to: no fromMs without --from; nowMs is when it was parsed. */
export interface ParsedRange {
  fromMs?: number;
  toMs?: number;
  nowMs: number;
}

/** --from/--to of a sync, checked before anything is opened. */
export function parseRange(o: RangeFlags): ParsedRange {
  const nowMs = Date.now();
  if (o.to !== undefined && o.from === undefined) {
    throw new UsageError("--to needs --from", {
      hint: "give the start of the range with --from",
    });
  }
  const fromMs =
    o.from === undefined ? undefined : parseInstant(o.from, "--from", nowMs);
  const toMs =
    o.to === undefined ? undefined : parseInstant(o.to, "--to", nowMs);
  if (fromMs !== undefined && toMs !== undefined && fromMs >= toMs) {
    throw new UsageError(`--from ${o.from} is not before --to ${o.to}`, {
      hint: "swap the two dates",
    });
  }
  if (fromMs !== undefined && fromMs > nowMs)
    throw new UsageError(`--from ${o.from} is in the future`);
  return {
    ...(fromMs !== undefined ? { fromMs } : {}),
    ...(toMs !== undefined ? { toMs } : {}),
    nowMs,
  };
}
