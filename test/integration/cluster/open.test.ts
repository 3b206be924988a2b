// Opening a ClickHouse server in a cluster mode: the server is asked whether it is ClickHouse
// Cloud and whether it knows the configured cluster, before any migration runs. The server is
// the HTTP front over a real engine, which knows no cluster.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startHttpFront,
  type HttpFront,
} from "../../../src/http-front/index.js";
import { openWarehouse } from "../../../src/warehouse/client.js";
import { SinkError } from "../../../src/warehouse/errors.js";
import { testConfig } from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let front: HttpFront;
beforeAll(async () => {
  front = await startHttpFront({
    path: mkdtempSync(join(testTmpDir(), "cluster-open-")),
  });
});
afterAll(async () => {
  await front.close();
});

describe("opening a server in a cluster mode", () => {
  it("takes a server that is not ClickHouse Cloud and has no cluster configured as one server", async () => {
    const w = await openWarehouse(
      await testConfig({ CLICKHOUSE_URL: front.url }),
    );
    expect(w.cluster).toEqual({ kind: "single" });
    await w.close();
  });

  it("refuses a cluster the server does not know, before creating anything", async () => {
    const config = await testConfig({
      CLICKHOUSE_URL: front.url,
      CLICKHOUSE_CLUSTER: "sessionhouse_cluster",
      CLICKHOUSE_REPLICATED: "true",
    });
    const err = await openWarehouse(config).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).code).toBe("CLUSTER_UNKNOWN");
    expect((err as SinkError).message).toContain("sessionhouse_cluster");
    expect((err as SinkError).hint).toContain("remote_servers");
    const rs = await fetch(
      `${front.url}/?query=${encodeURIComponent(`SELECT count() FROM system.databases WHERE name = '${config.clickhouse.database}'`)}`,
    );
    expect((await rs.text()).trim()).toBe("0");
  });
});
