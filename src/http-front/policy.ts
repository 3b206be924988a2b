// Who may use the HTTP front and what a request may run there, under which settings: the front's
// whole access policy, for a reviewer to read alone. The credentials (read from the request by
// request.ts) must match the front's user and password or token (or readers' token). A front
// started with `readonly` (the read access of `sessionhouse run`, whose tokens other processes
// hold) runs every statement in an engine session with readonly = 1 and the caps on time, memory
// and, for readers, the size of a result (a larger result fails with the caps in its message);
// lets a request set only the settings of the one allow-list READER_SETTINGS
// (src/warehouse/reader-settings.ts: max_execution_time, itself capped, and the row groups of a
// Parquet answer), the HTTP interface's own settings included; takes a body no larger than a
// query; runs only the statements of the one allow-list of reads (readStatementRefusal:
// SELECT, SHOW, DESCRIBE, EXISTS, EXPLAIN AST — not KILL, SYSTEM, INTO OUTFILE, SETTINGS),
// refuses the words OUTFILE and INFILE and the file-reading functions; and lets a reader (the
// readers' token) read only the allow-listed tables (readerTableRefusal: the warehouse's database
// and the system tables that list databases, tables, columns and functions — not
// system.processes nor anything else that shows other clients' SQL).
import { timingSafeEqual } from "node:crypto";
import {
  ClickHouseCode,
  quoteIdent,
  quoteString,
  READ_STATEMENT_KINDS,
  READER_SETTINGS,
  readableTables,
  readerTableRefusal,
  readStatementRefusal,
  type ReaderTables,
} from "../warehouse/index.js";
import type { EngineSession } from "./engine.js";
import { FrontError } from "./errors.js";
import { INLINE_BODY_BYTES } from "./planning.js";
import type { Credentials, RequestParams } from "./request.js";
import { tokens, type Statement } from "./statement.js";

/**
 * Who may use the front: one user and password, or a token; with a token, optionally a second
 * one for readers (Grafana): the caps on a result's rows and bytes then apply to the readers'
 * requests only, and the token's holder (the owner's own commands, writing whole results to
 * files) reads whole results, still read-only and under the caps on time and memory.
 */
export type FrontAuth =
  | { user: string; password: string }
  | { token: string; readerToken?: string | undefined };

/**
 * Whose credentials a request carries: the owner's token (on a front that also has a readers'
 * token), the readers' token, or the front's one login (a user and password, or a lone token).
 */
export type Caller = "owner" | "reader" | "user";

/**
 * Refuses credentials that do not match: with a user and password, both must; with a token,
 * either the bearer token or the password (under any user name) must be the token (or the
 * readers' token). Returns whose they are.
 */
export function checkCredentials(
  c: Credentials,
  auth: FrontAuth | undefined,
): Caller {
  if (!auth) return "user";
  const given = c.bearer ?? c.password;
  const caller: Caller | undefined =
    "token" in auth
      ? same(given, auth.token)
        ? auth.readerToken === undefined
          ? "user"
          : "owner"
        : auth.readerToken !== undefined && same(given, auth.readerToken)
          ? "reader"
          : undefined
      : c.bearer === undefined &&
          same(c.user, auth.user) &&
          same(c.password, auth.password)
        ? "user"
        : undefined;
  if (caller === undefined)
    throw new FrontError(
      "AUTHENTICATION_FAILED",
      `${c.user}: Authentication failed: password is incorrect, or there is no user with such name`,
    );
  return caller;
}

/**
 * The policy for one caller: the owner's requests without the caps on a result and without the
 * readers' allow-list of tables (the owner's commands read the system tables they check, and the
 * owner holds the data directory itself).
 */
export function policyFor(policy: Policy, caller: Caller): Policy {
  return caller === "owner"
    ? {
        ...policy,
        maxResultRows: undefined,
        maxResultBytes: undefined,
        readerDatabases: undefined,
      }
    : policy;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  // Equal lengths first: timingSafeEqual throws on different lengths. The length is not secret.
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The front's limits on every request. */
export interface Policy {
  /** readonly = 1 for every request, and the refusals of a readonly front. */
  readonly: boolean;
  /** Cap on max_execution_time (seconds). */
  maxExecutionTimeS?: number | undefined;
  /** Cap on max_memory_usage (bytes). */
  maxMemoryUsage?: number | undefined;
  /** Cap on the rows of one result (max_result_rows); a larger result fails. */
  maxResultRows?: number | undefined;
  /** Cap on the bytes (in memory) of one result (max_result_bytes); a larger result fails. */
  maxResultBytes?: number | undefined;
  /**
   * On a readonly front, the databases a reader may read (with the allow-listed system tables);
   * without it, the tables are not checked.
   */
  readerDatabases?: readonly string[] | undefined;
}

/**
 * A setting a request may not set: on a readonly front, every setting but those of the one
 * allow-list READER_SETTINGS, as a readonly = 1 server refuses every setting not marked
 * CHANGEABLE_IN_READONLY (the HTTP layer's own, enable_http_compression and the like, too).
 */
function refuseSetting(policy: Policy, name: string): void {
  if (!policy.readonly || READER_SETTINGS.has(name)) return;
  throw new FrontError(
    "READONLY",
    `Cannot modify '${name}' setting in readonly mode: this read-only access lets a request set only ${[...READER_SETTINGS.keys()].join(", ")}`,
  );
}

/** Scalar functions that read files of the host; readonly = 1 lets them run, the front does not. */
const FILE_READING_FUNCTIONS = new Set(["file", "catboostevaluate"]);

/**
 * The statements that prepare the request's engine session: the settings (the front's caps
 * first, then the URL's), the query parameters, the default database, and readonly last so
 * that it does not refuse the others. readonly cannot come first here: the embedded engine has
 * no settings profiles (CREATE SETTINGS PROFILE is refused: it has no user directories), so a
 * setting cannot be marked CHANGEABLE_IN_READONLY, and under readonly = 1 no setting may change.
 * So a setting off the allow-list is refused here, before anything runs (refuseSetting), and
 * once the session is prepared the engine's own account of its changed settings is checked
 * against the same list before the statement runs (prepareSession): a setting that reached the
 * session in any other way fails the request, whatever this function let through.
 */
export function sessionPrelude(
  policy: Policy,
  request: RequestParams,
  method: string,
): string {
  const settings = new Map<string, string>();
  const timeCap = policy.maxExecutionTimeS;
  const memoryCap = policy.maxMemoryUsage;
  if (timeCap !== undefined)
    settings.set("max_execution_time", String(timeCap));
  if (memoryCap !== undefined)
    settings.set("max_memory_usage", String(memoryCap));
  const rowsCap = policy.maxResultRows;
  const bytesCap = policy.maxResultBytes;
  if (rowsCap !== undefined) settings.set("max_result_rows", String(rowsCap));
  if (bytesCap !== undefined)
    settings.set("max_result_bytes", String(bytesCap));
  // A result over a cap fails whole rather than arriving cut at some block, unnoticed.
  if (rowsCap !== undefined || bytesCap !== undefined)
    settings.set("result_overflow_mode", "throw");
  // GET requests are readonly = 2 on a server: settings may change, data may not.
  let readonly = policy.readonly ? 1 : method === "POST" ? 0 : 2;
  for (const name of request.httpSettings.keys()) refuseSetting(policy, name);
  for (const [name, value] of request.settings) {
    if (name === "readonly") {
      readonly = readonlyLevel(readonly, value);
      continue;
    }
    refuseSetting(policy, name);
    if (name === "max_execution_time" && timeCap !== undefined)
      settings.set(name, String(capped(value, timeCap)));
    else if (name === "max_memory_usage" && memoryCap !== undefined)
      settings.set(name, String(capped(value, memoryCap)));
    else if (name === "max_result_rows" && rowsCap !== undefined)
      settings.set(name, String(capped(value, rowsCap)));
    else if (name === "max_result_bytes" && bytesCap !== undefined)
      settings.set(name, String(capped(value, bytesCap)));
    else if (
      name === "result_overflow_mode" &&
      (rowsCap !== undefined || bytesCap !== undefined)
    )
      continue;
    else settings.set(name, value);
  }
  const assignments = [...settings].map(([k, v]) => `${k} = ${quoteString(v)}`);
  for (const [name, value] of request.queryParams)
    assignments.push(`param_${name} = ${quoteString(value)}`);
  const statements: string[] = [];
  if (assignments.length > 0) statements.push(`SET ${assignments.join(", ")}`);
  if (request.database) statements.push(`USE ${quoteIdent(request.database)}`);
  if (readonly > 0) statements.push(`SET readonly = ${readonly}`);
  return statements.join("; ");
}

/**
 * The readonly level a request asks for with the setting `readonly`, as a server allows it:
 * any level under readonly = 0, the same level, or 1 under 2.
 */
function readonlyLevel(current: number, value: string): number {
  const level = Number(value);
  if (!(level === 0 || level === 1 || level === 2))
    throw new FrontError(
      "BAD_ARGUMENTS",
      `Invalid value '${value}' of setting 'readonly'`,
    );
  if (current === 0 || level === current || (current === 2 && level === 1))
    return level;
  throw new FrontError(
    "READONLY",
    "Cannot modify 'readonly' setting in readonly mode",
  );
}

function capped(value: string, cap: number): number {
  const n = Number(value);
  // 0 means "no limit" to the engine, which is exactly what a cap does not allow.
  return Number.isFinite(n) && n > 0 ? Math.min(n, cap) : cap;
}

/**
 * The engine's error for a result over the caps, with what the front's caps are and what to do:
 * a client such as Grafana shows the message as it is. Any other error is returned unchanged.
 */
export function explainResultCap(policy: Policy, err: unknown): unknown {
  const message = err instanceof Error ? err.message : "";
  const code = /^Code: (\d+)\./.exec(message)?.[1];
  if (Number(code) !== ClickHouseCode.TOO_MANY_ROWS_OR_BYTES) return err;
  const caps = [
    policy.maxResultRows !== undefined ? `${policy.maxResultRows} rows` : "",
    policy.maxResultBytes !== undefined ? `${policy.maxResultBytes} bytes` : "",
  ].filter((c) => c !== "");
  if (caps.length === 0) return err;
  const reason = /DB::Exception: ([^(]*?)\.? \(TOO_MANY_ROWS_OR_BYTES\)/.exec(
    message,
  )?.[1];
  return new FrontError(
    "TOO_MANY_ROWS_OR_BYTES",
    `${reason ?? "Limit for result exceeded"}: this read-only access returns at most ${caps.join(" and ")} a query, and the result was larger; ask for less (a LIMIT, a shorter time range, narrower filters)`,
  );
}

/**
 * The largest request body (after decompression): the configured one, else, for a readonly
 * front, what a query may be (it takes no data), and 16 GiB for one that takes INSERT data.
 */
export function maxBodyBytes(
  policy: Policy,
  configured: number | undefined,
): number {
  return configured ?? (policy.readonly ? INLINE_BODY_BYTES : 16 * 2 ** 30);
}

/**
 * The refusals before a statement runs: the server's (checkStatement), and for a readonly front
 * the words that read or write files of the host (refuseFileAccess).
 */
export function refuseBeforeRun(
  policy: Policy,
  statement: Statement,
  userText: string,
): void {
  checkStatement(statement, userText);
  if (policy.readonly) refuseFileAccess(userText);
}

/**
 * The settings the front itself sets in a readonly request's session, besides those of
 * READER_SETTINGS: readonly and the caps.
 */
const FRONT_SETTINGS: ReadonlySet<string> = new Set([
  "readonly",
  "max_execution_time",
  "max_memory_usage",
  "max_result_rows",
  "max_result_bytes",
  "result_overflow_mode",
]);

/** The engine's changed settings, by name: what a fresh session of the engine starts with. */
export type SettingValues = ReadonlyMap<string, string>;

/**
 * The settings changed in a session (`[name, value]`, from the engine's system.settings) that
 * are neither what a fresh session has (`baseline`) nor set by the front (FRONT_SETTINGS) nor on
 * the readers' allow-list.
 */
export function settingsBeyondList(
  changed: readonly (readonly [string, string])[],
  baseline: SettingValues,
): string[] {
  return changed
    .filter(
      ([name, value]) =>
        baseline.get(name) !== value &&
        !FRONT_SETTINGS.has(name) &&
        !READER_SETTINGS.has(name),
    )
    .map(([name]) => name);
}

const CHANGED_SETTINGS =
  "SELECT currentDatabase(), groupArray((name, value)) FROM system.settings WHERE changed";

/** The changed settings of a fresh engine session: what the engine itself sets. */
export async function engineBaseline(
  session: EngineSession,
): Promise<SettingValues> {
  const [, changed] = await changedSettings(session, CHANGED_SETTINGS);
  return new Map(changed);
}

async function changedSettings(
  session: EngineSession,
  sql: string,
): Promise<[string, [string, string][]]> {
  const r = await session.queryAsync(sql, { format: "JSONCompactEachRow" });
  const text = Buffer.from(r.bytes()).toString("utf8").trim();
  return JSON.parse(text) as [string, [string, string][]];
}

/**
 * Prepares the request's engine session with `prelude` (sessionPrelude). On a readonly front,
 * checks then, in the same call, the engine's own account of the session's changed settings
 * against the allow-list (settingsBeyondList), and returns the session's current database.
 */
export async function prepareSession(
  policy: Policy,
  session: EngineSession,
  prelude: string,
  baseline: SettingValues,
): Promise<string | undefined> {
  if (!policy.readonly) {
    if (prelude !== "") await session.queryAsync(prelude, { format: "TSV" });
    return undefined;
  }
  const [database, changed] = await changedSettings(
    session,
    `${prelude}; ${CHANGED_SETTINGS}`,
  );
  const beyond = settingsBeyondList(changed, baseline);
  if (beyond.length > 0)
    throw new FrontError(
      "READONLY",
      `Cannot execute query in readonly mode: the engine session has ${beyond.join(", ")} set, which this read-only access does not allow; nothing ran`,
    );
  return database;
}

/**
 * The refusals before a readonly request's statement runs, made in `checker`, an engine session
 * of their own (the request's own session has a reader's caps on a result's rows, and a syntax
 * tree has more rows than that): its query parameters set and its database in use (as the
 * request's), under readonly = 1. On the statement as the engine formats it (formatQuery: one
 * statement, no comments), the file-reading functions; on the engine's syntax tree of it
 * (EXPLAIN AST), the one allow-list of reads (readStatementRefusal), and for a reader the
 * allow-list of tables (readerTableRefusal), unqualified names in `database`.
 */
export async function refuseInSession(
  policy: Policy,
  checker: EngineSession,
  userText: string,
  request: RequestParams,
  database: string | undefined,
): Promise<void> {
  if (!policy.readonly) return;
  const prelude = [...request.queryParams].map(
    ([name, value]) => `param_${name} = ${quoteString(value)}`,
  );
  await checker.queryAsync(
    [
      ...(prelude.length > 0 ? [`SET ${prelude.join(", ")}`] : []),
      ...(request.database ? [`USE ${quoteIdent(request.database)}`] : []),
      "SET readonly = 1",
    ].join("; "),
    { format: "TSV" },
  );
  const canonical = await formattedQuery(checker, userText);
  refuseFileFunctions(canonical);
  const rows = await syntaxTreeRows(checker, canonical);
  const refusal = readStatementRefusal(rows.join("\n"));
  if (refusal !== undefined)
    throw new FrontError(
      "READONLY",
      `Cannot execute query in readonly mode: ${refusal}; this read-only access runs ${READ_STATEMENT_KINDS.join("; ")}`,
    );
  const databases = policy.readerDatabases;
  if (databases === undefined) return;
  const where: ReaderTables = { databases, current: database ?? "default" };
  const denied = readerTableRefusal(rows, where);
  if (denied !== undefined)
    throw new FrontError(
      "ACCESS_DENIED",
      `${denied}: a reader of this access reads ${readableTables(databases)}`,
    );
}

/**
 * The rows of the engine's `EXPLAIN AST` of one formatted statement, as TSV: one node a row, a
 * line feed in a name escaped inside its row. The statement's FORMAT clause is its own (a child
 * of its tree); the answer's format is the call's.
 */
async function syntaxTreeRows(
  session: EngineSession,
  canonical: string,
): Promise<string[]> {
  const r = await session.queryAsync(`EXPLAIN AST ${canonical}`, {
    format: "TSV",
  });
  return Buffer.from(r.bytes())
    .toString("utf8")
    .split("\n")
    .filter((l) => l !== "");
}

/** Refusals the server makes before running a statement that came over HTTP. */
function checkStatement(statement: Statement, userText: string): void {
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
 * In readonly mode, a check of the statement as the engine formats it (formatQuery): one
 * statement, no comments, identifiers unescaped. readonly = 1 lets the scalar function file()
 * read any file of the host; it is refused (a SELECT may call it, so the allow-list of
 * statements does not cover it).
 */
function refuseFileFunctions(canonical: string): void {
  let previous: { name: string } | undefined;
  for (const t of tokens(canonical)) {
    const name =
      t.kind === "word"
        ? t.text.toLowerCase()
        : t.kind === "quoted"
          ? t.text.slice(1, -1).toLowerCase()
          : undefined;
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

/** The statement as the engine formats it; the engine's error in terms of the statement. */
async function formattedQuery(
  session: EngineSession,
  text: string,
): Promise<string> {
  try {
    const r = await session.queryAsync(
      `SELECT formatQuery(${quoteString(text)})`,
      {
        format: "JSONCompactEachRow",
      },
    );
    const [canonical] = JSON.parse(Buffer.from(r.bytes()).toString("utf8")) as [
      string,
    ];
    return canonical;
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
}
