// `sessionhouse detect` as a user runs it (the built CLI, a child process): `test` runs the
// shipped rules' fixtures and passes (this is how CI runs them); a rule whose fixture is wrong
// fails the command, naming the rule, its file, the fixture and its line; a rule file that
// cannot be used is refused (exit 2), a Sigma rule written as a block of text too; `run` hunts over
// sessions a sync stored, and finds exactly the sessions the rule describes.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadRules, SHIPPED_RULES_DIR } from "../../../src/detections/rule.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { buildCli, cleanEnv, removeCli, runCli } from "../../helpers/cli.js";
import type { CliPackage } from "../../helpers/cli.js";
import { API_KEY, NOON, testSimulator } from "../../helpers/simulator.js";
import { freshDatabaseName, testDataDir } from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let sim: Simulator;
let cli: CliPackage;

beforeAll(async () => {
  cli = await buildCli();
  sim = await testSimulator({ historyDays: 2 });
}, 120_000);

afterAll(async () => {
  await sim?.close();
  removeCli(cli);
});

const env = (extra: Record<string, string> = {}) =>
  cleanEnv({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_DATA_DIR: testDataDir(),
    CLICKHOUSE_URL: process.env.CLICKHOUSE_URL,
    SESSIONHOUSE_LOG_LEVEL: "warn",
    ...extra,
  });

/** `detect test --dir DIR`. */
const testRules = (dir: string) =>
  runCli(cli, ["detect", "test", "--dir", dir], env(), 120_000);

describe("detect test", () => {
  it("passes on the shipped rules, every fixture of every rule", async () => {
    const rules = loadRules([SHIPPED_RULES_DIR]);
    const fixtures = rules.reduce((n, r) => n + r.fixtures.length, 0);
    const r = await runCli(cli, ["detect", "test"], env(), 300_000);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines.filter((l) => l.startsWith("ok "))).toHaveLength(fixtures);
    expect(lines.at(-1)).toBe(
      `${rules.length} rules, ${fixtures} fixtures, 0 failed`,
    );
  }, 300_000);

  it("fails naming the rule, its file, the fixture and its line", async () => {
    const dir = mkdtempSync(join(testTmpDir(), "detect-cli-"));
    writeFileSync(
      join(dir, "wrong.yaml"),
      `id: wrong
title: Every postgres session
description: a rule whose second fixture is wrong
severity: low
owner: tests
sql: SELECT id AS session_id, start_time AS event_time FROM {{sessions}} WHERE resource_technology = 'postgres'
fixtures:
  - name: a postgres session
    fires: true
    sessions: [{}]
  - name: another postgres session
    fires: false
    sessions: [{}]
`,
    );
    const r = await testRules(dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `ok   wrong (${join(dir, "wrong.yaml")}:8): a postgres session\n`,
    );
    expect(r.stdout).toContain(
      `FAIL wrong (${join(dir, "wrong.yaml")}:11): another postgres session: must not fire, 1 hit\n`,
    );
    expect(r.stderr).toContain(
      "error: 1 fixture failed: wrong / another postgres session\n",
    );
  }, 120_000);

  it("refuses a rule file that is not valid, naming the file and the line", async () => {
    const dir = mkdtempSync(join(testTmpDir(), "detect-cli-"));
    writeFileSync(
      join(dir, "bad.yaml"),
      "id: bad\ntitle: x\ndescription: x\nseverity: severe\nowner: x\nsql: x\nfixtures: []\n",
    );
    const r = await testRules(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${join(dir, "bad.yaml")}:4: rule bad: severity: `,
    );
  }, 60_000);

  it("refuses a Sigma rule written as a block of text, naming the file and the line", async () => {
    const dir = mkdtempSync(join(testTmpDir(), "detect-cli-"));
    writeFileSync(
      join(dir, "block.yaml"),
      `id: block
title: Sessions as postgres
description: a Sigma rule given as a block of text
severity: low
owner: tests
sigma: |
  logsource: { product: sessionhouse, category: database }
  detection:
    sel: { user.name: postgres }
    condition: sel
fixtures:
  - { name: postgres, fires: true, sessions: [{ user: { native: { username: postgres } } }] }
  - { name: alice, fires: false, sessions: [{}] }
`,
    );
    const r = await testRules(dir);
    expect(r.stderr).toBe(
      `error: ${join(dir, "block.yaml")}:6: rule block: sigma: a block of text (sigma: |) is neither a Sigma rule nor the path of one\n` +
        "hint: give the rule as a mapping (the Sigma rule's keys indented under sigma:, without |) or a path (sigma: sigma/x.yml, next to the rule file)\n",
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
  }, 60_000);
});

/** The ranges of the published "Publicly Accessible RDP Service" rule, external-address-session's. */
const PUBLISHED_RANGES = `['::1/128', '10.0.0.0/8', '127.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '2620:83:8000::/48', 'fc00::/7', 'fe80::/10']`;

describe("detect run", () => {
  it("hunts over the sessions a sync stored, and finds exactly those the rule describes", async () => {
    const e = env({ CLICKHOUSE_DATABASE: freshDatabaseName() });
    const from = new Date(NOON - 86_400_000).toISOString();
    const to = new Date(NOON).toISOString();
    const sync = await runCli(
      cli,
      ["sync", "sessions", "--from", from, "--to", to],
      e,
      300_000,
    );
    expect(sync.code, sync.stderr).toBe(0);
    const huntArgs = [
      ...["detect", "run", "--rule", "external-address-session"],
      ...["--from", from, "--to", to],
    ];

    const hunt = await runCli(cli, [...huntArgs, "--format", "json"], e);
    expect(hunt.code, hunt.stderr).toBe(0);
    const hits = JSON.parse(hunt.stdout) as {
      session_id: string;
      client_ip_address: string;
    }[];
    const expected = await runCli(
      cli,
      [
        "query",
        "--format",
        "JSONEachRow",
        `SELECT id FROM sessions FINAL WHERE start_time >= parseDateTime64BestEffort('${from}', 3) AND start_time < parseDateTime64BestEffort('${to}', 3)
         AND NOT (client_ip_address != '' AND arrayExists(r -> isIPAddressInRange(client_ip_address, r), ${PUBLISHED_RANGES}))`,
      ],
      e,
    );
    const ids = expected.stdout
      .trim()
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids.length).toBeGreaterThan(0);
    expect(hits.map((h) => h.session_id).sort()).toEqual(ids.sort());

    const out = join(
      mkdtempSync(join(testTmpDir(), "detect-cli-")),
      "hits.csv",
    );
    const csv = await runCli(
      cli,
      [...huntArgs, "--format", "csv", "--out", out],
      e,
    );
    expect(csv.stdout).toBe(
      `${ids.length} hits of external-address-session written to ${out}\n`,
    );
    const lines = readFileSync(out, "utf8").trim().split("\r\n");
    expect(lines[0]).toMatch(/^rule,hit_key,session_id,event_time,arrived_at,/);
    expect(lines).toHaveLength(ids.length + 1);
  }, 400_000);
});
