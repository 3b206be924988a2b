// Structured logs (pino): JSON lines on stdout, readable output on a terminal. Every line passes
// through a scrubber that replaces configured secrets wherever they appear, so a secret that
// leaks into an error message or a URL still never reaches the log.
import { pino, type Logger, type LevelWithSilent } from "pino";
import pretty from "pino-pretty";
import { endQuietlyOnBrokenPipe } from "./broken-pipe.js";

export type { Logger };

export const REDACTED = "[REDACTED]";

/** The password of a URL's user info (`https://user:password@host`), wherever a URL is written. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@"']*:)([^\s/@"']+)@/gi;

/**
 * Every secret a logger of this process was given, for output that has no logger of its own
 * (the CLI's last error line): the key may come from a file or a config file, not only from
 * the environment variable the CLI could read up front.
 */
const knownSecrets = new Set<string>();

export function rememberedSecrets(): string[] {
  return [...knownSecrets];
}

/** Adds a secret this process learned after its loggers were made (a token read from a file). */
export function rememberSecret(secret: string): void {
  if (secret.length >= 4) knownSecrets.add(secret);
}

export function scrubber(secrets: readonly string[]): (text: string) => string {
  const list = secrets.filter((s) => s.length >= 4);
  // Secrets also appear JSON-escaped inside a serialized line.
  const needles = [
    ...new Set(list.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)])),
  ];
  return (text) => {
    let out = text;
    for (const n of needles)
      if (out.includes(n)) out = out.split(n).join(REDACTED);
    // A CLICKHOUSE_URL with credentials in it carries a secret nobody listed.
    if (out.includes("@")) out = out.replace(URL_PASSWORD, `$1${REDACTED}@`);
    return out;
  };
}

export interface LoggerOptions {
  level?: LevelWithSilent;
  format?: "auto" | "json" | "pretty";
  secrets?: readonly string[];
  /** Destination for tests; defaults to stdout. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  for (const s of options.secrets ?? []) knownSecrets.add(s);
  const scrub = scrubber(options.secrets ?? []);
  const usePretty =
    options.format === "pretty" ||
    (options.format !== "json" && !options.destination && process.stdout.isTTY);
  const stream =
    options.destination ??
    (usePretty
      ? pretty({ sync: true, colorize: true, translateTime: "SYS:HH:MM:ss.l" })
      : pino.destination({ sync: true }));
  if (!options.destination) endQuietlyOnBrokenPipe(stream);
  return pino(
    {
      level: options.level ?? "info",
      base: { service: "sessionhouse" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          "apiKey",
          "password",
          "*.apiKey",
          "*.password",
          "headers['x-api-key']",
        ],
        censor: REDACTED,
      },
      hooks: { streamWrite: scrub },
    },
    stream,
  );
}
