// The entity views of migrations/0010: the as-of views answer what was true at a time, and
// sessions_enriched resolves the person behind a session, through the identity link valid at
// its start for a session made through a native user.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

let w: Warehouse;

beforeAll(async () => {
  w = await migratedWarehouse(await testConfig());
});
afterAll(async () => {
  await w.close();
});

async function exec(sql: string): Promise<void> {
  await w.client.command({
    query: sql.replaceAll("{db}", `\`${w.database}\``),
  });
}

describe("entity views", () => {
  it("sessions_enriched has every column of sessions and the person columns", async () => {
    const cols = await select<{ table: string; name: string; type: string }>(
      w,
      "SELECT table, name, type FROM system.columns WHERE database = {d:String} AND table IN ('sessions', 'sessions_enriched')",
      { d: w.database },
    );
    const of = (t: string) =>
      new Map(cols.filter((c) => c.table === t).map((c) => [c.name, c.type]));
    const sessions = of("sessions");
    const enriched = of("sessions_enriched");
    // legal_hold and archived are the retention's flags (0014, 0039), added to sessions after
    // this view (0010), and is_deleted marks tombstones (0023), which the view's FINAL never
    // returns.
    const later = new Set(["legal_hold", "archived", "is_deleted"]);
    for (const [name, type] of sessions)
      if (!later.has(name)) expect(enriched.get(name), name).toBe(type);
    expect(enriched.get("person_id")).toBe("String");
    expect(enriched.get("person_email")).toBe("String");
    expect(enriched.get("person_name")).toBe("String");
    expect(enriched.get("person_via")).toBe("LowCardinality(String)");
    expect(enriched.get("data_labels")).toBe("Array(String)");
  });

  it("resolves a native-user session to the link valid at its start", async () => {
    const link = (
      id: string,
      userId: string,
      email: string,
      from: string,
      to: string | null,
      version: number,
    ) =>
      `('${id}', '${from}', ${to === null ? "NULL" : `'${to}'`}, 'nu1', 'res1', 'app', 'user', '${userId}', '${email}', 'Name ${userId}', '', '', false, '${from}', '${from}', 'h', '{}', now64(3), 0, ${version})`;
    await exec(`INSERT INTO {db}.native_user_identity_links_history
      (id, valid_from, valid_to, native_user_id, resource_id, native_username, identity_type, identity_id, user_email, user_full_name, group_name, resource_hostname, termination_protection, created_at, updated_at, content_hash, raw, observed_at, is_deleted, version) VALUES
      ${link("l1", "u1", "one@x", "2026-11-01 00:00:00", null, 1)},
      ${link("l1", "u1", "one@x", "2026-11-01 00:00:00", "2026-11-02 00:00:00", 2)},
      ${link("l2", "u2", "two@x", "2026-11-02 00:00:00", null, 3)}`);
    await exec(`INSERT INTO {db}.sessions (id, start_time, resource_id, native_username, raw, fetched_at, version) VALUES
      ('s0', '2026-10-31 12:00:00', 'res1', 'app', '{}', now64(3), 1),
      ('s1', '2026-11-01 12:00:00', 'res1', 'app', '{}', now64(3), 1),
      ('s2', '2026-11-02 12:00:00', 'res1', 'app', '{}', now64(3), 1),
      ('s3', '2026-11-02 12:00:00', 'res1', 'app', '{}', now64(3), 1)`);
    await exec(`INSERT INTO {db}.sessions (id, start_time, resource_id, native_username, user_id, user_email, user_name, raw, fetched_at, version) VALUES
      ('s3', '2026-11-02 12:00:00', 'res1', 'app', 'u9', 'nine@x', 'Nine', '{}', now64(3), 2)`);
    const rows = await select<{
      id: string;
      person_id: string;
      person_email: string;
      person_via: string;
    }>(
      w,
      "SELECT id, person_id, person_email, person_via FROM {db}.sessions_enriched ORDER BY id",
    );
    expect(rows).toEqual([
      { id: "s0", person_id: "", person_email: "", person_via: "none" },
      {
        id: "s1",
        person_id: "u1",
        person_email: "one@x",
        person_via: "link_user",
      },
      {
        id: "s2",
        person_id: "u2",
        person_email: "two@x",
        person_via: "link_user",
      },
      {
        id: "s3",
        person_id: "u9",
        person_email: "nine@x",
        person_via: "brand",
      },
    ]);
    const asOf = await select<{ id: string }>(
      w,
      "SELECT id FROM {db}.native_user_identity_links_as_of(at = '2026-11-01 06:00:00')",
    );
    expect(asOf.map((r) => r.id)).toEqual(["l1"]);
  });
});
