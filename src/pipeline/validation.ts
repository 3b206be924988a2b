import type { z } from "zod";

/** A zod error as one readable line: "startTime: expected an RFC 3339 timestamp; id: …". */
export function validationReason(error: z.ZodError | undefined): string {
  if (!error) return "invalid record";
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.map(String).join(".") || "record"}: ${i.message}`)
    .join("; ");
}
