// The disk projection of the scale bench: how each table's rows grow from the sessions loaded
// to the sessions projected.
import { describe, expect, it } from "vitest";
import { ENTERPRISE } from "../../../bench/scale.js";
import { projectTables } from "../../../bench/scale-projection.js";

const at = (table: string, rows: number) => ({ table, rows, bytes: rows * 20 });

describe("the disk projected at 100M sessions", () => {
  it("grows every rollup of the sessions the model has no formula for with them, and keeps the directory and the aggregations' rollups fixed", () => {
    const projected = projectTables(
      [
        at("sessions", 10_000_000),
        at("user_resource_rollups_daily", 7_000_000),
        at("client_ip_rollups_monthly", 100_000),
        at("users", 50_000),
        at("agg_histogram", 15_000_000),
        at("resource_environment_rollups_daily", 730_000),
        at("data_label_rollups_daily", 2_000),
      ],
      10_000_000,
      ENTERPRISE,
      100_000_000,
    );
    expect(projected.map((t) => [t.table, Math.round(t.rows)])).toEqual([
      ["sessions", 100_000_000],
      ["user_resource_rollups_daily", 70_000_000],
      ["client_ip_rollups_monthly", 1_000_000],
      ["users", 50_000],
      ["agg_histogram", 15_000_000],
      ["resource_environment_rollups_daily", 730_000],
      ["data_label_rollups_daily", 2_000],
    ]);
  });
});
