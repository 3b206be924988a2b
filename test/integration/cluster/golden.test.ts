// Every statement of every migration, in every cluster mode, as the engine parses it
// (formatQuery), against the golden files under test/integration/cluster/golden/<mode>/. A new or changed
// migration has no or another golden file: regenerate them with `npm run cluster:golden` and
// read the diff before committing it.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import {
  CLOUD,
  SINGLE,
  type ClusterMode,
} from "../../../src/warehouse/cluster.js";
import { readMigrations, renderSql } from "../../../src/warehouse/migrate.js";
import { testConfig } from "../../helpers/warehouse.js";

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), "golden");
const UPDATE = process.env.UPDATE_CLUSTER_GOLDEN === "1";
const REGENERATE = "npm run cluster:golden";

const cluster = (replicated: boolean, distributed: boolean): ClusterMode => ({
  kind: "cluster",
  name: "sessionhouse_cluster",
  replicated,
  distributed,
  keeperPath: "/clickhouse/tables",
});

export const MODES: Record<string, ClusterMode> = {
  single: SINGLE,
  cluster: cluster(false, false),
  replicated: cluster(true, false),
  distributed: cluster(true, true),
  cloud: CLOUD,
};

/** Every migration file, by the name of its golden file. */
function sources(): { name: string; text: string }[] {
  return readMigrations().map((f) => ({ name: f.name, text: f.text }));
}

let w: Warehouse;
beforeAll(async () => {
  // Only the engine's parser is used: the test's database need not exist.
  w = await openWarehouse(await testConfig(), {
    access: "read",
    allowMissingDatabase: true,
  });
});
afterAll(async () => {
  await w.close();
});

async function formatted(statement: string): Promise<string> {
  const rs = await w.client.query({
    query: "SELECT formatQuery({q:String}) AS f",
    query_params: { q: statement },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ f: string }>();
  return row?.f ?? "";
}

describe("migrations rendered for every cluster mode", () => {
  for (const [mode, clusterMode] of Object.entries(MODES)) {
    it(`${mode}: every statement parses and matches its golden file`, async () => {
      const dir = join(GOLDEN, mode);
      if (UPDATE) {
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir, { recursive: true });
      }
      const expected = new Set<string>();
      for (const source of sources()) {
        const statements = renderSql(source.text, {
          db: "sessionhouse",
          mode: clusterMode,
        });
        const text = (await Promise.all(statements.map(formatted)))
          .map((s) => `${s};\n`)
          .join("\n");
        const file = join(dir, source.name);
        expected.add(source.name);
        if (UPDATE) {
          writeFileSync(file, text);
          continue;
        }
        if (!existsSync(file))
          expect.fail(
            `${mode}/${source.name} has no golden file: run \`${REGENERATE}\` and check the new file`,
          );
        expect(
          text,
          `${mode}/${source.name} differs from its golden file: run \`${REGENERATE}\` and check the diff`,
        ).toBe(readFileSync(file, "utf8"));
      }
      const stale = readdirSync(dir).filter((f) => !expected.has(f));
      expect(
        stale,
        `golden files without a migration: run \`${REGENERATE}\``,
      ).toEqual([]);
    });
  }
});
