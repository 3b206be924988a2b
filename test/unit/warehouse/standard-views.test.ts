// The standard views' one definition (src/warehouse/standards/): the migration that creates them
// is what the field tables generate, docs/standards.md lists every field, and the export nests a
// view's flat row into the standard's objects.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nestRecord } from "../../../src/warehouse/standards/export.js";
import {
  STANDARD_VIEWS,
  standardViewsMigration,
} from "../../../src/warehouse/standards/views.js";
import { readMigrations } from "../../../src/warehouse/migrate.js";

const ROOT = new URL("../../../", import.meta.url);

describe("the standard views", () => {
  it("are created by migration 0025 exactly as the field tables generate them", () => {
    const file = readMigrations().find((m) => m.version === 25);
    expect(file?.name).toBe("0025_standard_views.sql");
    // A field changed in code after the migration shipped needs a new view in a new migration.
    expect(file?.text).toBe(standardViewsMigration());
  });

  it("have every field listed in docs/standards.md, with its view's name", () => {
    const doc = readFileSync(new URL("docs/standards.md", ROOT), "utf8");
    for (const view of Object.values(STANDARD_VIEWS)) {
      expect(doc).toContain(`\`${view.name}\``);
      const missing = view.fields
        .map((f) => f.path)
        .filter((path) => !doc.includes(`| \`${path}\``));
      expect(missing, view.name).toEqual([]);
    }
  });
});

describe("nestRecord", () => {
  const view = STANDARD_VIEWS.ocsf;

  it("nests dotted columns, leaves out NULLs, empty arrays and empty objects, turns 64-bit strings into numbers", () => {
    const row: Record<string, unknown> = Object.fromEntries(
      view.fields.map((f) => [f.path, f.array ? [] : null]),
    );
    Object.assign(row, {
      time: "1794744048509",
      type_uid: "600503",
      "metadata.version": "1.8.0",
      "metadata.uid": "ses_1",
      "actor.user.name": "Priya",
      raw_data_size: "18446744073709551615",
      "database.data_classifications": [
        {
          category_id: 1,
          category: "Personal",
          discovery_details: [{ type: "email" }],
        },
      ],
    });
    expect(nestRecord(view, row)).toEqual({
      time: 1794744048509,
      type_uid: 600503,
      metadata: { version: "1.8.0", uid: "ses_1" },
      actor: { user: { name: "Priya" } },
      raw_data_size: "18446744073709551615",
      database: {
        data_classifications: [
          {
            category_id: 1,
            category: "Personal",
            discovery_details: [{ type: "email" }],
          },
        ],
      },
    });
  });

  it("writes an ECS date in ISO 8601", () => {
    const out = nestRecord(STANDARD_VIEWS.ecs, {
      "@timestamp": "2026-11-15 12:00:48.509",
      "event.duration": "215184000000",
    });
    expect(out).toEqual({
      "@timestamp": "2026-11-15T12:00:48.509Z",
      event: { duration: 215184000000 },
    });
  });
});
