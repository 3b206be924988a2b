// The read commands with read-only credentials: a ClickHouse server whose user is readonly = 1
// (the Grafana reader profile of dashboards/provisioning/clickhouse/grafana-reader.sh), here the
// HTTP front over a real engine with its readonly policy and its readers' token, beside a
// writable front over the same engine (the exporter's user). Each read command, through the
// CLI's main(), succeeds with the reader and prints what it prints with the writer; a command
// that writes, given the reader, is refused with one message saying it needs a user that may
// write.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startHttpFront,
  type HttpFront,
} from "../../../src/http-front/index.js";
import { loadSessionClass } from "../../../src/http-front/engine.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { simulatedDay } from "../../helpers/simulated-day.js";
import { API_KEY, NOON } from "../../helpers/simulator.js";

const OWNER_TOKEN = "read-only-credentials-owner-4c1d9e";
const READER_TOKEN = "read-only-credentials-reader-8b2f7a";
const DAY = 24 * 3_600_000;
const FROM = new Date(NOON - DAY).toISOString();
const TO = new Date(NOON).toISOString();

let writer: HttpFront;
let reader: HttpFront;
let sim: Simulator;
let database: string;
const root = mkdtempSync(join(testTmpDir(), "read-only-credentials-"));

beforeAll(async () => {
  const path = join(root, "engine");
  writer = await startHttpFront({ path });
  // The same engine (one per process), served to readers: readonly = 1 for every request, no
  // setting changed but the few a readonly front lets through.
  const Session = await loadSessionClass();
  reader = await startHttpFront({
    engine: new Session(path),
    readonly: true,
    auth: { token: OWNER_TOKEN, readerToken: READER_TOKEN },
  });
  const day = await simulatedDay({
    sessionsPerDay: 300,
    historyDays: 2,
    lookback: "2d",
    env: { CLICKHOUSE_URL: writer.url },
  });
  sim = day.sim;
  database = day.config.clickhouse.database;
  await day.w.close();
}, 180_000);

afterAll(async () => {
  await sim?.close();
  await reader?.close();
  await writer?.close();
});

/** The reader's URL: a user whose password is the readers' token. */
function readerUrl(): string {
  const url = new URL(reader.url);
  url.username = "grafana";
  url.password = READER_TOKEN;
  return url.href;
}

function env(as: "writer" | "reader"): Record<string, string> {
  return {
    CLICKHOUSE_URL: as === "writer" ? writer.url : readerUrl(),
    CLICKHOUSE_DATABASE: database,
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_LOG_LEVEL: "silent",
  };
}

/** The command as the reader, which must succeed and print what the writer's prints. */
async function sameAsWriter(...args: string[]): Promise<string> {
  const asWriter = await mainInProcess(env("writer"), ...args);
  expect(asWriter.status, asWriter.stderr).toBe(0);
  const asReader = await mainInProcess(env("reader"), ...args);
  expect(asReader.stderr).toBe("");
  expect(asReader.status).toBe(0);
  expect(asReader.stdout).toBe(asWriter.stdout);
  expect(asReader.stdout).not.toContain(READER_TOKEN);
  return asReader.stdout;
}

describe("the read commands with a readonly = 1 user", () => {
  it("query prints what it prints with the writer", async () => {
    const out = await sameAsWriter(
      "query",
      "SELECT count() AS n, min(start_time) AS first FROM sessions FINAL",
      "--format",
      "JSONEachRow",
    );
    expect(Number((JSON.parse(out) as { n: string }).n)).toBeGreaterThan(0);
    await sameAsWriter("query", "SHOW TABLES");
    await sameAsWriter("query", "DESCRIBE TABLE sessions", "--format", "TSV");
  });

  it("status reads the same jobs, checkpoints, runs and rows", async () => {
    const asWriter = await mainInProcess(env("writer"), "status", "--json");
    const asReader = await mainInProcess(env("reader"), "status", "--json");
    expect(asReader.stderr).toBe("");
    expect(asReader.status).toBe(0);
    const jobs = (text: string) =>
      (
        JSON.parse(text) as {
          jobs: {
            job: string;
            checkpoint: string | null;
            rowsStored: number | null;
            deadLetters: number;
            lastRun: { status: string } | null;
          }[];
        }
      ).jobs.map((j) => [
        j.job,
        j.checkpoint,
        j.rowsStored,
        j.deadLetters,
        j.lastRun?.status,
      ]);
    expect(jobs(asReader.stdout)).toEqual(jobs(asWriter.stdout));
    expect(jobs(asReader.stdout)).toContainEqual([
      "sessions",
      expect.any(String),
      expect.any(Number),
      0,
      "succeeded",
    ]);
    const table = await mainInProcess(env("reader"), "status");
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).not.toContain("not created yet");
  });

  it("report writes the same tables", async () => {
    const dirs = { writer: join(root, "w"), reader: join(root, "r") };
    for (const as of ["writer", "reader"] as const) {
      const r = await mainInProcess(
        env(as),
        "report",
        "coverage-and-integrity",
        "--from",
        FROM,
        "--to",
        TO,
        "--out",
        dirs[as],
        "--format",
        "csv",
      );
      expect(r.status, r.stderr).toBe(0);
    }
    const csv = readdirSync(dirs.reader).filter((f) => f.endsWith(".csv"));
    expect(csv.length).toBeGreaterThan(3);
    expect(readdirSync(dirs.writer).filter((f) => f.endsWith(".csv"))).toEqual(
      csv,
    );
    for (const f of csv)
      expect(readFileSync(join(dirs.reader, f), "utf8"), f).toBe(
        readFileSync(join(dirs.writer, f), "utf8"),
      );
  });

  it("export, windows list, hold list and detect run print the same", async () => {
    const ocsf = await sameAsWriter(
      "export",
      "ocsf",
      "--from",
      FROM,
      "--to",
      TO,
    );
    expect(ocsf.split("\n").length).toBeGreaterThan(100);
    await sameAsWriter("windows", "list", "--all", "--json");
    await sameAsWriter("hold", "list", "--all");
    await sameAsWriter(
      "detect",
      "run",
      "--rule",
      "external-address-session",
      "--from",
      FROM,
      "--to",
      TO,
      "--format",
      "csv",
    );
  });

  it("doctor reads: ClickHouse answers, its version and the database; the grants say the user cannot write", async () => {
    const r = await mainInProcess(env("reader"), "doctor");
    const line = (check: string) =>
      r.stdout.split("\n").find((l) => l.includes(`clickhouse ${check}:`)) ??
      "";
    expect(line("reachable")).toMatch(/^ok /);
    expect(line("version")).toMatch(/^ok /);
    expect(line("database")).toMatch(new RegExp(`^ok .*${database} exists`));
    expect(line("grants")).toMatch(/^fail .*readonly = 1/);
    expect(r.status).toBe(1);
  });
});

describe("a command that writes, given the reader", () => {
  it.each([
    [["sync", "sessions"]],
    [["query", "--write", "OPTIMIZE TABLE sessions FINAL"]],
    [["hold", "add", "--user", "u-1", "--reason", "matter 7"]],
  ])("%j is refused: it needs a user that may write", async (args) => {
    const r = await mainInProcess(env("reader"), ...args);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^error: ClickHouse at http:\/\/127\.0\.0\.1:\d+ does not let the exporter's inserts set async_insert=0, insert_deduplicate=1: the user is read-only \(readonly = 1\), and this command writes, so it needs a user that may write/,
    );
    expect(r.stderr).toMatch(
      /\nhint: the commands that write need the exporter's user/,
    );
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stderr).not.toContain(READER_TOKEN);
  });

  it("a query that is not a read is refused before it runs, saying how the owner writes", async () => {
    const r = await mainInProcess(
      env("reader"),
      "query",
      "ALTER TABLE sessions DELETE WHERE 1",
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/an ALTER statement is not a read/);
    expect(r.stderr).toContain("query --write");
    const count = await mainInProcess(
      env("writer"),
      "query",
      "SELECT count() > 0 AS kept FROM sessions",
      "--format",
      "TSV",
    );
    expect(count.stdout).toBe("1\n");
  });
});
