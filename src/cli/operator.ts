// Who a command that records an operator's decision (hold, windows skip) names.
import { userInfo } from "node:os";

/** `--by` when given, else the OS user running the command. */
export function operatorName(by: string | undefined): string {
  return by?.trim() || osUser();
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? "unknown";
  }
}
