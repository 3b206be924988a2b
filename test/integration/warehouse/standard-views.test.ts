// The OCSF and ECS views over a simulated day of sessions and its directory, on a real engine:
// one row per stored session, each column of the type its mapping says, and the export of a
// range as JSON Lines: one nested object per stored session of the range, in pages, none twice.
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { exportStandard } from "../../../src/warehouse/standards/export.js";
import type { FieldKind } from "../../../src/warehouse/standards/fields.js";
import { STANDARD_VIEWS } from "../../../src/warehouse/standards/views.js";
import { OCSF_FIELDS } from "../../../src/warehouse/standards/ocsf-fields.js";
import { SIGMA_TAXONOMY_FIELDS } from "../../../src/warehouse/detection-fields.js";
import { NOON } from "../../helpers/simulator.js";
import { simulatedDay } from "../../helpers/simulated-day.js";
import { select } from "../../helpers/warehouse.js";
import { createHash } from "node:crypto";
import {
  at,
  classShape,
  problemsOf,
  type NestedRecord,
} from "../../helpers/ocsf-schema.js";

const HOUR = 3_600_000;
const FROM = NOON - 24 * HOUR;
let sim: Simulator;
let w: Warehouse;

beforeAll(async () => {
  ({ sim, w } = await simulatedDay({
    sessionsPerDay: 1500,
    historyDays: 3,
    lookback: "1d",
    directory: true,
  }));
}, 180_000);

afterAll(async () => {
  await w.close();
  await sim.close();
});

/** A writable that keeps what it is given. */
class Collector extends Writable {
  text = "";
  override _write(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: (err?: Error | null) => void,
  ): void {
    this.text += chunk.toString("utf8");
    done();
  }
}

async function storedIds(fromMs: number, toMs: number): Promise<string[]> {
  const rows = await select<{ id: string }>(
    w,
    `SELECT id FROM {db}.sessions FINAL
     WHERE start_time >= fromUnixTimestamp64Milli({from:Int64}) AND start_time < fromUnixTimestamp64Milli({to:Int64})
     ORDER BY id`,
    { from: fromMs, to: toMs },
  );
  return rows.map((r) => r.id);
}

/** The ClickHouse types a field of each kind may have (Nullable and LowCardinality aside). */
const TYPES: Record<FieldKind, RegExp> = {
  string: /^String$/,
  integer: /^U?Int(8|16|32)$/,
  long: /^U?Int64$/,
  timestamp: /^Int64$/,
  boolean: /^Bool$/,
  date: /^DateTime64\(3, 'UTC'\)$/,
  object: /^(Array\()?Tuple\(/,
};

function bare(type: string): string {
  return type
    .replace(/^(LowCardinality|Nullable)\((.*)\)$/, "$2")
    .replace(/^(LowCardinality|Nullable)\((.*)\)$/, "$2");
}

describe.each(Object.entries(STANDARD_VIEWS))("the %s view", (_, view) => {
  it("has every field of its mapping as a column of the mapped kind, and no other", async () => {
    const columns = await select<{ name: string; type: string }>(
      w,
      "SELECT name, type FROM system.columns WHERE database = {db:String} AND table = {t:String} ORDER BY position",
      { db: w.database, t: view.name },
    );
    expect(columns.map((c) => c.name)).toEqual(view.fields.map((f) => f.path));
    for (const f of view.fields) {
      const type = bare(
        columns.find((c) => c.name === f.path)?.type ?? "missing",
      );
      const inner = f.array ? type.replace(/^Array\((.*)\)$/, "$1") : type;
      expect(
        f.kind === "object" ? type : bare(inner),
        `${view.name}.${f.path}`,
      ).toMatch(TYPES[f.kind]);
    }
  });

  it("has one row per stored session", async () => {
    const [counts] = await select<{ view: string; stored: string }>(
      w,
      `SELECT (SELECT count() FROM {db}.${view.name}) AS view, (SELECT count() FROM {db}.sessions FINAL) AS stored`,
    );
    expect(Number(counts?.stored)).toBeGreaterThan(500);
    expect(counts?.view).toBe(counts?.stored);
  });

  it("exports a range as one JSON line per stored session, in pages, none twice", async () => {
    const fromMs = FROM + 6 * HOUR;
    const toMs = NOON - 6 * HOUR;
    const out = new Collector();
    // Small pages: the range takes many, each a slice of time; none loses or doubles a session.
    const n = await exportStandard(
      w,
      view === STANDARD_VIEWS.ocsf ? "ocsf" : "ecs",
      { fromMs, toMs },
      out,
      97,
    );
    const lines = out.text.trimEnd().split("\n");
    expect(lines).toHaveLength(n);
    const records = lines.map((l) => JSON.parse(l) as NestedRecord);
    const ids = records.map((r) => String(at(r, view.order.id)));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(await storedIds(fromMs, toMs));
    expect(n).toBeGreaterThan(97 * 3);
  });
});

describe("the exported records", () => {
  async function exported(name: "ocsf" | "ecs"): Promise<NestedRecord[]> {
    const out = new Collector();
    await exportStandard(w, name, { fromMs: FROM, toMs: NOON }, out);
    return out.text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as NestedRecord);
  }

  it("OCSF: valid against the schema, numbers for longs, the raw record and its SHA-256, the person and the account", async () => {
    const records = await exported("ocsf");
    // Every record valid against the schema's files: attributes, types, enum values, required.
    const shape = classShape("events/application/datastore_activity.json");
    const problems = new Set(records.flatMap((r) => problemsOf(r, shape)));
    expect([...problems]).toEqual([]);
    const stored = new Map(
      (
        await select<{
          id: string;
          raw: string;
          person_email: string;
          native_username: string;
        }>(
          w,
          "SELECT id, raw, person_email, native_username FROM {db}.sessions_enriched",
        )
      ).map((r) => [r.id, r]),
    );
    for (const r of records) {
      expect(at(r, "type_uid")).toBe(600503);
      expect(typeof at(r, "time")).toBe("number");
      expect(at(r, "metadata.product.name")).toBe("sessionhouse");
      const s = stored.get(at(r, "metadata.uid") as string);
      expect(s).toBeDefined();
      expect(at(r, "raw_data")).toBe(s?.raw);
      expect(at(r, "raw_data_hash.value")).toBe(
        createHash("sha256")
          .update(s?.raw ?? "")
          .digest("hex"),
      );
      expect(at(r, "actor.user.email_addr") ?? "").toBe(s?.person_email);
      expect(at(r, "actor.user.account.name") ?? "").toBe(s?.native_username);
    }
    // The inventory's labels classify some sessions' data.
    const classifications = records.flatMap(
      (r) => (at(r, "database.data_classifications") ?? []) as NestedRecord[],
    );
    expect(classifications.length).toBeGreaterThan(0);
    expect(classifications[0]).toMatchObject({
      category_id: expect.any(Number) as number,
      discovery_details: [{ type: expect.any(String) as string }],
    });
  });

  it("ECS: @timestamp in ISO 8601, the duration in nanoseconds, the effective user", async () => {
    const records = await exported("ecs");
    const durations = new Map(
      (
        await select<{ id: string; duration_ms: string | null }>(
          w,
          "SELECT id, duration_ms FROM {db}.sessions FINAL",
        )
      ).map((r) => [r.id, r.duration_ms]),
    );
    for (const r of records) {
      expect(at(r, "@timestamp")).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
      );
      expect(at(r, "event.kind")).toBe("event");
      const ms = durations.get(at(r, "event.id") as string);
      expect(at(r, "event.duration")).toBe(
        ms === null || ms === undefined ? undefined : Number(ms) * 1_000_000,
      );
    }
    expect(records.some((r) => at(r, "user.effective.name"))).toBe(true);
  });
});

// The one OCSF field table (standards/ocsf-fields.ts), which the OCSF view, its export and the
// detections' Sigma field map read, against the migrated schema and the view built from it.
describe("the OCSF field table", () => {
  /** The columns of sessions_enriched an SQL of the table (or of the taxonomy) names. */
  function named(sql: (c: (column: string) => string) => string): string[] {
    const columns: string[] = [];
    sql((c) => {
      columns.push(c);
      return c;
    });
    return columns;
  }

  it("names only columns of sessions_enriched, in its fields and in the Sigma taxonomy's own", async () => {
    const live = await select<{ name: string }>(
      w,
      "SELECT name FROM system.columns WHERE database = {db:String} AND table = 'sessions_enriched'",
      { db: w.database },
    );
    const columns = new Set(live.map((c) => c.name));
    expect(columns.size).toBeGreaterThan(30);
    const uses = [
      ...Object.entries(OCSF_FIELDS),
      ...Object.entries(SIGMA_TAXONOMY_FIELDS).flatMap(([name, t]) =>
        "ocsf" in t ? [] : [[name, t] as const],
      ),
    ].flatMap(([name, f]) => named(f.sql).map((c) => `${name}: ${c}`));
    expect(uses.length).toBeGreaterThan(30);
    expect(
      uses.filter((u) => !columns.has(u.slice(u.indexOf(": ") + 2))),
    ).toEqual([]);
  });

  it("gives each name the value the OCSF view has under it, on every stored session", async () => {
    const view = STANDARD_VIEWS.ocsf;
    const S = (c: string) => `s.${c}`;
    const shared = view.fields.filter(
      (f) => f.kind !== "object" && OCSF_FIELDS[f.path] !== undefined,
    );
    expect(shared.length).toBeGreaterThan(25);
    const [differing] = await select<Record<string, string | number>>(
      w,
      `SELECT ${shared
        .map(
          (f, i) =>
            `countIf(isNotNull(${f.sql}) AND toString(${f.sql}) != toString(${OCSF_FIELDS[f.path]?.sql(S)})) AS f${i}`,
        )
        .join(", ")}
       FROM {db}.sessions_enriched AS s`,
    );
    expect(
      shared.flatMap((f, i) =>
        Number(differing?.[`f${i}`]) === 0
          ? []
          : [`${f.path}: ${differing?.[`f${i}`]}`],
      ),
    ).toEqual([]);
  });
});
