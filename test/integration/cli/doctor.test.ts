// `sessionhouse doctor` as a platform team runs it: the built CLI against the simulator over
// HTTP and the embedded engine. All good: exit 0 and a line for every check (and --json of the
// same). A wrong key, a ClickHouse that does not answer, a user that may not write (the HTTP
// front's read-only access), a data directory its owner may not write to, and one held by a
// running service: exit 1, the failed line naming the problem and the fix, no secret printed.
// The built CLI runs as a child where the child is what is checked (the first, all-good run, and
// the running `run` that holds the data directory); the other cases run the CLI's main in process
// (cli-in-process.ts): the same checks, exit status and output, without a node and engine start.
// The in-process runs find no Chromium on their PATH, so their reports chromium check is skipped
// without starting a browser (seconds a run): none of them is about it, and the first, all-good
// run of the built CLI prints its probe PDF with the Chromium of this machine's PATH.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statfsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startHttpFront,
  type HttpFront,
} from "../../../src/http-front/index.js";
import { spaceFinding } from "../../../src/ops/doctor/check.js";
import { findChromium } from "../../../src/reports/pdf.js";
import type { Simulator } from "../../../src/simulator/index.js";
import * as cli from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import {
  hasOpenssl,
  makeCertificates,
  recordingProxy,
} from "../../helpers/servers.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { migratedDataDir } from "../../helpers/warehouse.js";

const SIM_NOW = Math.floor(Date.now() / 60_000) * 60_000;
const FRONT_TOKEN = "doctor-front-token-5b1e9d2c";

let pkg: cli.CliPackage;
let sim: Simulator;
let root: string;
/** A migrated data directory, mode 0700. */
let dataDir: string;
/** An empty directory: the PATH of the in-process runs, on which no Chromium is found. */
let noChromium: string;

interface DoctorJson {
  status: string;
  checks: {
    name: string;
    family: string;
    status: string;
    found: string;
    fix?: string;
  }[];
}

beforeAll(async () => {
  pkg = await cli.buildCli();
  sim = await testSimulator({
    atMs: SIM_NOW,
    historyDays: 1,
    sessionsPerDay: 200,
  });
  root = mkdtempSync(join(testTmpDir(), "sessionhouse-doctor-"));
  dataDir = join(root, "data");
  noChromium = join(root, "no-chromium");
  mkdirSync(noChromium);
  await migratedDataDir(dataDir);
}, 120_000);

afterAll(async () => {
  await sim?.close();
  cli.removeCli(pkg);
  if (root) rmSync(root, { recursive: true, force: true });
});

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return cli.cleanEnv({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_DATA_DIR: dataDir,
    SESSIONHOUSE_LOG_LEVEL: "silent",
    ...extra,
  });
}

/** What a doctor run printed and its exit status. */
interface Doctored {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `doctor` in this process, or as the built CLI's child with `via: "child"`. */
async function doctor(
  extra: Record<string, string> = {},
  args: string[] = [],
  via: "child" | "in-process" = "in-process",
): Promise<Doctored> {
  let r: Doctored;
  if (via === "child")
    r = await cli.runCli(pkg, ["doctor", ...args], env(extra));
  else {
    const own: Record<string, string> = {};
    for (const [k, v] of Object.entries(env(extra)))
      if (v !== undefined) own[k] = v;
    own.PATH = noChromium;
    const p = await mainInProcess(own, "doctor", ...args);
    r = { code: p.status, stdout: p.stdout, stderr: p.stderr };
  }
  // The key is never echoed, not even in part.
  for (const text of [r.stdout, r.stderr])
    expect(text).not.toContain(API_KEY.slice(0, 8));
  return r;
}

/** The line of one check ("family name"). */
function line(r: Doctored, check: string): string {
  const found = r.stdout
    .split("\n")
    .find((l) => l.replace(/^\S+\s+/, "").startsWith(`${check}:`));
  expect(found, `no line for ${check} in:\n${r.stdout}`).toBeDefined();
  return found ?? "";
}

/** The checks that warn whatever doctor is pointed at: the disk below the data directory is low. */
function machineWarnings(): string[] {
  const disk = statfsSync(dataDir);
  const found = spaceFinding(
    dataDir,
    disk.bavail * disk.bsize,
    disk.blocks * disk.bsize,
  );
  // The embedded engine's disks are in the data directory.
  return found.status === "warn"
    ? ["data-dir free space", "clickhouse free disk"]
    : [];
}

/** The checks that warn, as "family name". */
function warned(r: Doctored): string[] {
  return r.stdout
    .split("\n")
    .filter((l) => l.startsWith("warn "))
    .map((l) => l.replace(/^warn\s+/, ""))
    .map((l) => EVERY_CHECK.find((c) => l.startsWith(`${c}:`)) ?? l);
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== "object" || address === null)
    throw new Error("no port");
  return address.port;
}

const EVERY_CHECK = [
  "config schedules",
  "config retention",
  "config concurrency",
  "config secrets",
  "config api url",
  "config environment",
  "data-dir owner",
  "data-dir mode",
  "data-dir free space",
  "data-dir held",
  "clickhouse reachable",
  "clickhouse version",
  "clickhouse database",
  "clickhouse grants",
  "clickhouse grafana reader",
  "clickhouse insert settings",
  "clickhouse cluster",
  "clickhouse macros",
  "clickhouse keeper",
  "clickhouse tiers",
  "clickhouse free disk",
  "api reachable",
  "api tls",
  "api key: ListSessionsV2",
  "api key: GetSession",
  "api key: ListLogAggregations",
  "api key: ListPolicySuspensions",
  "api key: GetUser",
  "api key: ListUserDevices",
  "api key: ListNativeUsers",
  "api key: ListIdentityLinks",
  "api key: ListInventoryObjects",
  "api key: ListIntegrationClouds",
  "api rate limit",
  "api clock",
  "reports chromium",
  "reports signing key",
  "reports report directories",
  "reports archive directory",
];

describe("sessionhouse doctor", () => {
  it("against the simulator and the embedded engine: exit 0, one line for every check (the built CLI)", async () => {
    const r = await doctor({}, [], "child");
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const check of EVERY_CHECK) line(r, check);
    expect(line(r, "clickhouse grants")).toMatch(/^ok\s.*embedded: all rights/);
    expect(line(r, "api key: ListSessionsV2")).toMatch(
      /^ok\s.*the key is accepted/,
    );
    expect(line(r, "api rate limit")).toMatch(/x-ratelimit-limit 6000/);
    expect(line(r, "api clock")).toMatch(/^ok\s.*warned above 30 s/);
    expect(line(r, "data-dir mode")).toMatch(/^ok\s.*mode 0700/);
    // The browser check runs here only (the in-process runs find no Chromium on their PATH).
    if (findChromium(undefined).found)
      expect(line(r, "reports chromium")).toMatch(
        /^ok\s.*printed a one-page PDF/,
      );
    expect(line(r, "clickhouse cluster")).toMatch(
      /^skipped\s.*CLICKHOUSE_CLUSTER is not set/,
    );
    expect(r.stdout).not.toMatch(/^fail\s/m);
    expect(warned(r), r.stdout).toEqual(machineWarnings());
  }, 120_000);

  it("--json: the overall status and every check with its family, status, what was found", async () => {
    const r = await doctor({}, ["--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as DoctorJson;
    expect(report.status).toBe(machineWarnings().length > 0 ? "warn" : "ok");
    expect(report.checks.map((c) => `${c.family} ${c.name}`)).toEqual(
      EVERY_CHECK,
    );
    for (const c of report.checks) {
      expect(["ok", "warn", "fail", "skipped"]).toContain(c.status);
      expect(c.found.length, `${c.family} ${c.name}`).toBeGreaterThan(0);
    }
    expect(report.checks.find((c) => c.name === "key: GetUser")).toMatchObject({
      family: "api",
      status: "ok",
    });
  }, 120_000);

  it("hot days without a cold volume, and a variable nothing reads: warnings that name them and what to do, exit 0", async () => {
    const r = await doctor({
      SESSIONHOUSE_HOT_DAYS: "30",
      SESSIONHOUSE_PAGESIZE: "5000",
      SESSIONHOUSE_LOG_LEVLE: "debug",
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(line(r, "clickhouse tiers")).toMatch(
      /^warn\s.*hotDays is set for sessions, and no storage policy has a volume cold: rows stay where they are.*fix: .*SESSIONHOUSE_COLD_VOLUME/,
    );
    expect(line(r, "config environment")).toMatch(
      /^warn\s.*SESSIONHOUSE_LOG_LEVLE is set, and no setting reads it \(did you mean SESSIONHOUSE_LOG_LEVEL\?\); SESSIONHOUSE_PAGESIZE is set, and no setting reads it \(did you mean SESSIONHOUSE_PAGE_SIZE\?\).*fix: rename SESSIONHOUSE_LOG_LEVLE to SESSIONHOUSE_LOG_LEVEL, or unset it/,
    );
    expect(warned(r), r.stdout).toEqual(
      [...machineWarnings(), "clickhouse tiers", "config environment"].sort(
        (a, b) => EVERY_CHECK.indexOf(a) - EVERY_CHECK.indexOf(b),
      ),
    );
    expect(r.stdout).toMatch(
      new RegExp(`, ${2 + machineWarnings().length} warn, 0 fail,`),
    );
  }, 120_000);

  it("a configuration that does not load, or a schedule that does not parse: exit 2 naming the setting", async () => {
    const invalid = await doctor({ SESSIONHOUSE_PAGE_SIZE: "0" });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/SESSIONHOUSE_PAGE_SIZE must be at least 1/);
    expect(invalid.stdout).toBe("");
    const schedule = await doctor({
      SESSIONHOUSE_ROLLUP_SCHEDULE: "every hour",
    });
    expect(schedule.code).toBe(2);
    expect(schedule.stderr).toMatch(
      /schedule of job rollups: "every hour" is not a cron schedule/,
    );
  }, 120_000);

  it("a wrong key: one failure, the first read's, naming the refusal, the setting to fix and how many other reads it covers, exit 1", async () => {
    const wrong = "not-the-key-3c9e1f77aa";
    const r = await doctor({ SESSIONHOUSE_API_KEY: wrong });
    expect(r.code).toBe(1);
    const keyLines = r.stdout
      .split("\n")
      .filter((l) => /^\S+\s+api key: /.test(l));
    expect(keyLines.length).toBeGreaterThan(2);
    expect(keyLines.filter((l) => l.startsWith("fail"))).toEqual([
      line(r, "api key: ListSessionsV2"),
    ]);
    expect(line(r, "api key: ListSessionsV2")).toMatch(
      new RegExp(
        `^fail\\s.*the key is refused \\(unauthenticated.*; and ${keyLines.length - 1} more operations refused the same key \\(.*GetUser.*\\).*fix: .*SESSIONHOUSE_API_KEY`,
      ),
    );
    for (const op of ["ListLogAggregations", "GetUser"])
      expect(line(r, `api key: ${op}`)).toMatch(
        /^skipped\s.*the key is refused as for ListSessionsV2 \(unauthenticated\)/,
      );
    expect(line(r, "api reachable")).toMatch(/^ok\s/);
    expect(r.stderr).toMatch(
      /error: 1 check failed: api key: ListSessionsV2$/m,
    );
    expect(r.stdout + r.stderr).not.toContain(wrong.slice(0, 10));
  }, 120_000);

  it.runIf(hasOpenssl)(
    "TLS: a certificate of a private CA fails with the setting to fix; SESSIONHOUSE_API_CA_FILE makes it trusted",
    async () => {
      const { caFile, key, cert } = makeCertificates();
      const proxy = await recordingProxy(sim.url, { key, cert });
      try {
        const untrusted = await doctor({ SESSIONHOUSE_API_URL: proxy.url });
        expect(untrusted.code).toBe(1);
        expect(line(untrusted, "api tls")).toMatch(
          /^fail\s.*is not trusted by the system's CAs.*fix: .*SESSIONHOUSE_API_CA_FILE/,
        );
        expect(line(untrusted, "api key: ListSessionsV2")).toMatch(
          /^skipped\s/,
        );
        const trusted = await doctor({
          SESSIONHOUSE_API_URL: proxy.url,
          SESSIONHOUSE_API_CA_FILE: caFile,
        });
        expect(trusted.code, trusted.stdout).toBe(0);
        expect(line(trusted, "api tls")).toMatch(
          new RegExp(
            `^ok\\s.*trusted by the CA in SESSIONHOUSE_API_CA_FILE ${caFile}`,
          ),
        );
      } finally {
        await proxy.close();
      }
    },
    120_000,
  );

  it("an API that does not answer: reachable fails with the fix, the key checks say why they are skipped", async () => {
    const port = await closedPort();
    const r = await doctor({
      SESSIONHOUSE_API_URL: `http://127.0.0.1:${port}`,
    });
    expect(r.code).toBe(1);
    expect(line(r, "api reachable")).toMatch(
      /^fail\s.*does not answer: .*ECONNREFUSED.*fix: .*check SESSIONHOUSE_API_URL/,
    );
    expect(line(r, "api key: GetUser")).toMatch(
      /^skipped\s.*no answer from the API/,
    );
    expect(line(r, "api clock")).toMatch(/^skipped\s/);
  }, 120_000);

  it("ClickHouse that does not answer: reachable fails with the fix, the other ClickHouse checks say why they are skipped", async () => {
    const port = await closedPort();
    const r = await doctor({
      CLICKHOUSE_URL: `http://default:ch-secret-password-77@127.0.0.1:${port}`,
    });
    expect(r.code).toBe(1);
    expect(line(r, "clickhouse reachable")).toMatch(
      new RegExp(
        `^fail\\s.*127\\.0\\.0\\.1:${port} cannot be reached.*fix: check CLICKHOUSE_URL`,
      ),
    );
    expect(line(r, "clickhouse grants")).toMatch(
      /^skipped\s.*see clickhouse reachable/,
    );
    expect(line(r, "data-dir mode")).toMatch(
      /^skipped\s.*CLICKHOUSE_URL is set/,
    );
    expect(r.stdout + r.stderr).not.toContain("ch-secret-password-77");
  }, 120_000);

  describe("a user that may not write (the HTTP front's read-only access)", () => {
    let front: HttpFront;
    beforeAll(async () => {
      const frontDir = join(root, "front");
      mkdirSync(frontDir, { mode: 0o700 });
      front = await startHttpFront({
        path: frontDir,
        auth: { token: FRONT_TOKEN },
        readonly: true,
      });
    });
    afterAll(async () => {
      await front?.close();
    });

    it("the grants and insert settings checks fail, naming readonly and what to give the user; a Grafana reader the server does not have fails", async () => {
      const url = new URL(front.url);
      url.username = "exporter";
      url.password = FRONT_TOKEN;
      const r = await doctor({
        CLICKHOUSE_URL: url.href,
        GRAFANA_CLICKHOUSE_USER: "grafana_reader",
      });
      expect(r.code).toBe(1);
      expect(line(r, "clickhouse reachable")).toMatch(/^ok\s.*the server at/);
      expect(line(r, "clickhouse grafana reader")).toMatch(
        /^fail\s.*grafana_reader does not exist on the server.*fix: run dashboards\/provisioning\/clickhouse\/grafana-reader.sh again/,
      );
      expect(line(r, "clickhouse grants")).toMatch(
        /^fail\s.*user exporter runs with readonly = 1: no INSERT.*fix: give exporter a settings profile with readonly = 0/,
      );
      expect(line(r, "clickhouse insert settings")).toMatch(
        /^fail\s.*does not let the exporter's inserts set async_insert=0.*fix: .*not readonly=1/,
      );
      expect(r.stdout + r.stderr).not.toContain(FRONT_TOKEN);
    }, 120_000);
  });

  it("a data directory its owner may not write to (0500): the mode check fails with the chmod to run", async () => {
    chmodSync(dataDir, 0o500);
    try {
      const r = await doctor();
      expect(r.code).toBe(1);
      expect(line(r, "data-dir mode")).toMatch(
        new RegExp(
          `^fail\\s.*${dataDir} has mode 0500: its owner may not read, write and enter it.*fix: chmod 0700 ${dataDir}`,
        ),
      );
    } finally {
      chmodSync(dataDir, 0o700);
    }
  }, 120_000);

  it("a data directory held by sessionhouse run: the held check fails with its pid", async () => {
    const service = cli.startCli(
      pkg,
      ["run"],
      env({
        SESSIONHOUSE_LOG_LEVEL: "info",
        SESSIONHOUSE_LOG_FORMAT: "json",
        SESSIONHOUSE_OPS_PORT: "0",
        SESSIONHOUSE_STREAMS: "false",
      }),
    );
    try {
      const deadline = Date.now() + 90_000;
      while (!service.logs.some((l) => l.msg === "service started")) {
        if (service.child.exitCode !== null || Date.now() > deadline)
          throw new Error(
            `run did not start: ${(await service.result).stderr}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // The service logged its own preflight at start: the data directory was free then.
      expect(
        service.logs.find((l) => l.check === "data-dir held"),
      ).toMatchObject({ status: "ok" });
      const r = await doctor();
      expect(r.code).toBe(1);
      expect(line(r, "data-dir held")).toMatch(
        new RegExp(
          `^fail\\s.*held by sessionhouse run \\(pid ${service.child.pid}\\).*fix: stop that service`,
        ),
      );
      expect(line(r, "clickhouse grants")).toMatch(
        /^skipped\s.*read through the running service/,
      );
    } finally {
      service.child.kill("SIGTERM");
      await service.result;
    }
  }, 180_000);
});
