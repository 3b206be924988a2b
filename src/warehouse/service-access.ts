// Read access to the embedded engine while `sessionhouse run` holds it, the reading side. The
// engine allows one process per data directory, so the service serves its own engine, read-only,
// through the ClickHouse HTTP front on loopback, and leaves the URL and a random token in a file
// of the data directory (mode 0600; the serving side is src/http-front/read-access.ts). Read-only
// commands of other processes find the service through that file and query it as a ClickHouse
// server; commands that write are refused while it runs.
import { readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { ClickHouseLogLevel, createClient } from "@clickhouse/client";
import { rememberSecret } from "../util/logger.js";
import { processAlive } from "../util/process.js";

/** The file in the data directory that tells other processes where the service serves reads. */
export const SERVICE_FILE = ".sessionhouse-service.json";

/**
 * What the service file holds. Both tokens are secrets, passwords of the read access: `token`
 * is the owner's commands' (whole results), `readerToken` Grafana's and other readers' (results
 * capped in rows and bytes). A file written before the readers' token existed has none.
 */
export interface ServiceRecord {
  url: string;
  token: string;
  readerToken?: string;
  pid: number;
  startedAt: string;
}

export function serviceFilePath(dataDir: string): string {
  return join(dataDir, SERVICE_FILE);
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
      return {
        url: v.url,
        token: v.token,
        ...(typeof v.readerToken === "string"
          ? { readerToken: v.readerToken }
          : {}),
        pid: v.pid,
        startedAt: v.startedAt,
      };
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
  if (record.readerToken !== undefined) rememberSecret(record.readerToken);
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
    // No compression: on loopback it saves nothing, and asking for a compressed answer is the
    // setting enable_http_compression, which a readonly front refuses as a readonly = 1 server
    // does (src/warehouse/reader-settings.ts).
    compression: { request: false, response: false },
    log: { level: ClickHouseLogLevel.OFF },
  });
}
