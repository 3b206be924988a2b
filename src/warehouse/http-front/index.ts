// A ClickHouse HTTP interface in front of the embedded engine: the part of the server's HTTP
// protocol that @clickhouse/client, curl and dashboards use (/ping, queries in the URL or the
// body, INSERT data in the body, settings and param_<name> in the URL, the three ways of giving
// credentials, gzip both ways, errors with the server's status, header and body), served by one
// chdb data directory. Every request runs in a fresh engine session of its own, so settings,
// parameters and readonly apply to that request only.
import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, rm } from "node:fs/promises";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import zlib from "node:zlib";
import {
  Gate,
  loadSessionClass,
  type EngineResult,
  type EngineSession,
  type SessionConstructor,
} from "./engine.js";
import {
  FrontError,
  engineErrorAnswer,
  frontErrorAnswer,
  type ErrorAnswer,
} from "./errors.js";
import { openPrivateFile } from "../../util/private-files.js";
import { blockFileDir, blockFilePath } from "../block-files.js";
import { contentTypeOf } from "./formats.js";
import {
  checkCredentials,
  credentialsOf,
  header,
  readBody,
  readParams,
  type Body,
  type FrontAuth,
  type RequestParams,
} from "./request.js";
import {
  quoteIdentifier,
  quoteString,
  readStatement,
  tokens,
  type Statement,
} from "./sql.js";

export type { EngineSession } from "./engine.js";
export type { FrontAuth } from "./request.js";

export interface HttpFrontOptions {
  /** An open chdb Session: the front serves its data directory and leaves it open on close. */
  engine?: EngineSession;
  /** A data directory: the front opens the engine on it and closes it on close(). */
  path?: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Without it every request is let in. */
  auth?: FrontAuth;
  /** The engine refuses writes, DDL and changes of settings (readonly = 1) for every request. */
  readonly?: boolean;
  /** Cap on max_execution_time (seconds) for every query. */
  maxExecutionTimeS?: number;
  /** Cap on max_memory_usage (bytes) for every query. */
  maxMemoryUsage?: number;
  /** Queries running at once (default 2); more wait. */
  maxConcurrentQueries?: number;
  /** Queries waiting (default 64); more are refused with TOO_MANY_SIMULTANEOUS_QUERIES. */
  maxQueuedQueries?: number;
  /** Largest request body after decompression (default 1 MiB when readonly, else 16 GiB). */
  maxBodyBytes?: number;
  /** Where bodies too large to hold in memory are spooled (default the OS temp directory). */
  tempDir?: string;
}

export interface HttpFront {
  /** `http://host:port`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Stops listening, waits for the requests under way, and closes an engine it opened. */
  close(): Promise<void>;
}

/** Bodies up to this size are held in memory; larger ones go to a temporary file. */
const INLINE_BODY_BYTES = 1 << 20;

/** Scalar functions that read files of the host; readonly = 1 lets them run, the front does not. */
const FILE_READING_FUNCTIONS = new Set(["file", "catboostevaluate"]);

export async function startHttpFront(
  options: HttpFrontOptions,
): Promise<HttpFront> {
  if ((options.engine === undefined) === (options.path === undefined))
    throw new TypeError("startHttpFront needs exactly one of engine and path");
  const Session = await loadSessionClass();
  const owned = options.path ? new Session(resolve(options.path)) : undefined;
  const engine = (options.engine ?? owned) as EngineSession;
  let front: Front;
  try {
    const info = await engine.queryAsync("SELECT version(), timezone()", {
      format: "JSONCompactEachRow",
    });
    const [version, timezone] = JSON.parse(
      Buffer.from(info.bytes()).toString("utf8"),
    ) as [string, string];
    front = new Front(options, Session, engine.path, version, timezone);
  } catch (err) {
    owned?.close();
    throw err;
  }
  const server = http.createServer((req, res) => front.serve(req, res));
  // Long uploads and long queries are the engine's to limit (max_execution_time), not a timer's.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 10_000;
  try {
    await new Promise<void>((ok, fail) => {
      server.once("error", fail);
      server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
        server.off("error", fail);
        ok();
      });
    });
  } catch (err) {
    owned?.close();
    throw err;
  }
  const address = server.address() as AddressInfo;
  const host =
    address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((ok) => server.close(() => ok()));
        server.closeIdleConnections();
        await front.drain();
        server.closeAllConnections();
        await stopped;
        owned?.close();
      })();
      return closing;
    },
  };
}

/** The statement to run, and the text the user sent for it. */
interface Plan {
  sql: string;
  /** The statement as sent, without INSERT data: what the readonly checks read. */
  userText: string;
  statement: Statement;
  /** An INSERT whose data the engine reads from a file. */
  insert: boolean;
  /** That file. */
  dataPath?: string;
  /** Text of `sql` that the user did not write, and what the user wrote instead. */
  rewritten?: { sent: string; written: string };
}

class Front {
  readonly #gate: Gate;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #readonly: boolean;
  readonly #displayName = hostname();

  constructor(
    private readonly options: HttpFrontOptions,
    private readonly Session: SessionConstructor,
    private readonly dataDir: string,
    private readonly version: string,
    private readonly timezone: string,
  ) {
    this.#readonly = options.readonly === true;
    this.#gate = new Gate(
      options.maxConcurrentQueries ?? 2,
      options.maxQueuedQueries ?? 64,
    );
  }

  serve(req: IncomingMessage, res: ServerResponse): void {
    const done = this.#handle(req, res)
      .catch(() => {
        // Answering failed (the client went away): nothing is left to tell it.
        res.destroy();
      })
      .finally(() => this.#inFlight.delete(done));
    this.#inFlight.add(done);
  }

  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled(this.#inFlight);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://front.invalid");
    } catch {
      req.resume();
      return this.#sendError(
        res,
        new FrontError("BAD_ARGUMENTS", `Cannot parse the URI ${req.url}`),
      );
    }
    if (url.pathname === "/ping" || url.pathname === "/replicas_status") {
      req.resume();
      return this.#ok(res);
    }
    if (method !== "GET" && method !== "HEAD" && method !== "POST") {
      req.resume();
      res.setHeader("Allow", "GET, HEAD, POST");
      return this.#sendError(
        res,
        new FrontError(
          "UNSUPPORTED_METHOD",
          `Method ${method} is not supported: use GET, HEAD or POST`,
        ),
        405,
      );
    }
    if (
      url.pathname === "/" &&
      method !== "POST" &&
      !url.searchParams.has("query")
    ) {
      req.resume();
      return this.#ok(res);
    }
    return this.#query(req, res, url.searchParams, method);
  }

  #ok(res: ServerResponse): void {
    res.writeHead(200, {
      "Content-Type": "text/html; charset=UTF-8",
      "Content-Length": 4,
    });
    res.end("Ok.\n");
  }

  async #query(
    req: IncomingMessage,
    res: ServerResponse,
    params: URLSearchParams,
    method: string,
  ): Promise<void> {
    res.setHeader("X-ClickHouse-Query-Id", queryIdOf(req, params));
    const temporary: string[] = [];
    let bodyRead = false;
    let answer: () => Promise<void>;
    try {
      const { request, prelude, body } = await this.#readRequest(
        req,
        params,
        method,
      );
      bodyRead = true;
      if (body.kind === "file") temporary.push(body.path);
      const { plan, format, result } = await this.#run(
        params.get("query") ?? "",
        body,
        request,
        prelude,
        temporary,
      );
      answer = () =>
        this.#sendResult(req, res, method, request, plan, format, result);
    } catch (err) {
      if (!bodyRead) req.resume();
      // A client that went away mid-body gets no answer.
      if (req.destroyed && !req.complete) throw err;
      answer = () => Promise.resolve(this.#sendError(res, err));
    } finally {
      // Before answering: once the client has its answer, nothing of the request is left.
      await Promise.all(temporary.map((f) => rm(f, { force: true })));
    }
    try {
      await answer();
    } catch (err) {
      this.#sendError(res, err);
    }
  }

  /**
   * Checks the credentials, reads the URL's parameters into the statements that prepare the
   * engine session, then reads the body; a refusal comes before the body is read.
   */
  async #readRequest(
    req: IncomingMessage,
    params: URLSearchParams,
    method: string,
  ): Promise<{ request: RequestParams; prelude: string; body: Body }> {
    checkCredentials(credentialsOf(req, params), this.options.auth);
    if (
      (header(req, "content-type") ?? "")
        .toLowerCase()
        .startsWith("multipart/form-data")
    )
      throw new FrontError(
        "NOT_IMPLEMENTED",
        "multipart/form-data bodies (external tables, parameters in the body) are not supported by this front",
      );
    const request = readParams(req, params);
    const prelude = this.#prelude(request, method);
    const body = await readBody(req, {
      maxBytes:
        this.options.maxBodyBytes ??
        (this.#readonly ? INLINE_BODY_BYTES : 16 * 2 ** 30),
      inlineBytes: INLINE_BODY_BYTES,
      tempDir: this.#tempDir,
    });
    return { request, prelude, body };
  }

  /** Plans the statement, makes the server's refusals, and runs it when the gate lets it. */
  async #run(
    urlQuery: string,
    body: Body,
    request: RequestParams,
    prelude: string,
    temporary: string[],
  ): Promise<{ plan: Plan; format: string; result: EngineResult }> {
    const plan = await this.#plan(urlQuery, body, temporary);
    checkStatement(plan);
    if (this.#readonly) refuseFileAccess(plan.userText);
    const format =
      plan.statement.outputFormat ?? request.defaultFormat ?? "TabSeparated";
    const result = await this.#gate.run(() =>
      this.#execute(plan, prelude, format),
    );
    return { plan, format, result };
  }

  get #tempDir(): string {
    return this.options.tempDir ?? blockFileDir();
  }

  /**
   * The statements that prepare the request's engine session: the settings (the front's caps
   * first, then the URL's), the query parameters, the default database, and readonly last so
   * that it does not refuse the others.
   */
  #prelude(request: RequestParams, method: string): string {
    const settings = new Map<string, string>();
    const timeCap = this.options.maxExecutionTimeS;
    const memoryCap = this.options.maxMemoryUsage;
    if (timeCap !== undefined)
      settings.set("max_execution_time", String(timeCap));
    if (memoryCap !== undefined)
      settings.set("max_memory_usage", String(memoryCap));
    // GET requests are readonly = 2 on a server: settings may change, data may not.
    let readonly = this.#readonly ? 1 : method === "POST" ? 0 : 2;
    for (const [name, value] of request.settings) {
      if (name === "readonly") {
        const level = Number(value);
        if (!(level === 0 || level === 1 || level === 2))
          throw new FrontError(
            "BAD_ARGUMENTS",
            `Invalid value '${value}' of setting 'readonly'`,
          );
        if (
          readonly === 0 ||
          level === readonly ||
          (readonly === 2 && level === 1)
        ) {
          readonly = level;
          continue;
        }
        throw new FrontError(
          "READONLY",
          "Cannot modify 'readonly' setting in readonly mode",
        );
      }
      if (this.#readonly && name !== "max_execution_time")
        throw new FrontError(
          "READONLY",
          `Cannot modify '${name}' setting in readonly mode`,
        );
      if (name === "max_execution_time" && timeCap !== undefined)
        settings.set(name, String(capped(value, timeCap)));
      else if (name === "max_memory_usage" && memoryCap !== undefined)
        settings.set(name, String(capped(value, memoryCap)));
      else settings.set(name, value);
    }
    const assignments = [...settings].map(
      ([k, v]) => `${k} = ${quoteString(v)}`,
    );
    for (const [name, value] of request.queryParams)
      assignments.push(`param_${name} = ${quoteString(value)}`);
    const statements: string[] = [];
    if (assignments.length > 0)
      statements.push(`SET ${assignments.join(", ")}`);
    if (request.database)
      statements.push(`USE ${quoteIdentifier(request.database)}`);
    if (readonly > 0) statements.push(`SET readonly = ${readonly}`);
    return statements.join("; ");
  }

  /**
   * Where the statement and its data are. The URL's query comes first and a line feed joins it
   * to the body, as on a server; the data of an INSERT goes to a file the engine reads
   * (INSERT … FROM INFILE), so a large body never becomes SQL text.
   */
  async #plan(
    urlQuery: string,
    body: Body,
    temporary: string[],
  ): Promise<Plan> {
    if (body.kind === "file") {
      const plan =
        urlQuery !== ""
          ? await this.#insertOfUrl(urlQuery, body.path, temporary)
          : await this.#insertOfFileHead(body.path, temporary);
      if (plan) return plan;
      throw new FrontError(
        "QUERY_IS_TOO_LARGE",
        `The query is larger than ${INLINE_BODY_BYTES} bytes: only the data of an INSERT may be that large (send INSERT … FORMAT in the query parameter and the data as the body)`,
      );
    }
    return this.#planInMemory(
      urlQuery,
      body.kind === "memory" ? body.data : undefined,
      temporary,
    );
  }

  /**
   * The URL's INSERT with the spooled body as its data; data that starts in the URL goes first,
   * in a new file. Undefined when the URL's statement is not an INSERT with its data after it.
   */
  async #insertOfUrl(
    urlQuery: string,
    bodyPath: string,
    temporary: string[],
  ): Promise<Plan | undefined> {
    const statement = readStatement(urlQuery);
    const insert = statement.insert;
    if (!insert) return undefined;
    const tail = urlQuery.slice(insert.dataStart);
    let data = bodyPath;
    if (tail.trim() !== "") {
      data = blockFilePath(this.#tempDir);
      temporary.push(data);
      await copyInto(data, Buffer.from(tail + "\n"), bodyPath, 0);
    }
    return insertPlan(urlQuery, statement, data);
  }

  /**
   * Statement and data both in the spooled body: the statement is read from the file's head and
   * the data copied to a file of its own. Undefined unless the head holds an INSERT whose data
   * starts in it.
   */
  async #insertOfFileHead(
    bodyPath: string,
    temporary: string[],
  ): Promise<Plan | undefined> {
    const head = await readHead(bodyPath, INLINE_BODY_BYTES);
    const text = head.toString("utf8");
    const statement = readStatement(text);
    if (!statement.insert || statement.insert.dataStart >= text.length)
      return undefined;
    const offset = Buffer.byteLength(text.slice(0, statement.insert.dataStart));
    const data = blockFilePath(this.#tempDir);
    temporary.push(data);
    await copyInto(data, Buffer.alloc(0), bodyPath, offset);
    return insertPlan(text, statement, data);
  }

  /** The statement in the URL's query and a body held in memory, if any. */
  async #planInMemory(
    urlQuery: string,
    bodyData: Buffer | undefined,
    temporary: string[],
  ): Promise<Plan> {
    const bytes =
      urlQuery === ""
        ? (bodyData ?? Buffer.alloc(0))
        : Buffer.concat([
            Buffer.from(urlQuery + "\n"),
            ...(bodyData ? [bodyData] : []),
          ]);
    const text = bytes.toString("utf8");
    const statement = readStatement(text);
    if (statement.insert) {
      const offset = Buffer.byteLength(
        text.slice(0, statement.insert.dataStart),
      );
      const data = blockFilePath(this.#tempDir);
      temporary.push(data);
      const file = await openPrivateFile(data);
      try {
        await file.writeFile(bytes.subarray(offset));
      } finally {
        await file.close();
      }
      return insertPlan(text, statement, data);
    }
    return { sql: text, userText: text, statement, insert: false };
  }

  async #execute(
    plan: Plan,
    prelude: string,
    format: string,
  ): Promise<EngineResult> {
    const session = new this.Session(this.dataDir);
    try {
      if (prelude !== "") await session.queryAsync(prelude, { format: "TSV" });
      if (this.#readonly)
        await refuseFileAccessCanonical(session, plan.userText);
      return await session.queryAsync(plan.sql, { format });
    } catch (err) {
      throw inTermsOfTheRequest(err, plan);
    } finally {
      session.close();
    }
  }

  async #sendResult(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    request: RequestParams,
    plan: Plan,
    format: string,
    result: EngineResult,
  ): Promise<void> {
    const raw = result.bytes();
    let data = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    const rows = String(result.rowsRead);
    const bytes = String(result.bytesRead);
    // What the engine reports: for a query the rows and bytes of its result, for an INSERT of
    // a body the rows and bytes it read from the body, which are the rows it inserted. For an
    // INSERT … SELECT from input() it reports none: the counts are left out rather than sent as 0.
    const uncounted = plan.statement.insert?.input !== undefined;
    const summary = {
      ...(uncounted
        ? {}
        : {
            read_rows: plan.insert ? rows : "0",
            read_bytes: plan.insert ? bytes : "0",
            written_rows: plan.insert ? rows : "0",
            written_bytes: plan.insert ? bytes : "0",
          }),
      total_rows_to_read: "0",
      result_rows: uncounted ? "0" : rows,
      result_bytes: uncounted ? "0" : bytes,
      elapsed_ns: String(Math.max(0, Math.round(result.elapsed * 1e9))),
    };
    const headers: Record<string, string | number> = {
      "Content-Type": contentTypeOf(format),
      "X-ClickHouse-Server-Display-Name": this.#displayName,
      "X-ClickHouse-Format": format,
      "X-ClickHouse-Timezone": /^[A-Za-z0-9_+\-/]+$/.test(
        request.settings.get("session_timezone") ?? "",
      )
        ? (request.settings.get("session_timezone") as string)
        : this.timezone,
      "X-ClickHouse-Summary": JSON.stringify(summary),
    };
    if (request.compression.enabled) {
      const encoding = chooseEncoding(header(req, "accept-encoding"));
      if (encoding) {
        data = await compress(encoding, data, request.compression.level);
        headers["Content-Encoding"] = encoding;
      }
    }
    headers["Content-Length"] = data.length;
    res.writeHead(200, headers);
    res.end(method === "HEAD" ? undefined : data);
  }

  #sendError(res: ServerResponse, err: unknown, status?: number): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const answer: ErrorAnswer =
      err instanceof FrontError
        ? frontErrorAnswer(err)
        : engineErrorAnswer(err);
    const body = `${answer.text} (version ${this.version})\n`;
    res.writeHead(status ?? answer.status, {
      "Content-Type": "text/plain; charset=UTF-8",
      "X-ClickHouse-Server-Display-Name": this.#displayName,
      "X-ClickHouse-Exception-Code": String(answer.code),
      "Content-Length": Buffer.byteLength(body),
    });
    res.end(body);
  }
}

/**
 * The query id the client asked for, or a new one. Any string is a query id; a header carries
 * printable ASCII only.
 */
function queryIdOf(req: IncomingMessage, params: URLSearchParams): string {
  const asked = params.get("query_id") || header(req, "x-clickhouse-query-id");
  if (!asked) return randomUUID();
  return /^[\x20-\x7e]*$/.test(asked) ? asked : encodeURIComponent(asked);
}

function capped(value: string, cap: number): number {
  const n = Number(value);
  // 0 means "no limit" to the engine, which is exactly what a cap does not allow.
  return Number.isFinite(n) && n > 0 ? Math.min(n, cap) : cap;
}

/**
 * The statement that inserts the data in `dataPath`: `INSERT … FROM INFILE 'path' … FORMAT F`,
 * or for an INSERT … SELECT the same statement with its input(…) call reading the file,
 * `file('path', 'F'[, structure])`, and without the FORMAT clause.
 */
function insertPlan(
  text: string,
  statement: Statement,
  dataPath: string,
): Plan {
  const insert = statement.insert;
  if (!insert) throw new Error("insertPlan needs an INSERT with data");
  const userText = text.slice(0, insert.dataStart);
  const input = insert.input;
  if (input && input.argCount > 1)
    throw new FrontError(
      "NUMBER_OF_ARGUMENTS_DOESNT_MATCH",
      "Table function 'input' requires exactly 1 argument: structure",
    );
  if (input) {
    const args = input.args === "" ? "" : `, ${input.args}`;
    const call = `file(${quoteString(dataPath)}, ${quoteString(insert.format)}${args})`;
    return {
      sql: `${input.before}${call}${input.after}`,
      userText,
      statement,
      insert: true,
      dataPath,
      rewritten: { sent: call, written: input.text },
    };
  }
  const format = /^[A-Za-z0-9_]+$/.test(insert.format)
    ? insert.format
    : quoteIdentifier(insert.format);
  const settings = insert.settings === "" ? "" : ` ${insert.settings}`;
  return {
    sql: `${insert.head} FROM INFILE ${quoteString(dataPath)}${settings} FORMAT ${format}`,
    userText,
    statement,
    insert: true,
    dataPath,
  };
}

/**
 * The engine's error about a plan, in the terms of the request: the engine names the file it
 * read the data from, which to the client is its body, and quotes the file(…) call that stands
 * for the client's input(…).
 */
function inTermsOfTheRequest(err: unknown, plan: Plan): unknown {
  const dataPath = plan.dataPath;
  if (!dataPath || !(err instanceof Error) || !err.message.includes(dataPath))
    return err;
  let message = err.message;
  if (plan.rewritten)
    message = message.replaceAll(plan.rewritten.sent, plan.rewritten.written);
  return Object.assign(
    new Error(message.replaceAll(dataPath, "the request body")),
    { clickhouseCode: (err as { clickhouseCode?: number }).clickhouseCode },
  );
}

/** Refusals the server makes before running a statement that came over HTTP. */
function checkStatement(plan: Plan): void {
  const { statement, userText } = plan;
  if (statement.verb === "" && !statement.insert)
    throw new FrontError("SYNTAX_ERROR", "Empty query");
  if (statement.fromInfile)
    throw new FrontError(
      "UNKNOWN_TYPE_OF_QUERY",
      "Query has infile and was send directly to server",
    );
  if ((statement.inputCalls ?? 0) > 1)
    throw new FrontError(
      "INVALID_USAGE_OF_INPUT",
      "You can use the `input` function only once in a query",
    );
  if (statement.intoOutfile)
    throw new FrontError(
      "INTO_OUTFILE_NOT_ALLOWED",
      "INTO OUTFILE is not allowed",
    );
  if (statement.multiStatementAt !== undefined) {
    const at = statement.multiStatementAt;
    throw new FrontError(
      "SYNTAX_ERROR",
      `Syntax error (Multi-statements are not allowed): failed at position ${at + 1} (end of query): ${userText.slice(at, at + 60)}`,
    );
  }
}

/**
 * In readonly mode, a first check on the raw text, which no quoting or comment can get past:
 * INTO OUTFILE writes files of the host and FROM INFILE reads them, and the engine allows both
 * under readonly = 1.
 */
function refuseFileAccess(text: string): void {
  if (/outfile/i.test(text))
    throw new FrontError(
      "INTO_OUTFILE_NOT_ALLOWED",
      "INTO OUTFILE is not allowed (the word OUTFILE is refused anywhere in a query to a readonly front)",
    );
  if (/infile/i.test(text))
    throw new FrontError(
      "UNKNOWN_TYPE_OF_QUERY",
      "Query has infile and was send directly to server (the word INFILE is refused anywhere in a query to a readonly front)",
    );
}

/**
 * In readonly mode, the second check reads the statement as the engine formats it (formatQuery):
 * one statement, no comments, identifiers unescaped. readonly = 1 lets the scalar function
 * file() read any file of the host, and KILL QUERY stop other requests' queries; both are refused.
 */
async function refuseFileAccessCanonical(
  session: EngineSession,
  text: string,
): Promise<void> {
  let canonical: string;
  try {
    const r = await session.queryAsync(
      `SELECT formatQuery(${quoteString(text)})`,
      {
        format: "JSONCompactEachRow",
      },
    );
    [canonical] = JSON.parse(Buffer.from(r.bytes()).toString("utf8")) as [
      string,
    ];
  } catch (err) {
    // The engine's message names the formatQuery call; the user sent only the statement.
    const message = err instanceof Error ? err.message : String(err);
    throw Object.assign(
      new Error(
        message.replace(
          /: In scope SELECT formatQuery\('[\s\S]*'\)(?=\. \([A-Z0-9_]+\)$)/,
          "",
        ),
      ),
      { clickhouseCode: (err as { clickhouseCode?: number }).clickhouseCode },
    );
  }
  let previous: { name: string } | undefined;
  let first = true;
  for (const t of tokens(canonical)) {
    const name =
      t.kind === "word"
        ? t.text.toLowerCase()
        : t.kind === "quoted"
          ? t.text.slice(1, -1).toLowerCase()
          : undefined;
    if (first && name === "kill")
      throw new FrontError(
        "READONLY",
        "Cannot execute query in readonly mode: KILL is not allowed through a readonly front",
      );
    first = false;
    if (
      previous &&
      t.kind === "open" &&
      t.text === "(" &&
      FILE_READING_FUNCTIONS.has(previous.name)
    )
      throw new FrontError(
        "READONLY",
        `Cannot execute query in readonly mode: the function ${previous.name} reads files of the host`,
      );
    previous = name === undefined ? undefined : { name };
  }
}

/** The first `max` bytes of a file. */
async function readHead(path: string, max: number): Promise<Buffer> {
  const file = await open(path, "r");
  try {
    const buf = Buffer.alloc(max);
    const { bytesRead } = await file.read(buf, 0, max, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/** Writes `prefix` then the bytes of `source` from `offset` into a new file `target`. */
async function copyInto(
  target: string,
  prefix: Buffer,
  source: string,
  offset: number,
): Promise<void> {
  const out = (await openPrivateFile(target)).createWriteStream();
  await pipeline(
    Readable.from(
      (async function* () {
        if (prefix.length > 0) yield prefix;
        yield* createReadStream(source, { start: offset });
      })(),
    ),
    out,
  );
}

/** The response encoding for an Accept-Encoding header, in the server's order of preference. */
function chooseEncoding(accept: string | undefined): string | undefined {
  if (!accept) return undefined;
  const offered = new Set(
    accept.split(",").map((s) => (s.split(";")[0] ?? "").trim().toLowerCase()),
  );
  return ["gzip", "deflate", "br"].find((e) => offered.has(e));
}

const gzip = promisify(zlib.gzip);
const deflate = promisify(zlib.deflate);
const brotli = promisify(zlib.brotliCompress);

function compress(
  encoding: string,
  data: Buffer,
  level: number,
): Promise<Buffer> {
  if (encoding === "gzip") return gzip(data, { level });
  if (encoding === "deflate") return deflate(data, { level });
  return brotli(data, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level },
  });
}
