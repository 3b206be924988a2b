// Each setting a reader may set (src/warehouse/reader-settings.ts), against the engine's own
// description of it in system.settings: it exists, and neither its name nor its description
// speaks of a file, a path, a schema, a directory or a URL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { READER_SETTINGS } from "../../../src/warehouse/reader-settings.js";
import { openWarehouse } from "../../../src/warehouse/client.js";
import { testConfig } from "../../helpers/warehouse.js";

let w: Warehouse;

beforeAll(async () => {
  w = await openWarehouse(await testConfig());
});

afterAll(async () => {
  await w?.close();
});

describe("each setting a reader may set", () => {
  it.each([...READER_SETTINGS.keys()])(
    "%s is the engine's, and names no file, path, schema, directory or URL",
    async (name) => {
      const rs = await w.client.query({
        query:
          "SELECT name, description, alias_for FROM system.settings WHERE name = {name:String}",
        query_params: { name },
        format: "JSONEachRow",
      });
      const rows = await rs.json<{
        name: string;
        description: string;
        alias_for: string;
      }>();
      expect(rows, `${name} is not a setting of the engine`).toHaveLength(1);
      const [row] = rows;
      // An alias would let the setting it stands for through under another name.
      expect(row?.alias_for).toBe("");
      expect(`${row?.name} ${row?.description}`).not.toMatch(
        /file|path|schema|director|url/i,
      );
    },
  );
});
