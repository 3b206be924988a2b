// The exporter refuses a ClickHouse where "an insert that returned has stored its rows" cannot
// be made to hold: a server whose profile does not let inserts set async_insert=0 and
// insert_deduplicate=1 (here a readonly user, served over the HTTP interface by the front over
// a real engine) is refused at open, with the reason, before anything is read or written.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openWarehouse } from "../../../src/warehouse/client.js";
import { SinkError } from "../../../src/warehouse/errors.js";
import {
  startHttpFront,
  type HttpFront,
} from "../../../src/http-front/index.js";
import { loadSessionClass } from "../../../src/http-front/engine.js";
import { migrate } from "../../../src/warehouse/migrate.js";
import { testConfig } from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let readonlyFront: HttpFront;
let writableFront: HttpFront;

beforeAll(async () => {
  const path = mkdtempSync(join(testTmpDir(), "sessionhouse-pinned-"));
  writableFront = await startHttpFront({ path });
  // Both fronts serve the same data directory (one engine per process): only the user differs.
  const Session = await loadSessionClass();
  readonlyFront = await startHttpFront({
    engine: new Session(path),
    readonly: true,
  });
});
afterAll(async () => {
  await readonlyFront.close();
  await writableFront.close();
});

describe("a server that does not let inserts pin their settings", () => {
  it("is refused at open with SETTINGS_NOT_PINNABLE, naming the settings and what to change", async () => {
    const config = await testConfig({ CLICKHOUSE_URL: readonlyFront.url });
    const err = await openWarehouse(config).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    const e = err as SinkError;
    expect(e.code).toBe("SETTINGS_NOT_PINNABLE");
    expect(e.message).toContain("async_insert=0, insert_deduplicate=1");
    expect(e.message).toMatch(/readonly/i);
    expect(e.hint).toMatch(/readonly=1/);
  });

  it("is accepted when the user may set them; a database that does not exist yet is created and migrated", async () => {
    const config = await testConfig({ CLICKHOUSE_URL: writableFront.url });
    const w = await openWarehouse(config);
    try {
      expect(w.kind).toBe("server");
      const result = await migrate(w, { retentionDays: 0 });
      expect(result.applied.length).toBeGreaterThan(5);
    } finally {
      await w.close();
    }
  });
});
