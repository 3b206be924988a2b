// What page one of a report counts as covered when the data came from a backfill: after
// `sync sessions --from 2026-11-01 --to 2026-11-08` and the same backfill of the environments'
// aggregation job (the scheduled streams never ran), an access
// review of 2–5 November says the record covers the period (HTML and JSON, and the manifest's
// coverage), with the sessions the service holds; a period reaching past the backfill says
// which part is not known complete.
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../../../src/cli/main.js";
import type { Coverage } from "../../../src/reports/coverage.js";
import type { Report } from "../../../src/reports/model.js";
import type { Simulator } from "../../../src/simulator/index.js";
import {
  API_KEY,
  expectedSessions,
  testSimulator,
} from "../../helpers/simulator.js";
import { testConfig } from "../../helpers/warehouse.js";
import type { Config } from "../../../src/config/index.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let sim: Simulator;
let config: Config;
let outRoot: string;

/** Runs the CLI in this process with the test's settings only; its stdout is returned. */
async function cli(args: readonly string[]): Promise<string> {
  const env = { ...process.env };
  const written: string[] = [];
  const spy = vi
    .spyOn(process.stdout, "write")
    .mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  try {
    for (const k of Object.keys(process.env))
      if (k.startsWith("SESSIONHOUSE_") || k.startsWith("CLICKHOUSE_"))
        delete process.env[k];
    Object.assign(process.env, {
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_DATA_DIR: config.clickhouse.dataDir,
      CLICKHOUSE_DATABASE: config.clickhouse.database,
      SESSIONHOUSE_LOG_LEVEL: "silent",
      ...(config.clickhouse.url
        ? { CLICKHOUSE_URL: config.clickhouse.url }
        : {}),
    });
    const code = await main(["node", "sessionhouse", ...args]);
    expect(code, written.join("")).toBe(0);
  } finally {
    spy.mockRestore();
    process.env = env;
  }
  return written.join("");
}

interface Produced {
  html: string;
  json: Report;
  coverage: Coverage;
}

let seq = 0;
async function accessReview(from: string, to: string): Promise<Produced> {
  const out = join(outRoot, `r${++seq}`);
  await cli([
    "report",
    "access-review",
    "--from",
    from,
    "--to",
    to,
    "--format",
    "html,json",
    "--out",
    out,
  ]);
  const manifest = JSON.parse(
    readFileSync(join(out, "manifest.json"), "utf8"),
  ) as { coverage: Coverage };
  return {
    html: readFileSync(join(out, "report.html"), "utf8"),
    json: JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as Report,
    coverage: manifest.coverage,
  };
}

/** The text of page one's coverage box, tags removed. */
function coverageBox(html: string): string {
  const m =
    /<div class="notices[^"]*" id="coverage-notices">(.*?)<\/div>/s.exec(html);
  return (m?.[1] ?? "").replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");
}

beforeAll(async () => {
  sim = await testSimulator();
  config = await testConfig();
  outRoot = mkdtempSync(join(testTmpDir(), "sessionhouse-backfill-coverage-"));
  const week = ["--from", "2026-11-01", "--to", "2026-11-08"];
  await cli(["sync", "sessions", ...week]);
  // The other streams an access review relies on: the environments' aggregation job, backfilled
  // over the same week, and the directory (the person behind each account).
  await cli([
    "sync",
    "aggregations",
    "--job",
    "resource_environments",
    ...week,
  ]);
  await cli(["sync", "users"]);
  await cli(["sync", "identity_links"]);
  // Four CLI runs, each its own process; on the server pass under load they took 110 s.
}, 300_000);

afterAll(async () => {
  await sim?.close();
});

describe("page one after a backfill", () => {
  it("says a period inside the backfill is covered, with the sessions the service holds", async () => {
    const r = await accessReview("2026-11-02", "2026-11-06");
    const box = coverageBox(r.html);
    expect(box).toContain("The record covers the whole period");
    expect(r.html).not.toContain("has no checkpoint");
    const sessions = r.coverage.streams.find((s) => s.stream === "sessions");
    expect(sessions).toEqual({
      stream: "sessions",
      checkpoint: null,
      known: [
        {
          from: "2026-11-02 00:00:00",
          to: "2026-11-06 00:00:00",
          by: "backfill 2026-11-01 00:00:00 to 2026-11-08 00:00:00",
        },
      ],
      missing: [],
      complete: true,
    });
    expect(r.coverage.complete).toBe(true);
    expect(r.json.notices.filter((n) => n.level === "warning")).toEqual([]);
    const said =
      "The stream sessions is known complete over the period: from 2026-11-02 00:00:00 to 2026-11-06 00:00:00 UTC (backfill 2026-11-01 00:00:00 to 2026-11-08 00:00:00).";
    expect(r.json.notices).toContainEqual({ level: "info", text: said });
    expect(r.html).toContain(said);
    const expected = await expectedSessions(
      sim,
      Date.UTC(2026, 10, 2),
      Date.UTC(2026, 10, 6),
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(r.json.summary).toContainEqual({
      label: "Sessions",
      value: expected.length,
    });
  }, 120_000);

  it("says which part of a period reaching past the backfill is not known complete", async () => {
    const r = await accessReview("2026-11-06", "2026-11-10");
    const text =
      "The stream sessions is not known to be complete from 2026-11-08 00:00:00 to 2026-11-10 00:00:00 UTC: no checkpoint or completed backfill covers it, and data there may be missing. It is known complete from 2026-11-06 00:00:00 to 2026-11-08 00:00:00 UTC (backfill 2026-11-01 00:00:00 to 2026-11-08 00:00:00).";
    expect(coverageBox(r.html)).toContain(
      "The record does not fully cover this report",
    );
    expect(coverageBox(r.html)).toContain(text);
    expect(r.json.notices).toContainEqual({ level: "warning", text });
    expect(
      r.coverage.streams.find((s) => s.stream === "sessions"),
    ).toMatchObject({
      missing: [{ from: "2026-11-08 00:00:00", to: "2026-11-10 00:00:00" }],
      complete: false,
    });
    expect(r.coverage.complete).toBe(false);
  }, 120_000);

  it("counts the scheduled sync only from where its first sync started", async () => {
    // The scheduled stream's first sync starts a day before now (the real clock): the days
    // between the backfill's end and that start are covered by neither.
    await cli(["sync", "sessions"]);
    const today = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000)
      .toISOString()
      .slice(0, 10);
    const r = await accessReview("2026-11-06", today);
    const sessions = r.coverage.streams.find((s) => s.stream === "sessions");
    const scheduled = sessions?.known[1];
    expect(sessions?.known[0]).toEqual({
      from: "2026-11-06 00:00:00",
      to: "2026-11-08 00:00:00",
      by: "backfill 2026-11-01 00:00:00 to 2026-11-08 00:00:00",
    });
    expect(scheduled).toMatchObject({
      by: "checkpoint",
      to: `${today} 00:00:00`,
    });
    expect((scheduled?.from ?? "") > "2026-11-08 00:00:00").toBe(true);
    expect(sessions?.missing).toEqual([
      { from: "2026-11-08 00:00:00", to: scheduled?.from },
    ]);
    expect(r.json.notices).toContainEqual({
      level: "warning",
      text: `The stream sessions is not known to be complete from 2026-11-08 00:00:00 to ${String(scheduled?.from)} UTC: no checkpoint or completed backfill covers it, and data there may be missing. It is known complete from 2026-11-06 00:00:00 to 2026-11-08 00:00:00 UTC (backfill 2026-11-01 00:00:00 to 2026-11-08 00:00:00), from ${String(scheduled?.from)} to ${today} 00:00:00 UTC (its scheduled sync).`,
    });
  }, 120_000);
});
