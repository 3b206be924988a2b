// A logger that writes into memory, to assert on log lines (and on what they must not hold).
import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../src/util/logger.js";

export function memoryLogger(
  secrets: readonly string[] = [],
  level: "info" | "debug" | "trace" = "debug",
): {
  logger: Logger;
  lines: string[];
  text: () => string;
} {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString("utf8"));
      cb();
    },
  });
  const logger = createLogger({ level, format: "json", secrets, destination });
  return { logger, lines, text: () => lines.join("") };
}
