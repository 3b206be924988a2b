// `sessionhouse export ocsf|ecs`: a simulated day's sessions as JSON Lines, one nested record per
// stored session, to stdout or to a new 0600 file; bad input refused with exit 2 and nothing
// written.
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../../src/simulator/index.js";
import { NOON } from "../../helpers/simulator.js";
import { simulatedDay } from "../../helpers/simulated-day.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { select, testDataDir } from "../../helpers/warehouse.js";
import { at, type NestedRecord } from "../../helpers/ocsf-schema.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const DAY = 24 * 3_600_000;
const FROM = new Date(NOON - DAY).toISOString();
const TO = new Date(NOON).toISOString();
let sim: Simulator;
let env: Record<string, string>;
let storedIds: string[];
const dir = mkdtempSync(join(testTmpDir(), "sessionhouse-export-"));

beforeAll(async () => {
  const day = await simulatedDay({
    sessionsPerDay: 1500,
    historyDays: 2,
    lookback: "2d",
  });
  sim = day.sim;
  const { config, w } = day;
  storedIds = (
    await select<{ id: string }>(
      w,
      "SELECT id FROM {db}.sessions FINAL WHERE start_time >= {from:DateTime64(3)} AND start_time < {to:DateTime64(3)} ORDER BY id",
      {
        from: FROM.slice(0, 23).replace("T", " "),
        to: TO.slice(0, 23).replace("T", " "),
      },
    )
  ).map((r) => r.id);
  await w.close();
  // The CLI opens the same ClickHouse: the embedded data directory, or the server of the
  // server pass.
  env = {
    SESSIONHOUSE_DATA_DIR: testDataDir(),
    CLICKHOUSE_DATABASE: config.clickhouse.database,
    SESSIONHOUSE_LOG_LEVEL: "silent",
    ...(config.clickhouse.url ? { CLICKHOUSE_URL: config.clickhouse.url } : {}),
  };
}, 180_000);

afterAll(async () => {
  await sim.close();
});

function cli(...args: string[]) {
  return mainInProcess(env, ...args);
}

/** `export STANDARD --from FROM --to TO`, then `more`. */
function exportCli(
  standard: string,
  range: [string, string],
  ...more: string[]
) {
  return cli("export", standard, "--from", range[0], "--to", range[1], ...more);
}

/** JSON Lines as records; every line must parse. */
function records(text: string): NestedRecord[] {
  expect(text.endsWith("\n")).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line) as NestedRecord);
}

describe("export", () => {
  it("writes a day as OCSF to stdout: one nested record per stored session", async () => {
    const r = await exportCli("ocsf", [FROM, TO]);
    expect(r.status, r.stderr).toBe(0);
    const got = records(r.stdout);
    (await import("node:fs")).writeFileSync(
      "/tmp/first.json",
      r.stdout.split("\n").slice(0, 3).join("\n"),
    );
    expect(storedIds.length).toBeGreaterThan(1000);
    expect(got.map((x) => at(x, "metadata.uid") as string).sort()).toEqual(
      storedIds,
    );
    for (const x of got) {
      expect(at(x, "class_uid")).toBe(6005);
      expect(at(x, "activity_id")).toBe(3);
      expect(typeof at(x, "time")).toBe("number");
      expect(at(x, "metadata.product.vendor_name")).toBe("sessionhouse");
      expect(at(x, "src_endpoint.ip")).toEqual(expect.any(String));
      expect(at(x, "raw_data_hash.algorithm_id")).toBe(3);
      expect("actor.user.name" in x).toBe(false);
    }
  });

  it("writes a day as ECS to a new file only its owner can read", async () => {
    const file = join(dir, "day.ecs.jsonl");
    const r = await exportCli("ecs", [FROM, TO], "--out", file);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `exported ${storedIds.length} sessions (ecs_sessions_v8) to ${file}\n`,
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const got = records(readFileSync(file, "utf8"));
    (await import("node:fs")).writeFileSync(
      "/tmp/first-ecs.json",
      readFileSync(file, "utf8").split("\n")[0] ?? "",
    );
    expect(got.map((x) => at(x, "event.id") as string).sort()).toEqual(
      storedIds,
    );
    for (const x of got) {
      expect(at(x, "ecs.version")).toMatch(/^8\./);
      expect(at(x, "event.category")).toContain("session");
      expect(Date.parse(at(x, "@timestamp") as string)).toBeGreaterThanOrEqual(
        Date.parse(FROM),
      );
    }
  });

  it("refuses an existing file, an unknown standard and an empty range, writing nothing", async () => {
    const file = join(dir, "kept.jsonl");
    writeFileSync(file, "mine\n");
    const existing = await exportCli("ocsf", [FROM, TO], "--out", file);
    expect(existing.status).toBe(2);
    expect(existing.stderr).toContain(`${file} exists already`);
    expect(readFileSync(file, "utf8")).toBe("mine\n");

    const unknown = await exportCli("cef", [FROM, TO]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(
      /no standard named "cef"\nhint: the standards, nearest first: ocsf, ecs\n/,
    );

    const empty = join(dir, "empty.jsonl");
    const backwards = await exportCli("ocsf", [TO, FROM], "--out", empty);
    expect(backwards.status).toBe(2);
    expect(backwards.stderr).toContain("is not before --to");
    expect(existsSync(empty)).toBe(false);
  });
});
