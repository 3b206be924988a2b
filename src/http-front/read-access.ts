// Read access to the embedded engine while `sessionhouse run` holds it, the serving side: the
// service serves its own engine read-only through the HTTP front on loopback and writes the
// service file that other processes read (src/warehouse/service-access.ts, the reading side).
import { randomBytes } from "node:crypto";
import { rememberSecret } from "../util/logger.js";
import { writePrivateFileWhole } from "../util/private-files.js";
import {
  removeServiceFile,
  serviceFilePath,
  type ServiceRecord,
} from "../warehouse/index.js";
import { startHttpFront } from "./server.js";

/** A fresh token: 32 random bytes, base64url (no character that needs escaping anywhere). */
export function newReadToken(): string {
  return randomBytes(32).toString("base64url");
}

interface ReadAccessOptions {
  /** The data directory the service's engine has open. */
  dataDir: string;
  /** The warehouse's database: the one database (with a few system tables) a reader may read. */
  database: string;
  host: string;
  port: number;
  /** Cap on one query's execution time, in seconds. */
  maxExecutionTimeS: number;
  /** Cap on one query's memory, in bytes. */
  maxMemoryUsage: number;
  /** Cap on the rows of one reader's result: a larger one fails, saying so. */
  maxResultRows: number;
  /** Cap on the bytes (in memory) of one reader's result: a larger one fails, saying so. */
  maxResultBytes: number;
  /** The owner's token (default: a new one); give it when the logger must know it as a secret first. */
  token?: string;
  /** The readers' token (default: a new one), the same way. */
  readerToken?: string;
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
 * Serves the data directory read-only (readonly = 1, the caps on time and memory, a token
 * required: the owner's, whose commands read whole results, or the readers', whose results are
 * capped in rows and bytes and who read only the warehouse's database and the system tables that
 * list it) and writes the service file. The front opens its own engine sessions on the same
 * path: in one process, sessions on the data directory the engine has open share that engine.
 */
export async function startReadAccess(
  options: ReadAccessOptions,
): Promise<ReadAccess> {
  const token = options.token ?? newReadToken();
  const readerToken = options.readerToken ?? newReadToken();
  rememberSecret(token);
  rememberSecret(readerToken);
  const front = await startHttpFront({
    path: options.dataDir,
    host: options.host,
    port: options.port,
    auth: { token, readerToken },
    readonly: true,
    maxExecutionTimeS: options.maxExecutionTimeS,
    maxMemoryUsage: options.maxMemoryUsage,
    maxResultRows: options.maxResultRows,
    maxResultBytes: options.maxResultBytes,
    readerDatabases: [options.database],
  });
  const file = serviceFilePath(options.dataDir);
  try {
    // A reader never sees half a file, nor the token readable by others.
    const record: ServiceRecord = {
      url: front.url,
      token,
      readerToken,
      pid: process.pid,
      startedAt: new Date().toISOString(),
    };
    writePrivateFileWhole(file, `${JSON.stringify(record)}\n`, {
      groupReadable: options.groupReadable ?? false,
    });
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
