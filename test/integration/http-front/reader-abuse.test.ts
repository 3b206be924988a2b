// What a reader (the readers' token of the read access, started as `sessionhouse run` starts it)
// can do to the host and to other clients through the HTTP front: every setting of the engine that
// names a file, a path, a schema, a directory or a URL, every output format, the statements that
// readonly = 1 alone lets run (SYSTEM, KILL, INTO OUTFILE) and the tables that show other
// clients' SQL. Each is refused or harmless: afterwards no file under the data directory, the
// temporary directory or the directories around them has changed (names, sizes, mtimes, modes,
// contents), the service file is whole, and the read access still answers.
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { blockFileDir } from "../../../src/warehouse/block-files.js";
import { READER_SETTINGS } from "../../../src/warehouse/reader-settings.js";
import {
  serviceFilePath,
  type ServiceRecord,
} from "../../../src/warehouse/service-access.js";
import {
  startReadAccess,
  type ReadAccess,
} from "../../../src/http-front/index.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";
import { mkdtempSync } from "node:fs";

// Everything the test lets a reader aim at lives under `root`: the data directory two levels down
// (so that `../../x` from the working directory lands in `root`), the temporary directory (the
// front's spool and the OS's), and the working directory itself.
const root = mkdtempSync(join(testTmpDir(), "reader-abuse-"));
const dataDir = join(root, "a", "b", "data");
const tmp = join(root, "tmp");
const cwd = join(root, "a", "b");
const previousCwd = process.cwd();
const previousTmp = process.env.TMPDIR;

let w: Warehouse;
let reads: ReadAccess;
let record: ServiceRecord;
let before: Map<string, string>;

beforeAll(async () => {
  mkdirSync(tmp, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  process.env.TMPDIR = tmp;
  process.chdir(cwd);
  // The front's spool directory, made now rather than by the first request.
  blockFileDir();
  w = await migratedWarehouse(
    await testConfig({ SESSIONHOUSE_DATA_DIR: dataDir, CLICKHOUSE_URL: "" }),
  );
  await w.client.command({
    query: `INSERT INTO \`${w.database}\`.checkpoints (stream, position) VALUES ('probe', now64(3))`,
  });
  reads = await startReadAccess({
    dataDir: w.location,
    database: w.database,
    host: "127.0.0.1",
    port: 0,
    maxExecutionTimeS: 10,
    maxMemoryUsage: 2 ** 30,
    maxResultRows: 100_000,
    maxResultBytes: 2 ** 28,
  });
  record = JSON.parse(
    readFileSync(serviceFilePath(w.location), "utf8"),
  ) as ServiceRecord;
  // The engine's own background work (merges of what was just written) would change files.
  await w.client.command({ query: "SYSTEM STOP MERGES" });
  before = tree(root);
}, 120_000);

afterAll(async () => {
  await reads?.close();
  await w?.close();
  process.chdir(previousCwd);
  if (previousTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmp;
});

/**
 * Every entry under `dir`: a file's mode, size, mtime and content's hash; a directory's mode. A
 * directory's mtime is left out: it moves when a file is made and removed again, as the engine
 * does with the schema it generates for a Protobuf answer (a file of its own making, in the
 * temporary directory, gone when the answer is) — a file left behind or changed shows here.
 */
function tree(
  dir: string,
  out = new Map<string, string>(),
): Map<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const s = lstatSync(path);
    if (s.isDirectory()) {
      out.set(path, `directory ${s.mode}`);
      tree(path, out);
      continue;
    }
    const content = s.isFile()
      ? createHash("sha256").update(readFileSync(path)).digest("hex")
      : "";
    out.set(path, `${s.mode} ${s.size} ${s.mtimeMs} ${content}`);
  }
  return out;
}

/** What changed between two trees: entries added, removed or different. */
function changes(a: Map<string, string>, b: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of b)
    if (a.get(k) !== v) out.push(`${a.has(k) ? "changed" : "added"} ${k}`);
  for (const k of a.keys()) if (!b.has(k)) out.push(`removed ${k}`);
  return out;
}

interface Answer {
  status: number;
  code: string | undefined;
  text: string;
}

/** A request with the readers' token (or `token`): the statement in the body. */
async function ask(
  sql: string,
  params: Record<string, string> = {},
  token = record.readerToken ?? "",
): Promise<Answer> {
  const url = new URL("/", record.url);
  for (const [k, v] of Object.entries(params)) url.searchParams.append(k, v);
  const r = await request(url, {
    method: "POST",
    body: sql,
    headers: { Authorization: `Bearer ${token}` },
  });
  const text = Buffer.from(await r.body.arrayBuffer()).toString("utf8");
  const code = r.headers["x-clickhouse-exception-code"];
  return {
    status: r.statusCode,
    code: typeof code === "string" ? code : undefined,
    text,
  };
}

/** Rows of a query the owner's token runs, as JSON objects. */
async function ownerRows<T>(sql: string): Promise<T[]> {
  const a = await ask(`${sql} FORMAT JSONEachRow`, {}, record.token);
  expect(a.status, a.text).toBe(200);
  return a.text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as T);
}

describe("a reader of the read access", () => {
  it("cannot make the engine write its Protobuf schema over the service file, or anywhere (the reported curl)", async () => {
    const service = serviceFilePath(w.location);
    const at = await ask("SELECT 1 AS x FORMAT Protobuf", {
      output_format_schema: service,
    });
    expect(at.status, at.text).not.toBe(200);
    expect(at.code).toBe("164");
    expect(at.text).toContain("Cannot modify 'output_format_schema' setting");
    const relative = await ask("SELECT 1 AS x FORMAT Protobuf", {
      output_format_schema: "../../pwned.proto",
    });
    expect(relative.status, relative.text).not.toBe(200);
    expect(JSON.parse(readFileSync(service, "utf8"))).toEqual(record);
  });

  it("is refused every setting that names a file, a path, a schema, a directory or a URL", async () => {
    const settings = await ownerRows<{ name: string; type: string }>(
      "SELECT name, type FROM system.settings WHERE match(concat(name, ' ', description), '(?i)file|path|schema|director|url')",
    );
    expect(settings.length).toBeGreaterThan(50);
    const accepted: string[] = [];
    for (const { name, type } of settings) {
      const values = /^(String|URI|Char)$/.test(type)
        ? [join(root, `pwned-${name}`), `../../pwned-${name}`]
        : ["1"];
      for (const value of values) {
        const a = await ask("SELECT 1 AS x FORMAT Protobuf", { [name]: value });
        if (a.status === 200) accepted.push(name);
      }
    }
    // Only the readers' own settings get through, and they name nothing (the tree, below).
    expect(accepted.filter((n) => !READER_SETTINGS.has(n))).toEqual([]);
  });

  it("answers or refuses every output format, writing nothing", async () => {
    const formats = await ownerRows<{ name: string }>(
      "SELECT name FROM system.formats WHERE is_output ORDER BY name",
    );
    expect(formats.length).toBeGreaterThan(30);
    for (const { name } of formats)
      await ask(`SELECT 1 AS x, 'a' AS s FORMAT \`${name}\``);
  });

  it.each([
    ["SYSTEM STOP MERGES", "164"],
    ["SYSTEM START MERGES", "164"],
    ["KILL QUERY WHERE 1", "164"],
    ["SELECT 1 INTO OUTFILE 'pwned-outfile.tsv'", "358"],
    [`SELECT 1 INTO OUTFILE '${join(root, "pwned-outfile.tsv")}'`, "358"],
  ])("is refused %s", async (sql, code) => {
    const a = await ask(sql);
    expect(a.status, a.text).not.toBe(200);
    expect(a.code, a.text).toBe(code);
  });

  it("sees no other client's query, in system.processes or any other way to it", async () => {
    const marker = "sh-marker-7c1f0b";
    // Another client's query, running while the reader looks.
    const other = ask(`SELECT sleep(1), '${marker}'`, {}, record.token);
    await new Promise((r) => setTimeout(r, 200));
    const attempts: [string, Record<string, string>][] = [
      ["SELECT query FROM system.processes", {}],
      ["SHOW PROCESSLIST", {}],
      ["SELECT query FROM processes", { database: "system" }],
      ["SELECT * FROM {d:Identifier}.processes", { param_d: "system" }],
      ["SELECT * FROM merge('system', '^processes$')", {}],
      ["SELECT * FROM view(SELECT query FROM system.processes)", {}],
      ["SELECT 1 WHERE ('x') IN system.processes", {}],
      ["SELECT count() FROM system.query_cache", {}],
      ["SELECT * FROM (SELECT query FROM system.processes)", {}],
      ["WITH (SELECT any(query) FROM system.processes) AS q SELECT q", {}],
    ];
    for (const [sql, params] of attempts) {
      const a = await ask(sql, params);
      expect(a.status, `${sql}: ${a.text}`).not.toBe(200);
      expect(a.text).not.toContain(marker);
    }
    expect((await other).status).toBe(200);
  });

  it("still reads what Grafana reads: databases, tables, columns and the warehouse", async () => {
    const db = w.database;
    const asGrafana = { database: db, max_execution_time: "30" };
    for (const sql of [
      "SELECT version()",
      "SHOW DATABASES",
      `SHOW TABLES FROM "${db}"`,
      `DESC TABLE "${db}"."checkpoints"`,
      "SELECT database, name FROM system.tables ORDER BY database, name",
      `SELECT name, type, table FROM system.columns WHERE database IN ('${db}')`,
      "SELECT name FROM system.functions LIMIT 1",
      "WITH c AS (SELECT stream FROM checkpoints) SELECT count() FROM c",
      "SELECT number FROM numbers(3)",
    ]) {
      const a = await ask(sql, asGrafana);
      expect(a.status, `${sql}: ${a.text}`).toBe(200);
    }
    expect(
      (
        await ask(
          "SELECT stream FROM checkpoints WHERE stream = 'probe'",
          asGrafana,
        )
      ).text,
    ).toBe("probe\n");
  });

  it("left every file under the data and temporary directories as it was, and the access answers", async () => {
    expect(changes(before, tree(root))).toEqual([]);
    expect((await ask("SELECT 1", {}, record.token)).text).toBe("1\n");
  });
});
