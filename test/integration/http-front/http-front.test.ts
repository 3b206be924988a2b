// The ClickHouse HTTP front over a real embedded engine: first against the documented HTTP
// interface with raw requests, then with @clickhouse/client, then as the server of
// openWarehouse (CLICKHOUSE_URL) running the migrations and the server insert path.
import {
  ClickHouseLogLevel,
  createClient,
  type ClickHouseClient,
} from "@clickhouse/client";
import { mkdtempSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import {
  brotliDecompressSync,
  deflateSync,
  gunzipSync,
  gzipSync,
} from "node:zlib";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import {
  startHttpFront,
  type HttpFront,
} from "../../../src/http-front/index.js";
import { parseSession } from "../../../src/api/schemas/session.js";
import { insertBlock, insertLines } from "../../../src/warehouse/insert.js";
import { RowBlock } from "../../../src/warehouse/row-block.js";
import {
  SessionInputs,
  SESSION_ROWS,
} from "../../../src/warehouse/session-rows.js";
import { migrate, readMigrations } from "../../../src/warehouse/migrate.js";
import { freshDatabaseName, testConfig } from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let dataDir: string;
let spoolDir: string;
/** Read-write, no authentication. */
let front: HttpFront;
/** Read-write, one user and password. */
let locked: HttpFront;
/** Readonly, a token, a one-second cap on execution time, results of 100 rows and 1 MiB. */
let reader: HttpFront;

const TOKEN = "s3cret-t0ken";

beforeAll(async () => {
  dataDir = mkdtempSync(join(testTmpDir(), "http-front-engine-"));
  spoolDir = mkdtempSync(join(testTmpDir(), "http-front-spool-"));
  front = await startHttpFront({ path: dataDir, tempDir: spoolDir });
  locked = await startHttpFront({
    path: dataDir,
    auth: { user: "loader", password: "pa:ss word" },
  });
  reader = await startHttpFront({
    path: dataDir,
    auth: { token: TOKEN },
    readonly: true,
    maxExecutionTimeS: 1,
    maxResultRows: 100,
    maxResultBytes: 1 << 20,
  });
});

afterAll(async () => {
  await Promise.all([front?.close(), locked?.close(), reader?.close()]);
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  text: string;
}

async function call(
  to: HttpFront,
  params: Record<string, string> = {},
  init: {
    method?: "GET" | "POST" | "HEAD" | "PUT";
    body?: string | Buffer;
    headers?: Record<string, string>;
    path?: string;
  } = {},
): Promise<Answer> {
  const url = new URL(init.path ?? "/", to.url);
  for (const [k, v] of Object.entries(params)) url.searchParams.append(k, v);
  const r = await request(url, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    ...(init.body === undefined ? {} : { body: init.body }),
    headers: init.headers ?? {},
  });
  const body = Buffer.from(await r.body.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers))
    if (typeof v === "string") headers[k] = v;
  return { status: r.statusCode, headers, body, text: body.toString("utf8") };
}

/** POSTs a statement in the body to the read-write front; fails the test on an error. */
async function run(
  sql: string,
  params: Record<string, string> = {},
): Promise<string> {
  const a = await call(front, params, { body: sql });
  expect(a.status, a.text).toBe(200);
  return a.text;
}

/** A value in ClickHouse's escaped format, as param_<name> carries it. */
function escaped(s: string): string {
  return s.replace(/[\\\t\n\r']/g, (c) =>
    c === "\t" ? "\\t" : c === "\n" ? "\\n" : c === "\r" ? "\\r" : "\\" + c,
  );
}

function expectError(a: Answer, code: number, name: string, status: number) {
  expect(a.status, a.text).toBe(status);
  expect(a.headers["x-clickhouse-exception-code"]).toBe(String(code));
  expect(a.text).toMatch(
    new RegExp(
      `^Code: ${code}\\. DB::Exception: .*\\(${name}\\) \\(version [0-9.]+\\)\\n$`,
      "s",
    ),
  );
}

describe("the HTTP interface, as documented", () => {
  it("answers /ping and a bare GET / with Ok.", async () => {
    for (const path of ["/ping", "/", "/replicas_status"]) {
      const a = await call(front, {}, { path });
      expect(a.status).toBe(200);
      expect(a.text).toBe("Ok.\n");
    }
    // /ping needs no credentials, like the server's.
    expect((await call(locked, {}, { path: "/ping" })).text).toBe("Ok.\n");
  });

  it("answers HEAD without a body", async () => {
    const ping = await call(front, {}, { path: "/ping", method: "HEAD" });
    expect(ping.status).toBe(200);
    expect(ping.body.length).toBe(0);
    const q = await call(front, { query: "SELECT 1" }, { method: "HEAD" });
    expect(q.status).toBe(200);
    expect(q.headers["x-clickhouse-format"]).toBe("TabSeparated");
    expect(q.body.length).toBe(0);
  });

  it("serves an engine session it was given, and leaves it open", async () => {
    const { Session } = await import("chdb");
    const session = new Session(dataDir);
    const lent = await startHttpFront({ engine: session });
    expect((await call(lent, { query: "SELECT 40 + 2" })).text).toBe("42\n");
    await lent.close();
    expect(
      (await session.queryAsync("SELECT 1", { format: "TSV" })).text(),
    ).toBe("1\n");
    session.close();
  });

  it("takes the query from the URL, from the body, or starts it in the URL and ends it in the body", async () => {
    const url = await call(front, { query: "SELECT 1" });
    expect(url.status).toBe(200);
    expect(url.text).toBe("1\n");
    expect(url.headers["content-type"]).toBe(
      "text/tab-separated-values; charset=UTF-8",
    );
    expect(url.headers["x-clickhouse-format"]).toBe("TabSeparated");
    expect(url.headers["x-clickhouse-query-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(url.headers["x-clickhouse-timezone"]).toBeTruthy();

    expect((await call(front, {}, { body: "SELECT 1" })).text).toBe("1\n");
    expect((await call(front, { query: "" }, { body: "SELECT 1" })).text).toBe(
      "1\n",
    );
    // "a line feed is inserted between these two data parts"
    expect((await call(front, { query: "SELECT" }, { body: "1" })).text).toBe(
      "1\n",
    );
    const split = await call(front, { query: "SEL" }, { body: "ECT 1" });
    expectError(split, 62, "SYNTAX_ERROR", 400);

    const json = await call(
      front,
      { query_id: "my-query" },
      { body: "SELECT 1 AS one FORMAT JSONEachRow" },
    );
    expect(json.text).toBe('{"one":1}\n');
    expect(json.headers["content-type"]).toBe(
      "application/x-ndjson; charset=UTF-8",
    );
    expect(json.headers["x-clickhouse-format"]).toBe("JSONEachRow");
    expect(json.headers["x-clickhouse-query-id"]).toBe("my-query");
  });

  it("uses default_format and the X-ClickHouse-Format header when the query has no FORMAT", async () => {
    const a = await call(front, {
      default_format: "JSONCompact",
      query: "SELECT 2 AS two",
    });
    expect(JSON.parse(a.text)).toMatchObject({ data: [[2]], rows: 1 });
    expect(a.headers["content-type"]).toBe("application/json; charset=UTF-8");
    const b = await call(
      front,
      { query: "SELECT 3 AS x" },
      { headers: { "X-ClickHouse-Format": "CSVWithNames" } },
    );
    expect(b.text).toBe('"x"\n3\n');
    expect(b.headers["x-clickhouse-format"]).toBe("CSVWithNames");
  });

  it("reports X-ClickHouse-Summary as JSON strings", async () => {
    const a = await call(front, {
      query: "SELECT number FROM numbers(10) WHERE number > 6",
    });
    const summary = JSON.parse(
      a.headers["x-clickhouse-summary"] ?? "",
    ) as Record<string, string>;
    expect(Object.keys(summary).sort()).toEqual(
      [
        "elapsed_ns",
        "read_bytes",
        "read_rows",
        "result_bytes",
        "result_rows",
        "total_rows_to_read",
        "written_bytes",
        "written_rows",
      ].sort(),
    );
    for (const v of Object.values(summary)) expect(v).toMatch(/^\d+$/);
    expect(summary.result_rows).toBe("3");
    expect(Number(summary.elapsed_ns)).toBeGreaterThan(0);
  });

  it("selects the default database with the database parameter or the X-ClickHouse-Database header", async () => {
    await run("CREATE DATABASE IF NOT EXISTS front_db");
    await run(
      "CREATE TABLE IF NOT EXISTS front_db.things (n UInt32) ENGINE = MergeTree ORDER BY n",
    );
    await run("INSERT INTO front_db.things VALUES (1), (2), (3)");
    expect(
      (
        await call(front, {
          database: "front_db",
          query: "SELECT count() FROM things",
        })
      ).text,
    ).toBe("3\n");
    const byHeader = await call(
      front,
      { query: "SELECT currentDatabase()" },
      { headers: { "X-ClickHouse-Database": "front_db" } },
    );
    expect(byHeader.text).toBe("front_db\n");
    expectError(
      await call(front, { database: "no_such_db", query: "SELECT 1" }),
      81,
      "UNKNOWN_DATABASE",
      404,
    );
    // One request's database is not the next one's.
    expect(
      (await call(front, { query: "SELECT currentDatabase()" })).text,
    ).toBe("default\n");
  });

  it("binds param_<name> values, given in the escaped format, to {name:Type}", async () => {
    const tricky =
      'it\'s a \\ backslash, a\ttab, a\nline feed, "quotes", ünïcødé, 日本語, 🚀';
    const a = await call(
      front,
      {
        param_s: escaped(tricky),
        param_n: "18446744073709551615",
        param_arr: "['a\\'b','c\\\\d']",
        param_null: "\\N",
        param_t: "system",
        param_when: "2024-02-29 12:34:56",
      },
      {
        body: "SELECT {s:String} AS s, {n:UInt64} AS n, {arr:Array(String)} AS arr, {null:Nullable(String)} AS null, (SELECT count() FROM {t:Identifier}.one) AS c, {when:DateTime('UTC')} AS w FORMAT JSONEachRow SETTINGS output_format_json_quote_64bit_integers = 1",
      },
    );
    expect(a.status, a.text).toBe(200);
    expect(JSON.parse(a.text)).toEqual({
      s: tricky,
      n: "18446744073709551615",
      arr: ["a'b", "c\\d"],
      null: null,
      c: "1",
      w: "2024-02-29 12:34:56",
    });
    // A tab sent raw (%09) is a field separator in the escaped format, as the documentation shows.
    const raw = await call(
      front,
      { param_arg1: "abc\t123" },
      { body: "SELECT splitByChar('\\t', {arg1:String})" },
    );
    expectError(raw, 457, "BAD_QUERY_PARAMETER", 500);
    expect(
      (
        await call(
          front,
          { param_arg1: "abc\\\t123" },
          { body: "SELECT splitByChar('\\t', {arg1:String})" },
        )
      ).text,
    ).toBe("['abc','123']\n");
    expectError(
      await call(front, {}, { body: "SELECT {missing:String}" }),
      456,
      "UNKNOWN_QUERY_PARAMETER",
      500,
    );
  });

  it("takes a URL as long as a server does (query parameters of hundreds of kilobytes)", async () => {
    // Node's own limit is 16 KiB of request line and headers; ClickHouse's http_max_uri_size is 1 MiB.
    const ids = Array.from({ length: 20_000 }, (_, i) => `'id-${i}'`);
    const a = await call(
      front,
      { param_ids: `[${ids.join(",")}]` },
      { body: "SELECT length({ids:Array(String)})" },
    );
    expect(a.status, a.text).toBe(200);
    expect(a.text).toBe("20000\n");
  });

  it("applies other URL parameters as settings of that request only", async () => {
    const a = await call(front, {
      max_threads: "3",
      query: "SELECT getSetting('max_threads')",
    });
    expect(a.text).toBe("3\n");
    expect(
      (await call(front, { query: "SELECT getSetting('max_threads') = 3" }))
        .text,
    ).toBe("0\n");
    const s = await call(front, {
      insert_deduplication_token: "it's \\ a token",
      query: "SELECT getSetting('insert_deduplication_token')",
    });
    expect(s.text).toBe("it\\'s \\\\ a token\n");
    expectError(
      await call(front, { no_such_setting: "1", query: "SELECT 1" }),
      115,
      "UNKNOWN_SETTING",
      404,
    );
    expectError(
      await call(front, { "max threads": "1", query: "SELECT 1" }),
      115,
      "UNKNOWN_SETTING",
      404,
    );
    // The settings of the HTTP layer are the front's, never the engine's.
    expect(
      (
        await call(front, {
          wait_end_of_query: "1",
          send_progress_in_http_headers: "1",
          query: "SELECT 1",
        })
      ).text,
    ).toBe("1\n");
  });

  it("reads a gzip or deflate body and compresses the answer when asked to", async () => {
    const gz = await call(
      front,
      {},
      {
        body: gzipSync("SELECT 'zipped'"),
        headers: { "Content-Encoding": "gzip" },
      },
    );
    expect(gz.text).toBe("zipped\n");
    const df = await call(
      front,
      {},
      {
        body: deflateSync("SELECT 'deflated'"),
        headers: { "Content-Encoding": "deflate" },
      },
    );
    expect(df.text).toBe("deflated\n");
    expectError(
      await call(
        front,
        {},
        { body: "not gzip at all", headers: { "Content-Encoding": "gzip" } },
      ),
      271,
      "CANNOT_DECOMPRESS",
      500,
    );
    expectError(
      await call(
        front,
        {},
        { body: "SELECT 1", headers: { "Content-Encoding": "snappy" } },
      ),
      48,
      "NOT_IMPLEMENTED",
      501,
    );

    const query = "SELECT number FROM numbers(1000)";
    const expected = Array.from({ length: 1000 }, (_, i) => `${i}\n`).join("");
    const plain = await call(
      front,
      { query },
      { headers: { "Accept-Encoding": "gzip" } },
    );
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.text).toBe(expected);
    const zipped = await call(
      front,
      { query, enable_http_compression: "1" },
      { headers: { "Accept-Encoding": "gzip" } },
    );
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(zipped.body).toString()).toBe(expected);
    const br = await call(
      front,
      { query, enable_http_compression: "1" },
      { headers: { "Accept-Encoding": "br" } },
    );
    expect(br.headers["content-encoding"]).toBe("br");
    expect(brotliDecompressSync(br.body).toString()).toBe(expected);
  });

  it("answers errors with the server's status, header and body", async () => {
    const syntax = await call(front, {}, { body: "SELEC 1" });
    expectError(syntax, 62, "SYNTAX_ERROR", 400);
    expect(syntax.text).toContain("Syntax error");
    expect(syntax.headers["x-clickhouse-summary"]).toBeUndefined();
    const table = await call(front, { query: "SELECT * FROM no_such_table" });
    expectError(table, 60, "UNKNOWN_TABLE", 404);
    expect(table.text).toContain("no_such_table");
    expectError(
      await call(front, {}, { body: "SELECT 1; SELECT 2" }),
      62,
      "SYNTAX_ERROR",
      400,
    );
    expect((await call(front, {}, { body: "SELECT 1;" })).text).toBe("1\n");
    expectError(
      await call(front, {}, { body: "  -- nothing\n" }),
      62,
      "SYNTAX_ERROR",
      400,
    );
    expectError(
      await call(front, {}, { body: "SELECT 1 INTO OUTFILE '/tmp/x.tsv'" }),
      358,
      "INTO_OUTFILE_NOT_ALLOWED",
      500,
    );
    expectError(
      await call(
        front,
        {},
        {
          body: "INSERT INTO front_db.things FROM INFILE '/etc/hostname' FORMAT LineAsString",
        },
      ),
      78,
      "UNKNOWN_TYPE_OF_QUERY",
      404,
    );
    expectError(
      await call(front, {}, { method: "PUT", body: "SELECT 1" }),
      1,
      "UNSUPPORTED_METHOD",
      405,
    );
  });

  it("inserts the body as the data of the statement in the URL, and counts the rows in the summary", async () => {
    await run(
      "CREATE TABLE IF NOT EXISTS events (id UInt32, name String) ENGINE = MergeTree ORDER BY id",
    );
    const rows =
      '{"id":1,"name":"a"}\n{"id":2,"name":"b;c"}\n{"id":3,"name":"d"}\n';
    const a = await call(
      front,
      { query: "INSERT INTO events FORMAT JSONEachRow" },
      { body: rows },
    );
    expect(a.status, a.text).toBe(200);
    expect(a.text).toBe("");
    const summary = JSON.parse(
      a.headers["x-clickhouse-summary"] ?? "",
    ) as Record<string, string>;
    expect(summary).toMatchObject({ written_rows: "3", read_rows: "3" });
    // The documented shapes: VALUES in the URL, FORMAT Values, TabSeparated, all in the body.
    await call(
      front,
      { query: "INSERT INTO events VALUES" },
      { body: "(4,'e'),(5,'f')" },
    );
    await call(
      front,
      { query: "INSERT INTO events FORMAT Values" },
      { body: "(6,'g')" },
    );
    await call(
      front,
      { query: "INSERT INTO events FORMAT TabSeparated" },
      { body: "7\th\n8\ti\n" },
    );
    await run("INSERT INTO events VALUES (9, 'j'), (10, 'k;l')");
    await run('INSERT INTO events FORMAT CSV\n11,"m"\n');
    // An empty body inserts nothing, and still needs the table to exist.
    expect(
      (
        await call(
          front,
          { query: "INSERT INTO events FORMAT JSONEachRow" },
          { method: "POST", body: "" },
        )
      ).status,
    ).toBe(200);
    expectError(
      await call(
        front,
        { query: "INSERT INTO no_such_table FORMAT JSONEachRow" },
        { body: '{"id":1}\n' },
      ),
      60,
      "UNKNOWN_TABLE",
      404,
    );
    expectError(
      await call(
        front,
        { query: "INSERT INTO events FORMAT JSONEachRow" },
        { body: '{"id":"x"}\n' },
      ),
      27,
      "CANNOT_PARSE_INPUT_ASSERTION_FAILED",
      400,
    );
    expect(await run("SELECT count(), max(id) FROM events")).toBe("11\t11\n");
    expect(
      await run("SELECT name FROM events WHERE id IN (2, 10) ORDER BY id"),
    ).toBe("b;c\nk;l\n");
  });

  it("streams a large body to a file the engine reads, gzip or not, with the statement in the URL or in the body", async () => {
    await run(
      "CREATE TABLE IF NOT EXISTS big (id UInt32, payload String) ENGINE = MergeTree ORDER BY id",
    );
    const lines: string[] = [];
    for (let i = 0; i < 60_000; i++)
      lines.push(JSON.stringify({ id: i, payload: "x".repeat(80) + i }));
    const body = lines.join("\n") + "\n"; // about 6 MiB
    const a = await call(
      front,
      { query: "INSERT INTO big FORMAT JSONEachRow" },
      { body },
    );
    expect(a.status, a.text).toBe(200);
    expect(JSON.parse(a.headers["x-clickhouse-summary"] ?? "")).toMatchObject({
      written_rows: "60000",
    });
    const zipped = await call(
      front,
      { query: "INSERT INTO big FORMAT JSONEachRow" },
      { body: gzipSync(body), headers: { "Content-Encoding": "gzip" } },
    );
    expect(zipped.status, zipped.text).toBe(200);
    const inBody = await call(
      front,
      {},
      { body: "INSERT INTO big FORMAT JSONEachRow\n" + body },
    );
    expect(inBody.status, inBody.text).toBe(200);
    expect(await run("SELECT count(), uniqExact(id) FROM big")).toBe(
      "180000\t60000\n",
    );
    // A large body that is not the data of an INSERT is refused, and nothing is left behind.
    const tooLarge = await call(
      front,
      {},
      { body: "SELECT '" + "y".repeat(2 << 20) + "'" },
    );
    expectError(tooLarge, 229, "QUERY_IS_TOO_LARGE", 413);
    expect(readdirSync(spoolDir)).toEqual([]);
  });

  it("keeps the SETTINGS clause of an INSERT, and takes async_insert and a trailing semicolon", async () => {
    await run(
      "CREATE TABLE IF NOT EXISTS loose (id UInt32) ENGINE = MergeTree ORDER BY id",
    );
    const skip = await call(
      front,
      {
        query:
          "INSERT INTO loose SETTINGS input_format_skip_unknown_fields = 1 FORMAT JSONEachRow",
      },
      { body: '{"id":1,"unknown":"x"}\n' },
    );
    expect(skip.status, skip.text).toBe(200);
    const strict = await call(
      front,
      {
        query: "INSERT INTO loose FORMAT JSONEachRow",
        input_format_skip_unknown_fields: "0",
      },
      { body: '{"id":2,"unknown":"x"}\n' },
    );
    expect(strict.status).not.toBe(200);
    const asynchronous = await call(
      front,
      {
        query: "INSERT INTO loose FORMAT JSONEachRow",
        async_insert: "1",
        wait_for_async_insert: "1",
      },
      { body: '{"id":3}\n' },
    );
    expect(asynchronous.status, asynchronous.text).toBe(200);
    await run("INSERT INTO loose VALUES (4);");
    expect(
      await run(
        "SELECT groupArray(id) FROM (SELECT id FROM loose ORDER BY id)",
      ),
    ).toBe("[1,3,4]\n");
  });

  it("runs requests side by side, each with its own settings and parameters", async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call(
          front,
          { param_v: `value ${i}`, max_threads: String(i + 1) },
          {
            body: "SELECT {v:String}, getSetting('max_threads'), sleep(0.05)",
          },
        ),
      ),
    );
    answers.forEach((a, i) => {
      expect(a.status, a.text).toBe(200);
      expect(a.text).toBe(`value ${i}\t${i + 1}\t0\n`);
    });
  });

  it("refuses queries beyond the running and waiting ones it allows", async () => {
    const narrow = await startHttpFront({
      path: dataDir,
      maxConcurrentQueries: 1,
      maxQueuedQueries: 1,
    });
    try {
      const answers = await Promise.all(
        [0, 1, 2].map(() => call(narrow, {}, { body: "SELECT sleep(0.3)" })),
      );
      const codes = answers
        .map((a) => a.headers["x-clickhouse-exception-code"] ?? "ok")
        .sort();
      expect(codes).toEqual(["202", "ok", "ok"]);
    } finally {
      await narrow.close();
    }
  });

  it("names the body, not its temporary file, in an error about the data", async () => {
    const bad = await call(
      front,
      { query: "INSERT INTO events FORMAT JSONEachRow" },
      { body: '{"id":1}\n{"id":"x"}\n' },
    );
    expect(bad.status).toBe(400);
    expect(bad.text).not.toContain("sessionhouse-insert-");
    expect(bad.text).toContain("the request body");
  });

  it("lets a client go away in the middle of a body, and removes what it had received", async () => {
    const { connect } = await import("node:net");
    const { port } = new URL(front.url);
    await new Promise<void>((done, fail) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write(
          "POST /?query=INSERT%20INTO%20big%20FORMAT%20JSONEachRow HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n",
        );
        socket.write("x".repeat(3 << 20), () =>
          setTimeout(() => socket.destroy(), 100),
        );
      });
      socket.on("close", () => done());
      socket.on("error", fail);
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(readdirSync(spoolDir)).toEqual([]);
    expect((await call(front, { query: "SELECT 1" })).text).toBe("1\n");
  });

  it("refuses writes in a GET request (readonly = 2) and with readonly=1 in the URL", async () => {
    expectError(
      await call(front, {
        query: "CREATE TABLE nope (x UInt8) ENGINE = Memory",
      }),
      164,
      "READONLY",
      500,
    );
    expectError(
      await call(front, { query: "INSERT INTO events VALUES (99, 'z')" }),
      164,
      "READONLY",
      500,
    );
    expect(
      (
        await call(front, {
          max_threads: "2",
          query: "SELECT getSetting('max_threads')",
        })
      ).text,
    ).toBe("2\n");
    expectError(
      await call(
        front,
        { readonly: "1", query: "INSERT INTO events VALUES (99, 'z')" },
        { method: "POST" },
      ),
      164,
      "READONLY",
      500,
    );
    expectError(
      await call(front, { readonly: "0", query: "SELECT 1" }),
      164,
      "READONLY",
      500,
    );
  });

  it("checks credentials given as X-ClickHouse headers, basic auth or URL parameters", async () => {
    const q = { query: "SELECT currentUser() != ''" };
    const basic =
      "Basic " + Buffer.from("loader:pa:ss word").toString("base64");
    expect(
      (await call(locked, q, { headers: { Authorization: basic } })).text,
    ).toBe("1\n");
    expect(
      (
        await call(locked, q, {
          headers: {
            "X-ClickHouse-User": "loader",
            "X-ClickHouse-Key": "pa:ss word",
          },
        })
      ).text,
    ).toBe("1\n");
    expect(
      (await call(locked, { ...q, user: "loader", password: "pa:ss word" }))
        .text,
    ).toBe("1\n");

    const none = await call(locked, q);
    expectError(none, 516, "AUTHENTICATION_FAILED", 403);
    expect(none.text).toContain(
      "default: Authentication failed: password is incorrect, or there is no user with such name.",
    );
    expectError(
      await call(locked, { ...q, user: "loader", password: "wrong" }),
      516,
      "AUTHENTICATION_FAILED",
      403,
    );
    expectError(
      await call(locked, q, {
        headers: {
          Authorization:
            "Basic " + Buffer.from("someone:pa:ss word").toString("base64"),
        },
      }),
      516,
      "AUTHENTICATION_FAILED",
      403,
    );
    const mixed = await call(locked, q, {
      headers: {
        Authorization: basic,
        "X-ClickHouse-User": "loader",
        "X-ClickHouse-Key": "pa:ss word",
      },
    });
    expectError(mixed, 516, "AUTHENTICATION_FAILED", 403);
    expect(mixed.text).toContain(
      "not allowed to use X-ClickHouse HTTP headers and Authorization HTTP header simultaneously",
    );
    expectError(
      await call(locked, q, { headers: { Authorization: "Digest abc" } }),
      516,
      "AUTHENTICATION_FAILED",
      403,
    );
    // A refused POST does not spoil the connection for the next request.
    expectError(
      await call(locked, {}, { body: "x".repeat(100_000) }),
      516,
      "AUTHENTICATION_FAILED",
      403,
    );
  });
});

describe("a readonly front", () => {
  const asReader = { Authorization: `Bearer ${TOKEN}` };

  it("lets a token in as a bearer token or as the password of any user", async () => {
    expect(
      (await call(reader, { query: "SELECT 1" }, { headers: asReader })).text,
    ).toBe("1\n");
    expect(
      (
        await call(reader, {
          query: "SELECT 1",
          user: "grafana",
          password: TOKEN,
        })
      ).text,
    ).toBe("1\n");
    expectError(
      await call(
        reader,
        { query: "SELECT 1" },
        { headers: { Authorization: "Bearer nope" } },
      ),
      516,
      "AUTHENTICATION_FAILED",
      403,
    );
    expectError(
      await call(reader, { query: "SELECT 1" }),
      516,
      "AUTHENTICATION_FAILED",
      403,
    );
  });

  it("reads data, and refuses INSERT, CREATE and changes of settings", async () => {
    expect(
      (
        await call(
          reader,
          { query: "SELECT count() FROM events" },
          { headers: asReader },
        )
      ).text,
    ).toBe("11\n");
    expect(
      (
        await call(
          reader,
          { param_id: "2" },
          {
            body: "SELECT name FROM events WHERE id = {id:UInt32}",
            headers: asReader,
          },
        )
      ).text,
    ).toBe("b;c\n");
    expectError(
      await call(
        reader,
        { query: "INSERT INTO events FORMAT JSONEachRow" },
        { body: '{"id":100}\n', headers: asReader },
      ),
      164,
      "READONLY",
      500,
    );
    expectError(
      await call(
        reader,
        {},
        {
          body: "CREATE TABLE t2 (x UInt8) ENGINE = Memory",
          headers: asReader,
        },
      ),
      164,
      "READONLY",
      500,
    );
    expectError(
      await call(reader, {}, { body: "DROP TABLE events", headers: asReader }),
      164,
      "READONLY",
      500,
    );
    expectError(
      await call(
        reader,
        {},
        { body: "SET max_threads = 1", headers: asReader },
      ),
      164,
      "READONLY",
      500,
    );
    expectError(
      await call(
        reader,
        { max_threads: "1" },
        { body: "SELECT 1", headers: asReader },
      ),
      164,
      "READONLY",
      500,
    );
    expectError(
      await call(
        reader,
        { readonly: "0" },
        { body: "SELECT 1", headers: asReader },
      ),
      164,
      "READONLY",
      500,
    );
    expectError(
      await call(
        reader,
        {},
        {
          body: "SELECT count() FROM events SETTINGS max_execution_time = 100",
          headers: asReader,
        },
      ),
      164,
      "READONLY",
      500,
    );
    expect(
      (
        await call(
          reader,
          { max_execution_time: "0.5" },
          {
            body: "SELECT getSetting('max_execution_time')",
            headers: asReader,
          },
        )
      ).text,
    ).toBe("0.5\n");
  });

  it("caps the execution time, also when the URL asks for more", async () => {
    const slow = "SELECT sleep(2)";
    expectError(
      await call(
        reader,
        { max_execution_time: "100" },
        { body: slow, headers: asReader },
      ),
      159,
      "TIMEOUT_EXCEEDED",
      408,
    );
  });

  it("fails a result over its caps on rows or bytes, naming the caps; a request cannot lift them", async () => {
    const rows = (n: number) => `SELECT number FROM numbers(${n})`;
    expect(
      (await call(reader, {}, { body: rows(100), headers: asReader })).text
        .trim()
        .split("\n"),
    ).toHaveLength(100);
    const over = await call(
      reader,
      {},
      { body: rows(1000), headers: asReader },
    );
    expectError(over, 396, "TOO_MANY_ROWS_OR_BYTES", 500);
    expect(over.text).toContain(
      "this read-only access returns at most 100 rows and 1048576 bytes a query",
    );
    expect(over.text).toContain("a LIMIT");
    for (const params of [
      { max_result_rows: "1000000" } as Record<string, string>,
      { result_overflow_mode: "break" },
    ])
      expectError(
        await call(reader, params, { body: rows(1000), headers: asReader }),
        164,
        "READONLY",
        500,
      );
    const wide = await call(
      reader,
      {},
      {
        body: "SELECT repeat(toString(number), 100000) FROM numbers(50)",
        headers: asReader,
      },
    );
    expectError(wide, 396, "TOO_MANY_ROWS_OR_BYTES", 500);
    expect(wide.text).toContain("at most 100 rows and 1048576 bytes");
    // The caps are the read access's: a front without them returns the whole result.
    expect((await run(rows(1000))).trim().split("\n")).toHaveLength(1000);
  });

  it("with a readers' token, caps the readers' results only: the owner's token reads whole results, still read-only", async () => {
    const readers = "r3ader-t0ken";
    const shared = await startHttpFront({
      path: dataDir,
      auth: { token: TOKEN, readerToken: readers },
      readonly: true,
      maxResultRows: 100,
      maxResultBytes: 1 << 20,
    });
    try {
      const rows = { body: "SELECT number FROM numbers(1000)" };
      const asReaders = { Authorization: `Bearer ${readers}` };
      expectError(
        await call(shared, {}, { ...rows, headers: asReaders }),
        396,
        "TOO_MANY_ROWS_OR_BYTES",
        500,
      );
      const whole = await call(shared, {}, { ...rows, headers: asReader });
      expect(whole.status).toBe(200);
      expect(whole.text.trim().split("\n")).toHaveLength(1000);
      // The answer's encoding may be set (archive export's Parquet row groups); nothing else.
      const encoded = await call(
        shared,
        {
          output_format_parquet_row_group_size: "100",
          query: "SELECT getSetting('output_format_parquet_row_group_size')",
        },
        { headers: asReader },
      );
      expect(encoded.text).toBe("100\n");
      // Read-only all the same: no other setting, no write.
      for (const [params, body] of [
        [{ max_threads: "1" }, rows.body],
        [{}, "CREATE TABLE owner_write (a UInt8) ENGINE = Memory"],
      ] as const)
        expectError(
          await call(shared, params, { body, headers: asReader }),
          164,
          "READONLY",
          500,
        );
      expectError(
        await call(
          shared,
          {},
          { ...rows, headers: { Authorization: "Bearer x" } },
        ),
        516,
        "AUTHENTICATION_FAILED",
        403,
      );
    } finally {
      await shared.close();
    }
  });

  it("refuses a body over its size limit with 413 and keeps the connection usable", async () => {
    const big = await call(
      reader,
      {},
      { body: "SELECT '" + "z".repeat(2 << 20) + "'", headers: asReader },
    );
    expectError(big, 229, "QUERY_IS_TOO_LARGE", 413);
    const bomb = await call(
      reader,
      {},
      {
        body: gzipSync(Buffer.alloc(8 << 20, 0x20)),
        headers: { ...asReader, "Content-Encoding": "gzip" },
      },
    );
    expectError(bomb, 229, "QUERY_IS_TOO_LARGE", 413);
    expect(
      (await call(reader, { query: "SELECT 1" }, { headers: asReader })).text,
    ).toBe("1\n");
  });

  it("refuses every way to read or write files of the host", async () => {
    const refused = [
      ["SELECT * FROM file('/etc/hostname', 'LineAsString')", 164],
      ["SELECT file('/etc/hostname')", 164],
      ["SELECT `fil\\x65`('/etc/hostname')", 164],
      ["SELECT \"FILE\"/* a /* nested */ comment */('/etc/hostname')", 164],
      ["SELECT 1 INTO OUTFILE '/tmp/front-outfile.tsv'", 358],
      ["SELECT $$'$$; SELECT file('/etc/hostname') --'", 62],
      ["SELECT * FROM url('http://127.0.0.1:1/', 'LineAsString')", 164],
      ["KILL QUERY WHERE 1", 164],
    ] as const;
    for (const [sql, code] of refused) {
      const a = await call(reader, {}, { body: sql, headers: asReader });
      expect(
        a.headers["x-clickhouse-exception-code"],
        `${sql}: ${a.text}`,
      ).toBe(String(code));
    }
  });
  it("runs only the statements of the one allow-list of reads", async () => {
    const runs = [
      "EXPLAIN AST SYSTEM STOP MERGES",
      "SHOW GRANTS",
      "SHOW TABLES",
      "DESCRIBE TABLE events",
      "EXISTS TABLE events",
      "SHOW CREATE TABLE events",
      // EXPLAIN of a SELECT, with its options: it runs nothing of the SELECT.
      "EXPLAIN PLAN SELECT 1",
      "EXPLAIN AST graph = 1 SELECT 1",
    ];
    for (const sql of runs) {
      const a = await call(reader, {}, { body: sql, headers: asReader });
      expect(a.status, `${sql}: ${a.text}`).toBe(200);
    }
    for (const sql of [
      "SYSTEM STOP MERGES",
      "SHOW PROCESSLIST",
      "KILL QUERY WHERE 1",
    ]) {
      const a = await call(reader, {}, { body: sql, headers: asReader });
      expectError(a, 164, "READONLY", 500);
      expect(a.text).toContain("this read-only access runs SELECT");
    }
  });

  it("refuses an INSERT that reads its data with input(), and a file() beside it", async () => {
    // The INSERT is not a read; the file() the front puts in place of input() is not the
    // user's, the one the user wrote is refused before the engine sees the statement.
    const attempts = [
      [
        "INSERT INTO FUNCTION null('line String') SELECT line FROM input('line String') FORMAT LineAsString",
        "Cannot execute query in readonly mode: an INSERT statement is not a read",
      ],
      [
        "INSERT INTO FUNCTION null('line String') SELECT line FROM input('line String') UNION ALL SELECT line FROM file('/etc/hostname', 'LineAsString') FORMAT LineAsString",
        "the function file reads files of the host",
      ],
    ] as const;
    for (const [query, message] of attempts) {
      const a = await call(
        reader,
        { query },
        { body: "a line\n", headers: asReader },
      );
      expectError(a, 164, "READONLY", 500);
      expect(a.text).toContain(message);
      expect(a.text).not.toContain("sessionhouse-insert-");
    }
  });
});

describe("@clickhouse/client against the front", () => {
  let client: ClickHouseClient;
  beforeAll(() => {
    client = createClient({
      url: front.url,
      log: { level: ClickHouseLogLevel.OFF },
      compression: { request: true, response: true },
      clickhouse_settings: { date_time_input_format: "best_effort" },
    });
  });
  afterAll(async () => {
    await client.close();
  });

  it("pings, runs a command, inserts rows and reads them back with query parameters", async () => {
    expect((await client.ping()).success).toBe(true);
    await client.command({
      query:
        "CREATE TABLE IF NOT EXISTS client_rows (id UInt64, name String, at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100",
    });
    const inserted = await client.insert({
      table: "client_rows",
      values: [
        { id: 1, name: "it's", at: "2024-01-02T03:04:05.678Z" },
        { id: 2, name: "back\\slash", at: "2024-01-02T03:04:06Z" },
      ],
      format: "JSONEachRow",
    });
    expect(inserted.summary?.written_rows).toBe("2");
    const rs = await client.query({
      query:
        "SELECT id, name, toString(at) AS at FROM client_rows WHERE name IN {names:Array(String)} AND id >= {min:UInt64} ORDER BY id",
      query_params: { names: ["it's", "back\\slash"], min: 1 },
      format: "JSONEachRow",
    });
    expect(await rs.json()).toEqual([
      { id: 1, name: "it's", at: "2024-01-02 03:04:05.678" },
      { id: 2, name: "back\\slash", at: "2024-01-02 03:04:06.000" },
    ]);
    const json = await client.query({
      query: "SELECT count() AS n FROM client_rows",
      format: "JSON",
    });
    expect((await json.json<{ n: number }>()).data).toEqual([{ n: 2 }]);
  });

  it("execs a raw body INSERT … FORMAT JSONCompactEachRow with a deduplication token, as the server insert path does", async () => {
    const block = Buffer.from(
      [
        JSON.stringify([10, "ten", "2024-05-01T00:00:00Z"]),
        JSON.stringify([11, "eleven", "2024-05-01T00:00:01.5Z"]),
      ].join("\n"),
    );
    const send = async () => {
      const r = await client.exec({
        query:
          "INSERT INTO client_rows (`id`, `name`, `at`) FORMAT JSONCompactEachRow",
        values: Readable.from([block], { objectMode: false }),
        clickhouse_settings: {
          insert_deduplication_token: "client_rows:block-1",
          insert_deduplicate: 1,
          async_insert: 0,
          input_format_json_read_objects_as_strings: 1,
          date_time_input_format: "best_effort",
        },
      });
      r.stream.resume();
      return r.summary;
    };
    expect((await send())?.written_rows).toBe("2");
    await send(); // the same token: stored once
    const rs = await client.query({
      query: "SELECT count() AS n FROM client_rows WHERE id >= 10",
      format: "JSONEachRow",
    });
    expect(await rs.json()).toEqual([{ n: 2 }]);
  });

  it("surfaces the server's error code", async () => {
    await expect(
      client.query({ query: "SELECT * FROM no_such_table" }),
    ).rejects.toMatchObject({
      code: "60",
      type: "UNKNOWN_TABLE",
    });
    await expect(
      client.insert({
        table: "no_such_table",
        values: [{ a: 1 }],
        format: "JSONEachRow",
      }),
    ).rejects.toMatchObject({
      code: "60",
    });
    await expect(client.command({ query: "SELEC 1" })).rejects.toMatchObject({
      code: "62",
    });
    const wrong = createClient({
      log: { level: ClickHouseLogLevel.OFF },
      url: locked.url,
      username: "loader",
      password: "wrong",
    });
    await expect(wrong.query({ query: "SELECT 1" })).rejects.toMatchObject({
      code: "516",
      type: "AUTHENTICATION_FAILED",
    });
    await wrong.close();
  });
});

describe("INSERT … SELECT … FROM input(…) FORMAT F with data", () => {
  const STRUCTURE =
    "fetched_ms Int64, held Bool, brand Nullable(String), raw String";
  // The shape of the exporter's session insert: the engine builds the row from a raw JSON object.
  const INSERT = `INSERT INTO input_rows (id, held, brand, a, tag)
    SELECT fetched_ms, held, ifNull(brand, 'none'), JSONExtract(r, 'a', 'Int64'), JSONExtractString(r, 'tag')
    FROM (SELECT *, raw AS r FROM input('${STRUCTURE}') WHERE brand IS NULL OR brand != 'input(''x'') FORMAT CSV')
    FORMAT JSONCompactEachRow`;
  const line = (id: number, brand: string | null, a: number, tag = "t") =>
    JSON.stringify([id, id % 2 === 0, brand, { a, tag }]);
  const asJson = { input_format_json_read_objects_as_strings: 1 } as const;
  let client: ClickHouseClient;

  beforeAll(async () => {
    client = createClient({
      url: front.url,
      log: { level: ClickHouseLogLevel.OFF },
    });
    await client.command({
      query:
        "CREATE TABLE IF NOT EXISTS input_rows (id Int64, held Bool, brand String, a Int64, tag String) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100",
    });
  });
  afterAll(async () => {
    await client.close();
  });

  const rowsOf = async (where: string) =>
    (
      await client.query({
        query: `SELECT id, held, brand, a, tag FROM input_rows WHERE ${where} ORDER BY id`,
        format: "JSONCompactEachRow",
      })
    ).json();

  it("inserts the rows the SELECT builds from the body, once per deduplication token", async () => {
    const send = async (lines: string[]) => {
      const r = await client.exec({
        query: INSERT,
        values: Readable.from([Buffer.from(lines.join("\n") + "\n")]),
        clickhouse_settings: {
          ...asJson,
          insert_deduplication_token: "input-rows:1",
        },
      });
      r.stream.resume();
    };
    const lines = [line(1, null, 10, "a;b"), line(2, "x", 20)];
    await send(lines);
    await send(lines); // the same token: stored once
    expect(await rowsOf("id IN (1, 2)")).toEqual([
      [1, false, "none", 10, "a;b"],
      [2, true, "x", 20, "t"],
    ]);
  });

  it("takes the statement in the URL, at the head of the body, or in the URL with data following it there", async () => {
    // Statement in the URL, data in the body.
    const inUrl = await call(
      front,
      { query: INSERT, ...stringsOf(asJson) },
      { body: line(3, "y", 30) + "\n" },
    );
    expect(inUrl.status, inUrl.text).toBe(200);
    // The engine does not count the rows an INSERT … SELECT writes: no count rather than 0.
    const summary = JSON.parse(
      inUrl.headers["x-clickhouse-summary"] ?? "",
    ) as Record<string, string>;
    expect(summary).not.toHaveProperty("written_rows");
    expect(summary).toHaveProperty("elapsed_ns");
    // Statement at the head of the body, data after it.
    await client.command({
      query: `${INSERT}\n${line(4, null, 40)}\n${line(5, "z", 50)}`,
      clickhouse_settings: asJson,
    });
    // Statement and first rows in the URL, more rows in the body.
    const split = await call(
      front,
      { query: `${INSERT}\n${line(6, "w", 60)}`, ...stringsOf(asJson) },
      { body: line(7, "v", 70) + "\n" },
    );
    expect(split.status, split.text).toBe(200);
    // input() without a structure reads the data as the target's columns.
    const bare = await call(
      front,
      {
        query:
          "INSERT INTO input_rows SELECT * FROM input() FORMAT JSONCompactEachRow",
      },
      { body: JSON.stringify([8, true, "s", 80, "t"]) },
    );
    expect(bare.status, bare.text).toBe(200);
    expect(await rowsOf("id BETWEEN 3 AND 8")).toEqual([
      [3, false, "y", 30, "t"],
      [4, true, "none", 40, "t"],
      [5, false, "z", 50, "t"],
      [6, true, "w", 60, "t"],
      [7, false, "v", 70, "t"],
      [8, true, "s", 80, "t"],
    ]);
  });

  it("reads a body too large to hold in memory from its spooled file, the statement in the URL or at its head", async () => {
    const body = (from: number) => {
      const lines: string[] = [];
      for (let i = from; i < from + 12_000; i++)
        lines.push(line(i, "b".repeat(80), i));
      return lines.join("\n") + "\n"; // about 1.4 MiB
    };
    const inUrl = await call(
      front,
      { query: INSERT, ...stringsOf(asJson) },
      { body: body(1000) },
    );
    expect(inUrl.status, inUrl.text).toBe(200);
    const atHead = await call(front, stringsOf(asJson), {
      body: `${INSERT}\n${body(13_000)}`,
    });
    expect(atHead.status, atHead.text).toBe(200);
    expect(
      await (
        await client.query({
          query:
            "SELECT count(), sum(a) FROM input_rows WHERE id BETWEEN 1000 AND 24999",
          format: "JSONCompactEachRow",
        })
      ).json(),
    ).toEqual([[24_000, ((1000 + 24_999) * 24_000) / 2]]);
    expect(readdirSync(spoolDir)).toEqual([]);
  });

  it("fails the whole insert with the engine's code when an expression throws on a row", async () => {
    const throwing = INSERT.replace(
      "SELECT fetched_ms,",
      "SELECT throwIf(fetched_ms = 21, 'row 21 is refused') + fetched_ms,",
    );
    const a = await call(
      front,
      { query: throwing, ...stringsOf(asJson) },
      { body: [line(20, "u", 1), line(21, "u", 2)].join("\n") },
    );
    expectError(a, 395, "FUNCTION_THROW_IF_VALUE_IS_NON_ZERO", 500);
    expect(a.text).toContain("row 21 is refused");
    expect(a.text).not.toContain("sessionhouse-insert-");
    await expect(
      client.exec({
        query: throwing,
        values: Readable.from([Buffer.from(line(21, "u", 2))]),
        clickhouse_settings: asJson,
      }),
    ).rejects.toMatchObject({ code: "395" });
    expect(await rowsOf("id IN (20, 21)")).toEqual([]);
  });

  it("names the body, not its temporary file, in an error about the data", async () => {
    const a = await call(
      front,
      { query: INSERT, ...stringsOf(asJson) },
      { body: line(30, "u", 1) + '\n[31, "not a bool", null, {}]\n' },
    );
    expectError(a, 467, "CANNOT_PARSE_BOOL", 500);
    expect(a.text).not.toContain("sessionhouse-insert-");
    expect(a.text).toContain("the request body");
    expect(await rowsOf("id IN (30, 31)")).toEqual([]);
  });

  it("refuses input() twice, without FORMAT, or outside an INSERT, as the server does", async () => {
    const twice = await call(
      front,
      {
        query:
          "INSERT INTO input_rows (id) SELECT x FROM input('x Int64') WHERE x IN (SELECT y FROM input('y Int64')) FORMAT CSV",
      },
      { body: "1\n" },
    );
    expectError(twice, 477, "INVALID_USAGE_OF_INPUT", 500);
    expect(twice.text).toContain("only once");
    const twoArguments = await call(
      front,
      {
        query:
          "INSERT INTO input_rows (id) SELECT x FROM input('x Int64', 'gzip') FORMAT CSV",
      },
      { body: "1\n" },
    );
    expectError(twoArguments, 42, "NUMBER_OF_ARGUMENTS_DOESNT_MATCH", 500);
    const noFormat = await call(
      front,
      { query: "INSERT INTO input_rows (id) SELECT x FROM input('x Int64')" },
      { body: "" },
    );
    expectError(noFormat, 477, "INVALID_USAGE_OF_INPUT", 500);
    expect(noFormat.text).toContain("FORMAT must be specified");
    const select = await call(
      front,
      {},
      { body: "SELECT * FROM input('x Int64') FORMAT CSV" },
    );
    expectError(select, 477, "INVALID_USAGE_OF_INPUT", 500);
    // An INSERT … SELECT that does not read the data does not drop it silently either.
    const ignored = await call(
      front,
      { query: "INSERT INTO input_rows (id) SELECT 40 FORMAT CSV" },
      { body: "41\n" },
    );
    expect(ignored.status).not.toBe(200);
    expect(await rowsOf("id IN (40, 41)")).toEqual([]);
  });
});

/** URL parameters of settings given as numbers. */
function stringsOf(settings: Record<string, number>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(settings).map(([k, v]) => [k, String(v)]),
  );
}

describe("openWarehouse with CLICKHOUSE_URL at the front", () => {
  let w: Warehouse;
  afterAll(async () => {
    await w?.close();
  });

  it("runs the migrations and the server insert path", async () => {
    const database = freshDatabaseName();
    // The client names the database in every request (the database URL parameter), and a server
    // refuses a request naming a database that does not exist yet, CREATE DATABASE included:
    // create it first, as on a server.
    await run(`CREATE DATABASE ${database}`);
    const config = await testConfig({ CLICKHOUSE_URL: front.url }, database);
    w = await openWarehouse(config);
    expect(w.kind).toBe("server");
    const first = await migrate(w, { retentionDays: 30 });
    expect(first.applied).toEqual(readMigrations().map((f) => f.name));
    expect((await migrate(w, { retentionDays: 30 })).applied).toEqual([]);

    const line = JSON.stringify({
      job: "sessions",
      record_hash: "h1",
      record_id: "r1",
      reason: "bad",
      raw: '{"raw":true}',
      seen_at: "2024-05-01T00:00:00.123456789Z",
      run_id: "run-1",
    });
    for (let i = 0; i < 2; i++)
      await insertLines(w, "dead_letters", [line], { retries: 0 });
    const rs = await w.client.query({
      query: `SELECT count() AS n, any(raw) AS raw FROM \`${w.database}\`.dead_letters`,
      format: "JSONEachRow",
    });
    expect(await rs.json()).toEqual([{ n: 1, raw: '{"raw":true}' }]);
  });

  it("inserts a session block whose rows the engine builds with input(), once per token, a record it cannot read refused alone", async () => {
    const record = (id: string, kept = "1") =>
      `{"id":"${id}","startTime":"2026-11-02T10:04:05.5Z","sessionStatus":"completed","user":{"type":"human","username":"alice","formal":{"user":{"email":"alice@acme.example"}}},"unknownMember":[${kept}]}`;
    // JSON that JavaScript reads and the engine's JSON reader refuses (throwIf in the SELECT).
    const texts = [
      record("front_1"),
      record("front_huge", "1e400"),
      record("front_2"),
    ];
    const block = new RowBlock();
    for (const raw of texts) {
      const parsed = parseSession(JSON.parse(raw));
      if (!parsed.success) throw new Error(`rejected: ${raw}`);
      new SessionInputs(Date.UTC(2026, 10, 2, 12)).push(
        block,
        raw,
        false,
        parsed.data.user.brandMember,
      );
    }
    const taken = block.take();
    for (let i = 0; i < 2; i++) {
      const rejected = await insertBlock(
        w,
        "sessions",
        taken,
        "front-sessions:1",
        { retries: 0 },
        SESSION_ROWS,
      );
      expect(rejected.map((r) => r.index)).toEqual([1]);
      expect(rejected[0]?.message).toMatch(/^Code: 395\. /);
    }
    const rs = await w.client.query({
      query: `SELECT id, user_email, start_time FROM \`${w.database}\`.sessions ORDER BY id`,
      format: "JSONEachRow",
    });
    expect(await rs.json()).toEqual([
      {
        id: "front_1",
        user_email: "alice@acme.example",
        start_time: "2026-11-02 10:04:05.500",
      },
      {
        id: "front_2",
        user_email: "alice@acme.example",
        start_time: "2026-11-02 10:04:05.500",
      },
    ]);
  });
});
