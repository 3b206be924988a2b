// Grafana pointed at a running service on the embedded default: every dashboard's variables and
// panels, expanded as the plugin expands them, run through the service's read access (HTTP,
// the readers' token as password, readonly) and answer what the engine answers in process.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  serviceClient,
  serviceFilePath,
  type ServiceRecord,
} from "../../../src/warehouse/service-access.js";
import {
  startReadAccess,
  type ReadAccess,
} from "../../../src/http-front/index.js";
import { loadDashboards } from "../../helpers/dashboards.js";
import {
  demoWarehouse,
  type DemoWarehouse,
} from "../../helpers/demo-fixture.js";
import {
  demoRange,
  panelSql,
  resolveVariables,
  run,
  useDatabase,
} from "../../helpers/panels.js";

const dashboards = loadDashboards();
let demo: DemoWarehouse;
let reads: ReadAccess;
let viaService: Warehouse;

beforeAll(async () => {
  demo = await demoWarehouse();
  await useDatabase(demo.warehouse);
  reads = await startReadAccess({
    dataDir: demo.warehouse.location,
    database: demo.warehouse.database,
    host: "127.0.0.1",
    port: 0,
    maxExecutionTimeS: 30,
    maxMemoryUsage: 2 ** 30,
    maxResultRows: 1_000_000,
    maxResultBytes: 2 ** 30,
  });
  // What Grafana is given: the URL and the readers' token of the service file (results capped,
  // the warehouse's database and the system tables that list it, nothing else).
  const record = JSON.parse(
    readFileSync(serviceFilePath(demo.warehouse.location), "utf8"),
  ) as ServiceRecord;
  const client = serviceClient(
    { ...record, token: record.readerToken ?? "" },
    demo.warehouse.database,
    30_000,
  );
  viaService = {
    client,
    reader: client,
    database: demo.warehouse.database,
    kind: "server",
    location: record.url,
    close: () => client.close(),
  };
}, 120_000);

afterAll(async () => {
  await viaService?.close();
  await reads?.close();
  await demo?.close();
});

describe.each(dashboards)(
  "$file through the service's read access",
  ({ dashboard }) => {
    it("resolves every variable and runs every panel, answering as the engine does", async () => {
      const range = demoRange(dashboard);
      const direct = await resolveVariables(demo.warehouse, dashboard, {
        range,
      });
      const served = await resolveVariables(viaService, dashboard, { range });
      expect(served.texts).toEqual(direct.texts);
      for (const panel of dashboard.panels) {
        for (const sql of panelSql(panel, range, direct.variables)) {
          const a = await run(demo.warehouse, sql);
          const b = await run(viaService, sql);
          expect(b.columns, panel.title).toEqual(a.columns);
          // Panels that read the wall clock may move between the two reads.
          if (/now(64)?\(|today\(/i.test(sql))
            expect(b.rows.length, panel.title).toBe(a.rows.length);
          else expect(b.rows, panel.title).toEqual(a.rows);
        }
      }
    });
  },
);

it("refuses a write through the same access", async () => {
  await expect(
    viaService.client.command({ query: "TRUNCATE TABLE sessions" }),
  ).rejects.toThrow(
    /readonly|read-only|Cannot execute query in readonly mode/i,
  );
});
