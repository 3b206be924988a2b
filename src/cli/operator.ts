// Who a command that records an operator's decision (hold, windows skip) names, and why.
import { userInfo } from "node:os";
import { UsageError } from "../util/errors.js";

/** The flags of a recorded decision: --reason (required) and --by. */
export interface DecisionFlags {
  reason: string;
  by?: string;
}

/** Who made a decision and why; a usage error (with `hint`) when the reason says nothing. */
export function decision(
  o: DecisionFlags,
  hint: string,
): { by: string; reason: string } {
  const reason = o.reason.trim();
  if (reason === "")
    throw new UsageError("--reason must not be empty", { hint });
  return { by: operatorName(o.by), reason };
}

/** `--by` when given, else the OS user running the command. */
function operatorName(by: string | undefined): string {
  return by?.trim() || osUser();
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? "unknown";
  }
}
