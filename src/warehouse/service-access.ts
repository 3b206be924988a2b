// Read access to the embedded engine while `sessionhouse run` holds it. The engine allows one
// process per data directory, so the service serves its own engine, read-only, through the
// ClickHouse HTTP front on loopback, and leaves the URL and a random token in a file of the data
// directory (mode 0600). Read-only commands of other processes find the service through that
// file and query it as a ClickHouse server; commands that write are refused while it runs.
import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, rmSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { ClickHouseLogLevel, createClient } from "@clickhouse/client";
import { rememberSecret } from "../util/logger.js";
import { writePrivateFile } from "../util/private-files.js";
import { processAlive } from "../util/process.js";
import { startHttpFront } from "./http-front/index.js";

/** The file in the data directory that tells other processes where the service serves reads. */
export const SERVICE_FILE = ".sessionhouse-service.json";

/** What the service file holds. `token` is a secret: the password of the read access. */
export interface ServiceRecord {
  url: string;
  token: string;
  pid: number;
  startedAt: string;
}

export function serviceFilePath(dataDir: string): string {
  return join(dataDir, SERVICE_FILE);
}

/** A fresh token: 32 random bytes, base64url (no character that needs escaping anywhere). */
export function newReadToken(): string {
  return randomBytes(32).toString("base64url");
}

export interface ReadAccessOptions {
  /** The data directory the service's engine has open. */
  dataDir: string;
  host: string;
  port: number;
  /** Cap on one query's execution time, in seconds. */
  maxExecutionTimeS: number;
  /** Cap on one query's memory, in bytes. */
  maxMemoryUsage: number;
  /** The token (default: a new one); give it when the logger must know it as a secret first. */
  token?: string;
  /** The service file 0640 instead of 0600, as the data directory is shared (files.groupReadable). */
  groupReadable?: boolean;
}

export interface ReadAccess {
  /** `http://host:port`. */
  readonly url: string;
  /** The service file. */
  readonly file: string;
  /** Removes the service file, then stops serving (waiting for the requests under way). */
  close(): Promise<void>;
}

/**
 * Serves the data directory read-only (readonly = 1, the caps on time and memory, the token
 * required) and writes the service file. The front opens its own engine sessions on the same
 * path: in one process, sessions on the data directory the engine has open share that engine.
 */
export async function startReadAccess(
  options: ReadAccessOptions,
): Promise<ReadAccess> {
  const token = options.token ?? newReadToken();
  rememberSecret(token);
  const front = await startHttpFront({
    path: options.dataDir,
    host: options.host,
    port: options.port,
    auth: { token },
    readonly: true,
    maxExecutionTimeS: options.maxExecutionTimeS,
    maxMemoryUsage: options.maxMemoryUsage,
  });
  const file = serviceFilePath(options.dataDir);
  try {
    writeServiceFile(
      file,
      {
        url: front.url,
        token,
        pid: process.pid,
        startedAt: new Date().toISOString(),
      },
      options.groupReadable ?? false,
    );
  } catch (err) {
    await front.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    url: front.url,
    file,
    close() {
      closing ??= (async () => {
        removeServiceFile(options.dataDir, process.pid);
        await front.close();
      })();
      return closing;
    },
  };
}

/** Written whole or not at all: a reader never sees half a file, nor the token readable by others. */
function writeServiceFile(
  file: string,
  record: ServiceRecord,
  groupReadable: boolean,
): void {
  const temporary = `${file}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  writePrivateFile(temporary, `${JSON.stringify(record)}\n`, {
    flag: "wx",
    groupReadable,
  });
  renameSync(temporary, file);
}

/** Removes the service file when it is the one process `pid` wrote. */
export function removeServiceFile(dataDir: string, pid: number): void {
  const file = serviceFilePath(dataDir);
  const record = readServiceFile(file);
  if (record === "absent") return;
  if (record !== "invalid" && record.pid !== pid) return;
  rmSync(file, { force: true });
}

function readServiceFile(file: string): ServiceRecord | "absent" | "invalid" {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT"
      ? "absent"
      : "invalid";
  }
  try {
    const v = JSON.parse(text) as Partial<Record<keyof ServiceRecord, unknown>>;
    if (
      typeof v.url === "string" &&
      typeof v.token === "string" &&
      typeof v.pid === "number" &&
      Number.isInteger(v.pid) &&
      v.pid > 0 &&
      typeof v.startedAt === "string"
    )
      return { url: v.url, token: v.token, pid: v.pid, startedAt: v.startedAt };
  } catch {
    // Not JSON: treated as a file nobody can use.
  }
  return "invalid";
}

/**
 * What the service file of a data directory says:
 * - `none`: no service of another process (no file; a file of this process; a stale one, removed);
 * - `running`: another process's service answers with its token;
 * - `silent`: the process is alive but its read access did not answer in time.
 */
export type ServiceLookup =
  | { state: "none" }
  | { state: "running"; record: ServiceRecord }
  | { state: "silent"; record: ServiceRecord };

/** Default wait for the service to answer: short, so that a stale file never makes a command hang. */
export const SERVICE_PROBE_TIMEOUT_MS = 2_000;

export async function findService(
  dataDir: string,
  timeoutMs = SERVICE_PROBE_TIMEOUT_MS,
): Promise<ServiceLookup> {
  const file = serviceFilePath(dataDir);
  const record = readServiceFile(file);
  if (record === "absent") return { state: "none" };
  if (record === "invalid") {
    rmSync(file, { force: true });
    return { state: "none" };
  }
  // This process's own service: its engine is open here, and opening it again is allowed.
  if (record.pid === process.pid) return { state: "none" };
  if (!processAlive(record.pid)) {
    removeServiceFile(dataDir, record.pid);
    return { state: "none" };
  }
  rememberSecret(record.token);
  return (await answers(record, timeoutMs))
    ? { state: "running", record }
    : { state: "silent", record };
}

/** True when the URL runs `SELECT 1` with the token within the timeout; never throws. */
function answers(record: ServiceRecord, timeoutMs: number): Promise<boolean> {
  let url: URL;
  try {
    url = new URL("/", record.url);
  } catch {
    return Promise.resolve(false);
  }
  if (url.protocol !== "http:") return Promise.resolve(false);
  url.searchParams.set("query", "SELECT 1");
  return new Promise((resolve) => {
    const req = http.get(
      url,
      {
        agent: false,
        timeout: timeoutMs,
        headers: { Authorization: `Bearer ${record.token}` },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (body.length < 64) body += chunk;
        });
        res.on("end", () =>
          resolve(res.statusCode === 200 && body.trim() === "1"),
        );
        res.on("error", () => resolve(false));
        res.on("close", () => resolve(false));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.on("close", () => resolve(false));
    // Wall clock, not only socket idleness: a peer that trickles bytes must not hold us either.
    setTimeout(() => req.destroy(), timeoutMs).unref();
  });
}

/** A @clickhouse/client for the service's read access: the token as the password, no settings. */
export function serviceClient(
  record: ServiceRecord,
  database: string,
  requestTimeoutMs: number,
) {
  return createClient({
    url: record.url,
    username: "default",
    password: record.token,
    database,
    request_timeout: requestTimeoutMs,
    // Response compression only: the front refuses settings of readonly requests, and
    // enable_http_compression steers its HTTP layer, which it allows.
    compression: { request: false, response: true },
    log: { level: ClickHouseLogLevel.OFF },
  });
}
