// Secrets never in logs, errors, the runs table, `status --json` or /metrics, tested the hard way: an API that echoes the key back in its error messages, a key
// read from a file, a password inside CLICKHOUSE_URL. Every byte the CLI writes is grepped.
// The CLI runs as a child for every case, not in this process (cli-in-process.ts): a process
// scrubs every secret any of its loggers was given from all later output (rememberedSecrets in
// src/util/logger.ts), so in one process a run would pass on a secret an earlier run learned
// (the key from a file, after the same key from the environment), and the logs are written to
// file descriptor 1 (pino's destination), past process.stdout.write.
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { openWarehouse } from "../../../src/warehouse/client.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import {
  buildCli,
  removeCli,
  cleanEnv,
  runCli,
  startCli,
  type CliPackage,
  type CliResult,
} from "../../helpers/cli.js";
import {
  connectError,
  scriptedServer,
  type TestServer,
} from "../../helpers/servers.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const KEY = "sk-live-7c1e9a40b2d84f65";
const PASSWORD = "pw-3a9d7e1c55";
let cli: CliPackage;
let echo: TestServer;
let config: Config;
let dir: string;
const outputs: string[] = [];

beforeAll(async () => {
  cli = await buildCli();
  // A careless API: it puts the key it was sent into its error message and a header.
  echo = await scriptedServer((_n, req, res) =>
    connectError(
      res,
      400,
      "invalid_argument",
      `key ${String(req.headers["x-api-key"])} is not valid for tenant acme`,
      {
        "x-debug-key": String(req.headers["x-api-key"]),
      },
    ),
  );
  config = await testConfig({});
  // The migrated schema replayed (schema-template.ts), closed before any child opens it: the
  // children's `migrate` finds every file applied instead of running each (no case here is
  // about a first migration).
  await (await migratedWarehouse(config)).close();
  dir = mkdtempSync(join(testTmpDir(), "sessionhouse-secrets-"));
}, 120_000);

afterAll(async () => {
  await echo?.close();
  removeCli(cli);
});

function env(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  return cleanEnv({
    SESSIONHOUSE_API_URL: echo.url,
    SESSIONHOUSE_DATA_DIR: config.clickhouse.dataDir,
    CLICKHOUSE_DATABASE: config.clickhouse.database,
    CLICKHOUSE_URL: config.clickhouse.url,
    SESSIONHOUSE_LOG_LEVEL: "trace",
    SESSIONHOUSE_LOG_FORMAT: "json",
    ...extra,
  });
}

function keep(r: CliResult): CliResult {
  outputs.push(r.stdout, r.stderr);
  return r;
}

describe("secrets", () => {
  it("an echoed key reaches neither stdout, stderr, the runs table nor status --json", async () => {
    const r = keep(
      await runCli(
        cli,
        ["sync", "sessions", "--from", "-2h"],
        env({ SESSIONHOUSE_API_KEY: KEY }),
      ),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /invalid_argument .*key \[REDACTED\] is not valid/,
    );
    expect(r.logs.length).toBeGreaterThan(2);

    // The key from a file: the CLI only learns it from the configuration.
    const keyFile = join(dir, "api-key");
    writeFileSync(keyFile, `${KEY}\n`);
    const f = keep(
      await runCli(
        cli,
        ["sync", "sessions", "--from", "-2h"],
        env({ SESSIONHOUSE_API_KEY_FILE: keyFile }),
      ),
    );
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(/key \[REDACTED\] is not valid/);

    // And from a config file.
    const configFile = join(dir, "config.yaml");
    writeFileSync(configFile, `api:\n  apiKey: ${KEY}\n`);
    const c = keep(
      await runCli(
        cli,
        ["--config", configFile, "sync", "sessions", "--from", "-2h"],
        env({}),
      ),
    );
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/key \[REDACTED\] is not valid/);

    const status = keep(
      await runCli(
        cli,
        ["status", "--json"],
        env({ SESSIONHOUSE_API_KEY: KEY }),
      ),
    );
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/REDACTED/);

    const w = await openWarehouse(config);
    try {
      const runs = await select<{ error: string }>(
        w,
        "SELECT error FROM {db}.runs FINAL WHERE status = 'failed'",
      );
      expect(runs).toHaveLength(3);
      for (const run of runs)
        expect(run.error).toMatch(/key \[REDACTED\] is not valid/);
    } finally {
      await w.close();
    }
  });

  it("a password inside CLICKHOUSE_URL or CLICKHOUSE_PASSWORD is never printed", async () => {
    for (const extra of [
      { CLICKHOUSE_URL: `http://default:${PASSWORD}@127.0.0.1:1` },
      { CLICKHOUSE_URL: "http://127.0.0.1:1", CLICKHOUSE_PASSWORD: PASSWORD },
    ]) {
      for (const args of [
        ["status", "--json"],
        ["migrate"],
        ["sync", "sessions"],
        ["query", "SELECT 1"],
      ]) {
        const r = keep(
          await runCli(cli, args, env({ SESSIONHOUSE_API_KEY: KEY, ...extra })),
        );
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(1);
        expect(r.stderr).toMatch(
          /ClickHouse at http:\/\/127\.0\.0\.1:1 cannot be reached/,
        );
      }
    }
  });

  it("/metrics, /readyz and the logs of the service hold no key", async () => {
    const configFile = join(dir, "service.yaml");
    writeFileSync(
      configFile,
      [
        "service:",
        "  opsPort: 0",
        "sessions:",
        '  schedule: "* * * * * *"',
        "aggregations:",
        "  jobs: []",
        "",
      ].join("\n"),
    );
    const service = startCli(
      cli,
      ["--config", configFile, "run"],
      env({ SESSIONHOUSE_API_KEY: KEY, SESSIONHOUSE_LOG_LEVEL: "debug" }),
    );
    try {
      const deadline = Date.now() + 60_000;
      let opsUrl: string | undefined;
      // Wait for the ops server and for a failed run (the echoing API refuses every call).
      for (;;) {
        opsUrl ??= service.logs.find((l) => l.msg === "ops server listening")
          ?.url as string | undefined;
        if (opsUrl && service.logs.some((l) => l.msg === "run failed")) break;
        if (Date.now() > deadline || service.child.exitCode !== null) {
          throw new Error(
            `the service did not fail a run: ${JSON.stringify(service.logs.slice(-5))}`,
          );
        }
        await new Promise<void>((resolve) => setTimeout(resolve, 200));
      }
      for (const path of ["/metrics", "/readyz", "/healthz"]) {
        const body = await (await fetch(`${opsUrl}${path}`)).text();
        outputs.push(body);
        expect(body.length, path).toBeGreaterThan(0);
        expect(body, path).not.toContain(KEY);
      }
    } finally {
      service.child.kill("SIGTERM");
      const r = keep(await service.result);
      expect(r.code).toBe(0);
    }
  });

  it("no output of any command held the key or the password", () => {
    expect(outputs.length).toBeGreaterThan(10);
    for (const o of outputs) {
      expect(o).not.toContain(KEY);
      expect(o).not.toContain(PASSWORD);
    }
  });
});

describe("short secrets and extra headers", () => {
  // A key of three characters and a token in an extra header: both echoed by the API.
  const SHORT_KEY = "k3y";
  const TOKEN = "tok-5e6f7a8b9c";
  let careless: TestServer | undefined;

  afterAll(async () => {
    await careless?.close();
  });

  it("are scrubbed from stderr, every JSON log line and runs.error, which stay readable", async () => {
    careless = await scriptedServer((_n, req, res) =>
      connectError(
        res,
        400,
        "invalid_argument",
        `key ${String(req.headers["x-api-key"])} with ${String(req.headers.authorization)} (token ${String(req.headers.authorization).split(" ")[1]}) is not valid for tenant globex`,
      ),
    );
    const r = await runCli(
      cli,
      ["sync", "sessions", "--from", "-2h"],
      cleanEnv({
        SESSIONHOUSE_API_URL: careless.url,
        SESSIONHOUSE_API_KEY: SHORT_KEY,
        SESSIONHOUSE_API_EXTRA_HEADERS: `Authorization: Bearer ${TOKEN}`,
        SESSIONHOUSE_DATA_DIR: config.clickhouse.dataDir,
        CLICKHOUSE_DATABASE: config.clickhouse.database,
        CLICKHOUSE_URL: config.clickhouse.url,
        SESSIONHOUSE_LOG_LEVEL: "trace",
        SESSIONHOUSE_LOG_FORMAT: "json",
      }),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /key \[REDACTED\] with \[REDACTED\] \(token \[REDACTED\]\) is not valid for tenant globex/,
    );
    // Every stdout line is still a JSON log line, and the failure was logged.
    const lines = r.stdout.split("\n").filter((l) => l !== "");
    expect(lines.length).toBeGreaterThan(2);
    expect(r.logs).toHaveLength(lines.length);
    expect(r.stdout).toMatch(/is not valid for tenant globex/);
    // The warning names the short key by its setting, never by its value.
    expect(
      r.logs.some(
        (l) =>
          l.level === 40 &&
          String(l.setting).startsWith("SESSIONHOUSE_API_KEY"),
      ),
    ).toBe(true);
    for (const out of [r.stdout, r.stderr]) {
      expect(out).not.toContain(SHORT_KEY);
      expect(out).not.toContain(TOKEN);
    }

    const w = await openWarehouse(config);
    try {
      const runs = await select<{ error: string }>(
        w,
        "SELECT error FROM {db}.runs FINAL WHERE error LIKE '%tenant globex%'",
      );
      expect(runs).toHaveLength(1);
      expect(runs[0]?.error).toMatch(
        /key \[REDACTED\] with \[REDACTED\] \(token \[REDACTED\]\)/,
      );
    } finally {
      await w.close();
    }
  });
});
