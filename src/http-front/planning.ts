// From a request to the statement the engine runs. The URL's query comes first and a line feed
// joins it to the body, as on a server; the data of an INSERT goes to a file the engine reads
// (INSERT … FROM INFILE, or file(…) for the input(…) of an INSERT … SELECT), so a large body
// never becomes SQL text. Files written here are named in `spool.temporary` for the caller to
// remove once the request is answered.
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { openPrivateFile } from "../util/private-files.js";
import { blockFilePath, quoteIdent, quoteString } from "../warehouse/index.js";
import { FrontError } from "./errors.js";
import type { Body } from "./request.js";
import { readStatement, type Statement } from "./statement.js";

/** Bodies up to this size are held in memory; larger ones go to a temporary file. */
export const INLINE_BODY_BYTES = 1 << 20;

/** The statement to run, and the text the user sent for it. */
export interface Plan {
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

/** Where a plan's data files go, and the list of them for the caller to remove. */
export interface Spool {
  readonly tempDir: string;
  readonly temporary: string[];
}

/** The plan of the statement in the URL's query and the body. */
export async function planStatement(
  urlQuery: string,
  body: Body,
  spool: Spool,
): Promise<Plan> {
  if (body.kind === "file") {
    const plan =
      urlQuery !== ""
        ? await insertOfUrl(urlQuery, body.path, spool)
        : await insertOfFileHead(body.path, spool);
    if (plan) return plan;
    throw new FrontError(
      "QUERY_IS_TOO_LARGE",
      `The query is larger than ${INLINE_BODY_BYTES} bytes: only the data of an INSERT may be that large (send INSERT … FORMAT in the query parameter and the data as the body)`,
    );
  }
  return planInMemory(
    urlQuery,
    body.kind === "memory" ? body.data : undefined,
    spool,
  );
}

/** A new data file of the spool. */
function dataFile(spool: Spool): string {
  const path = blockFilePath(spool.tempDir);
  spool.temporary.push(path);
  return path;
}

/**
 * The URL's INSERT with the spooled body as its data; data that starts in the URL goes first,
 * in a new file. Undefined when the URL's statement is not an INSERT with its data after it.
 */
async function insertOfUrl(
  urlQuery: string,
  bodyPath: string,
  spool: Spool,
): Promise<Plan | undefined> {
  const statement = readStatement(urlQuery);
  const insert = statement.insert;
  if (!insert) return undefined;
  const tail = urlQuery.slice(insert.dataStart);
  let data = bodyPath;
  if (tail.trim() !== "") {
    data = dataFile(spool);
    await copyInto(data, Buffer.from(tail + "\n"), bodyPath, 0);
  }
  return insertPlan(urlQuery, statement, data);
}

/**
 * Statement and data both in the spooled body: the statement is read from the file's head and
 * the data copied to a file of its own. Undefined unless the head holds an INSERT whose data
 * starts in it.
 */
async function insertOfFileHead(
  bodyPath: string,
  spool: Spool,
): Promise<Plan | undefined> {
  const head = await readHead(bodyPath, INLINE_BODY_BYTES);
  const text = head.toString("utf8");
  const statement = readStatement(text);
  if (!statement.insert || statement.insert.dataStart >= text.length)
    return undefined;
  const offset = Buffer.byteLength(text.slice(0, statement.insert.dataStart));
  const data = dataFile(spool);
  await copyInto(data, Buffer.alloc(0), bodyPath, offset);
  return insertPlan(text, statement, data);
}

/** The statement in the URL's query and a body held in memory, if any. */
async function planInMemory(
  urlQuery: string,
  bodyData: Buffer | undefined,
  spool: Spool,
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
    const offset = Buffer.byteLength(text.slice(0, statement.insert.dataStart));
    const data = dataFile(spool);
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
    : quoteIdent(insert.format);
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
export function inTermsOfTheRequest(err: unknown, plan: Plan): unknown {
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
