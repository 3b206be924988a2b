// Structured logs (pino): JSON lines on stdout, readable output on a terminal. Every line passes
// through a scrubber that replaces configured secrets wherever they appear, so a secret that
// leaks into an error message or a URL still never reaches the log.
//
// The rule is the same for every secret, whatever its length: every occurrence is replaced.
// A short secret matches ordinary text too (a one-character secret is in most words); that costs
// readability, never the secret, and the configuration warns about it (shortSecrets in
// src/config/load.ts). A log line is scrubbed value by value, so it stays one valid JSON object
// whatever the secret holds (a `"`, a digit, a `{`): every string value loses the secret; the
// field names, the numbers and the line's envelope (time, hostname, service) are written by this
// process from its own state, never from data, and are kept as they are.
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
  if (secret !== "") knownSecrets.add(secret);
}

/** The forms a secret takes in text: as it is, and escaped inside a JSON string. */
function needlesOf(secrets: readonly string[]): string[] {
  const forms = secrets
    .filter((s) => s !== "")
    .flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]);
  // Longest first: of two secrets where one holds the other, the whole longer one goes.
  return [...new Set(forms)].sort((a, b) => b.length - a.length);
}

/** Replaces every occurrence of each secret in one pass (never inside a marker it wrote). */
export function scrubber(secrets: readonly string[]): (text: string) => string {
  const needles = needlesOf(secrets);
  const pattern =
    needles.length === 0
      ? undefined
      : new RegExp(
          needles
            .map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
            .join("|"),
          "g",
        );
  return (text) => {
    let out = pattern ? text.replace(pattern, REDACTED) : text;
    // A CLICKHOUSE_URL with credentials in it carries a secret nobody listed.
    if (out.includes("@")) out = out.replace(URL_PASSWORD, `$1${REDACTED}@`);
    return out;
  };
}

/** Top-level members pino writes from the process's own state; no data reaches them. */
const ENVELOPE = new Set(["level", "time", "pid", "hostname", "service"]);

/**
 * The scrubber of serialized log lines: a line holding no secret passes as it is; one that
 * holds one is parsed and every string value scrubbed, so that it stays valid JSON.
 */
function lineScrubber(secrets: readonly string[]): (line: string) => string {
  const scrub = scrubber(secrets);
  return (line) => {
    if (scrub(line) === line) return line;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return scrub(line);
    }
    if (typeof parsed !== "object" || parsed === null) return scrub(line);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(parsed))
      out[k] = ENVELOPE.has(k) ? v : scrubValues(v, scrub);
    return `${JSON.stringify(out)}\n`;
  };
}

function scrubValues(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === "string") return scrub(value);
  if (Array.isArray(value)) return value.map((v) => scrubValues(v, scrub));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrubValues(v, scrub);
    return out;
  }
  return value;
}

export interface LoggerOptions {
  level?: LevelWithSilent;
  format?: "auto" | "json" | "pretty";
  secrets?: readonly string[];
  /** Destination for tests; defaults to stdout. */
  destination?: NodeJS.WritableStream;
}

/**
 * How a log line reads on a terminal: one line per event (its fields after the message, not one
 * line each), the local time, and not the process id and host, the same on every line.
 */
export const PRETTY_OPTIONS = {
  sync: true,
  singleLine: true,
  translateTime: "SYS:HH:MM:ss.l",
  ignore: "pid,hostname,service",
} as const;

export function createLogger(options: LoggerOptions = {}): Logger {
  for (const s of options.secrets ?? []) rememberSecret(s);
  const scrub = lineScrubber(options.secrets ?? []);
  const usePretty =
    options.format === "pretty" ||
    (options.format !== "json" && !options.destination && process.stdout.isTTY);
  const stream =
    options.destination ??
    (usePretty
      ? pretty({ ...PRETTY_OPTIONS, colorize: true })
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
