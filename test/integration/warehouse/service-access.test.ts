// The read access of a service on the embedded engine, in one process: the HTTP front opens
// sessions on the data directory the service's client has open and sees its writes at once;
// through the token it only reads; the service file and how it is found (own, stale, invalid).
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Config } from "../../../src/config/index.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import {
  findService,
  removeServiceFile,
  serviceClient,
  serviceFilePath,
  type ServiceRecord,
} from "../../../src/warehouse/service-access.js";
import {
  startReadAccess,
  type ReadAccess,
} from "../../../src/http-front/index.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";

let config: Config;
let w: Warehouse;
let reads: ReadAccess;
let dataDir: string;

beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
  dataDir = w.location;
  reads = await startReadAccess({
    dataDir,
    database: w.database,
    host: "127.0.0.1",
    port: 0,
    maxExecutionTimeS: 5,
    maxMemoryUsage: 2 ** 30,
    maxResultRows: 1_000_000,
    maxResultBytes: 2 ** 30,
  });
});

afterAll(async () => {
  await reads?.close();
  await w?.close();
});

function record(): ServiceRecord {
  return JSON.parse(
    readFileSync(serviceFilePath(dataDir), "utf8"),
  ) as ServiceRecord;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "0"]);
  if (r.pid === undefined) throw new Error("no child pid");
  return r.pid;
}

describe("read access beside the service's own engine", () => {
  it("reads what the service's client wrote a moment ago, and nothing can be written through it", async () => {
    const rec = record();
    expect(rec.url).toBe(reads.url);
    expect(rec.pid).toBe(process.pid);
    expect(statSync(serviceFilePath(dataDir)).mode & 0o777).toBe(0o600);

    const reader = serviceClient(rec, w.database, 10_000);
    try {
      await w.client.command({
        query: `INSERT INTO \`${w.database}\`.checkpoints (stream, position) VALUES ('probe', now64(3))`,
      });
      const [row] = await (
        await reader.query({
          query: "SELECT count() AS n FROM checkpoints WHERE stream = 'probe'",
          format: "JSONEachRow",
        })
      ).json<{ n: string | number }>();
      expect(Number(row?.n)).toBe(1);

      await expect(
        reader.command({
          query: "INSERT INTO checkpoints (stream) VALUES ('through-reads')",
        }),
      ).rejects.toThrow(/readonly/i);
      await expect(
        reader.command({ query: "CREATE TABLE t (x UInt8) ENGINE = Memory" }),
      ).rejects.toThrow(/readonly/i);
      await expect(
        reader.query({
          query: "SELECT 1",
          clickhouse_settings: { max_memory_usage: "0" },
        }),
      ).rejects.toThrow(/readonly/i);
      // A wrong token is refused.
      const stranger = serviceClient(
        { ...rec, token: "x".repeat(rec.token.length) },
        w.database,
        10_000,
      );
      try {
        await expect(stranger.query({ query: "SELECT 1" })).rejects.toThrow(
          /Authentication failed/,
        );
      } finally {
        await stranger.close();
      }
    } finally {
      await reader.close();
    }
  });

  it("the process's own file is no other service: read access opens the engine in process and keeps the file", async () => {
    expect(await findService(dataDir)).toEqual({ state: "none" });
    const again = await openWarehouse(config, { access: "read" });
    try {
      expect(again.kind).toBe("embedded");
      expect(again.service).toBeUndefined();
    } finally {
      await again.close();
    }
    expect(record().pid).toBe(process.pid);
  });
});

describe("the service file", () => {
  const file = () => serviceFilePath(dataDir);
  let kept: string;
  beforeAll(() => {
    kept = readFileSync(file(), "utf8");
  });
  afterAll(() => {
    writeFileSync(file(), kept, { mode: 0o600 });
  });

  it("of a process that is gone: removed, the directory is free", async () => {
    writeFileSync(file(), JSON.stringify({ ...record(), pid: deadPid() }), {
      mode: 0o600,
    });
    expect(await findService(dataDir)).toEqual({ state: "none" });
    expect(existsSync(file())).toBe(false);
  });

  it("unreadable as a record: removed", async () => {
    writeFileSync(file(), "{ not json", { mode: 0o600 });
    expect(await findService(dataDir)).toEqual({ state: "none" });
    expect(existsSync(file())).toBe(false);
  });

  it("of a live process whose URL takes the probe and never answers: silent, given up by the probe, and kept", async () => {
    // A server that holds every request open: only the probe's own timeout ends the wait.
    const held: IncomingMessage[] = [];
    const closed: IncomingMessage[] = [];
    const silentServer = createServer((req) => {
      held.push(req);
      req.socket.once("close", () => closed.push(req));
    });
    silentServer.listen(0, "127.0.0.1");
    await once(silentServer, "listening");
    const { port } = silentServer.address() as AddressInfo;
    // The parent of this test process is alive; the URL is the silent server's.
    const silent = {
      url: `http://127.0.0.1:${port}`,
      token: "some-token-value",
      pid: process.ppid,
      startedAt: new Date().toISOString(),
    };
    writeFileSync(file(), JSON.stringify(silent), { mode: 0o600 });
    try {
      expect(await findService(dataDir, 500)).toEqual({
        state: "silent",
        record: silent,
      });
      // The probe reached the server, which never answered: the probe closed the connection.
      expect(held).toHaveLength(1);
      await vi.waitFor(() => expect(closed).toHaveLength(1));
    } finally {
      silentServer.closeAllConnections();
      silentServer.close();
    }
    expect(existsSync(file())).toBe(true);
    // Only the process that wrote it removes it.
    removeServiceFile(dataDir, process.pid);
    expect(existsSync(file())).toBe(true);
    removeServiceFile(dataDir, process.ppid);
    expect(existsSync(file())).toBe(false);
  });
});
