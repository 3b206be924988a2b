// A ClickHouse HTTP interface in front of the embedded engine: the part of the server's HTTP
// protocol that @clickhouse/client, curl and dashboards use (/ping, queries in the URL or the
// body, INSERT data in the body, settings and param_<name> in the URL, the three ways of giving
// credentials, gzip both ways, errors with the server's status, header and body), served by one
// chdb data directory. Every request runs in a fresh engine session of its own, so settings,
// parameters and readonly apply to that request only.
//
// This file listens, routes and writes answers; what a request may run is policy.ts, how its
// statement and data become what the engine runs is planning.ts, reading the request is
// request.ts, and the answer's formats and errors are formats.ts and errors.ts.
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { blockFileDir } from "../warehouse/index.js";
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
import { chooseEncoding, compress, contentTypeOf } from "./formats.js";
import {
  INLINE_BODY_BYTES,
  inTermsOfTheRequest,
  planStatement,
  type Plan,
} from "./planning.js";
import {
  checkCredentials,
  engineBaseline,
  policyFor,
  explainResultCap,
  maxBodyBytes,
  prepareSession,
  refuseBeforeRun,
  refuseInSession,
  sessionPrelude,
  type FrontAuth,
  type Policy,
  type SettingValues,
} from "./policy.js";
import {
  credentialsOf,
  header,
  readBody,
  readParams,
  type Body,
  type RequestParams,
} from "./request.js";

/** ClickHouse's default http_max_uri_size. */
const MAX_URI_BYTES = 1 << 20;

interface HttpFrontOptions {
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
  /** Cap on the rows of one result: a larger one fails, its message naming the cap. */
  maxResultRows?: number;
  /** Cap on the bytes (in memory) of one result: a larger one fails, its message naming the cap. */
  maxResultBytes?: number;
  /**
   * With readonly: the databases a reader (the readers' token, or the one login of a front
   * without one) may read, besides the allow-listed system tables; without it, tables are not
   * checked. The owner's token is not held to it.
   */
  readerDatabases?: readonly string[];
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
    // What a fresh session of the engine has changed by itself (not `engine`, whose own
    // session may have set more), for the check of each readonly request's settings.
    const fresh = new Session(engine.path);
    let baseline: SettingValues;
    try {
      baseline = await engineBaseline(fresh);
    } finally {
      fresh.close();
    }
    front = new Front(
      options,
      Session,
      { dataDir: engine.path, baseline },
      version,
      timezone,
    );
  } catch (err) {
    owned?.close();
    throw err;
  }
  // A request line and headers up to ClickHouse's own limit (http_max_uri_size, 1 MiB by
  // default): query parameters travel in the URL, and Node's default of 16 KiB would refuse a
  // statement a server takes (431, with no body).
  const server = http.createServer(
    { maxHeaderSize: MAX_URI_BYTES },
    (req, res) => front.serve(req, res),
  );
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

class Front {
  readonly #gate: Gate;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #policy: Policy;
  readonly #displayName = hostname();

  constructor(
    private readonly options: HttpFrontOptions,
    private readonly Session: SessionConstructor,
    private readonly engine: { dataDir: string; baseline: SettingValues },
    private readonly version: string,
    private readonly timezone: string,
  ) {
    this.#policy = {
      readonly: options.readonly === true,
      maxExecutionTimeS: options.maxExecutionTimeS,
      maxMemoryUsage: options.maxMemoryUsage,
      maxResultRows: options.maxResultRows,
      maxResultBytes: options.maxResultBytes,
      readerDatabases: options.readerDatabases,
    };
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
      const { request, policy, prelude, body } = await this.#readRequest(
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
        { policy, prelude },
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
  ): Promise<{
    request: RequestParams;
    policy: Policy;
    prelude: string;
    body: Body;
  }> {
    const policy = policyFor(
      this.#policy,
      checkCredentials(credentialsOf(req, params), this.options.auth),
    );
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
    const prelude = sessionPrelude(policy, request, method);
    const body = await readBody(req, {
      maxBytes: maxBodyBytes(this.#policy, this.options.maxBodyBytes),
      inlineBytes: INLINE_BODY_BYTES,
      tempDir: this.#tempDir,
    });
    return { request, policy, prelude, body };
  }

  /** Plans the statement, makes the server's refusals, and runs it when the gate lets it. */
  async #run(
    urlQuery: string,
    body: Body,
    request: RequestParams,
    session: { policy: Policy; prelude: string },
    temporary: string[],
  ): Promise<{ plan: Plan; format: string; result: EngineResult }> {
    const plan = await planStatement(urlQuery, body, {
      tempDir: this.#tempDir,
      temporary,
    });
    refuseBeforeRun(this.#policy, plan.statement, plan.userText);
    const format =
      plan.statement.outputFormat ?? request.defaultFormat ?? "TabSeparated";
    const result = await this.#gate.run(() =>
      this.#execute(plan, { ...session, request }, format),
    );
    return { plan, format, result };
  }

  get #tempDir(): string {
    return this.options.tempDir ?? blockFileDir();
  }

  async #execute(
    plan: Plan,
    prepared: { policy: Policy; prelude: string; request: RequestParams },
    format: string,
  ): Promise<EngineResult> {
    const { policy, prelude, request } = prepared;
    const session = new this.Session(this.engine.dataDir);
    // A readonly request's statement is checked in a session of its own (refuseInSession).
    const checker = policy.readonly
      ? new this.Session(this.engine.dataDir)
      : undefined;
    try {
      const database = await prepareSession(
        policy,
        session,
        prelude,
        this.engine.baseline,
      );
      if (checker)
        await refuseInSession(
          policy,
          checker,
          plan.userText,
          request,
          database,
        );
      return await session.queryAsync(plan.sql, { format });
    } catch (err) {
      throw explainResultCap(this.#policy, inTermsOfTheRequest(err, plan));
    } finally {
      session.close();
      checker?.close();
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
