// A `sessionhouse migrate` killed (SIGKILL) part way through the migrations is completed by the
// next one: the schema equals that of a clean migrate. The kill follows the log line of one
// file applied, so it lands in the statements of the files after it.
import { describe, expect, it } from "vitest";
import { openWarehouse } from "../../../src/warehouse/client.js";
import { migrate } from "../../../src/warehouse/migrate.js";
import { cleanEnv, privateCli, runCli, startCli } from "../../helpers/cli.js";
import { onDatabase, schemaOf } from "../../helpers/schema-snapshot.js";
import {
  freshDatabaseName,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";

const cli = privateCli();
const KILL_AFTER = "0021_technology_rollups.sql";

describe("a migrate killed part way", () => {
  it("is completed by the next migrate", async () => {
    const database = freshDatabaseName();
    const env = cleanEnv({
      SESSIONHOUSE_DATA_DIR: testDataDir(),
      CLICKHOUSE_DATABASE: database,
      CLICKHOUSE_URL: process.env.CLICKHOUSE_URL,
      SESSIONHOUSE_LOG_LEVEL: "info",
      SESSIONHOUSE_LOG_FORMAT: "json",
    });
    const run = startCli(cli(), ["migrate"], env);
    // The log lines are parsed as they arrive (startCli reads stdout first).
    const logged = () => run.logs.some((l) => l.migration === KILL_AFTER);
    await new Promise<void>((resolve, reject) => {
      run.child.stdout?.on("data", () => {
        if (logged()) resolve();
      });
      run.child.once("exit", () => {
        reject(new Error("migrate ended before it was killed"));
      });
    });
    run.child.kill("SIGKILL");
    const killed = await run.result;
    expect(killed.signal).toBe("SIGKILL");

    const again = await runCli(cli(), ["migrate"], env);
    expect(again.code, again.stderr).toBe(0);

    const w = await openWarehouse(await testConfig({}, database));
    try {
      const clean = onDatabase(w, freshDatabaseName());
      await migrate(clean);
      expect(await schemaOf(w)).toEqual(await schemaOf(clean));
    } finally {
      await w.close();
    }
  });
});
