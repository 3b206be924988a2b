// Just enough of ClickHouse's lexical structure for the HTTP front to find, in the text of a
// statement: where the data of an INSERT begins, the input(…) call of an INSERT … SELECT, the
// output FORMAT clause, a second statement, and INTO OUTFILE / FROM INFILE. The engine parses
// the statement itself; nothing here decides whether SQL is valid. The readonly checks that
// must not be fooled do not rely on this lexer (see policy.ts).

export type TokenKind =
  | "word" // bare identifier or keyword
  | "quoted" // `identifier` or "identifier"
  | "string" // 'literal' or a $tag$heredoc$tag$
  | "number"
  | "open" // ( [ {
  | "close" // ) ] }
  | "semicolon"
  | "other"; // any other punctuation

export interface Token {
  kind: TokenKind;
  /** The token's text as written. */
  text: string;
  start: number;
  end: number;
  /** Bracket depth before the token (an opening bracket has the depth outside it). */
  depth: number;
}

const WORD_START = /[A-Za-z_]/;
const WORD_CHAR = /[A-Za-z0-9_]/;
const DIGIT = /[0-9]/;
const NUMBER_CHAR = /[0-9A-Za-z_.]/;

/** Tokens of `sql` from `from`, skipping whitespace and comments. */
export function* tokens(sql: string, from = 0): Generator<Token> {
  let i = from;
  let depth = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const afterComment = commentEnd(sql, i);
    if (afterComment > i) {
      i = afterComment;
      continue;
    }
    const literal = literalAt(sql, i, depth);
    if (literal) {
      i = literal.end;
      yield literal;
      continue;
    }
    const kind = punctuationKind(c);
    if (kind === "close") depth = Math.max(0, depth - 1);
    yield { kind, text: c, start: i, end: i + 1, depth };
    if (kind === "open") depth++;
    i++;
  }
}

/** The end of the comment that starts at `i`, or `i` when none does. */
function commentEnd(sql: string, i: number): number {
  const c = sql[i];
  const next = sql[i + 1];
  // Line comments: -- and "# " / "#!".
  if (
    (c === "-" && next === "-") ||
    (c === "#" && (next === " " || next === "!"))
  ) {
    const nl = sql.indexOf("\n", i);
    return nl < 0 ? sql.length : nl + 1;
  }
  if (c !== "/" || next !== "*") return i;
  // Block comments nest in ClickHouse.
  const n = sql.length;
  let level = 1;
  i += 2;
  while (i < n && level > 0) {
    if (sql[i] === "/" && sql[i + 1] === "*") {
      level++;
      i += 2;
    } else if (sql[i] === "*" && sql[i + 1] === "/") {
      level--;
      i += 2;
    } else i++;
  }
  return i;
}

/** The quoted identifier, string, word or number that starts at `start`, if one does. */
function literalAt(
  sql: string,
  start: number,
  depth: number,
): Token | undefined {
  const c = sql[start] as string;
  let kind: TokenKind;
  let end: number | undefined;
  if (c === "'" || c === '"' || c === "`") {
    kind = c === "'" ? "string" : "quoted";
    end = skipQuoted(sql, start, c);
  } else if (c === "$") {
    end = heredocEnd(sql, start);
    // A `$` that opens no heredoc is punctuation.
    if (end === undefined) return undefined;
    kind = "string";
  } else if (WORD_START.test(c)) {
    kind = "word";
    end = skipWhile(sql, start + 1, WORD_CHAR);
  } else if (DIGIT.test(c)) {
    kind = "number";
    end = skipWhile(sql, start + 1, NUMBER_CHAR);
  } else return undefined;
  return { kind, text: sql.slice(start, end), start, end, depth };
}

/**
 * The end of a $tag$heredoc$tag$ opened at `i` (the end of `sql` when it is not closed), or
 * undefined when no tag opens there.
 */
function heredocEnd(sql: string, i: number): number | undefined {
  const tag = /^\$([A-Za-z0-9_]*)\$/.exec(sql.slice(i, i + 256));
  if (!tag) return undefined;
  const close = sql.indexOf(tag[0], i + tag[0].length);
  return close < 0 ? sql.length : close + tag[0].length;
}

/** The first index from `i` whose character `re` does not match. */
function skipWhile(sql: string, i: number, re: RegExp): number {
  while (i < sql.length && re.test(sql[i] as string)) i++;
  return i;
}

/** The kind of a one-character token: a bracket, a semicolon or other punctuation. */
function punctuationKind(c: string): TokenKind {
  if (c === "(" || c === "[" || c === "{") return "open";
  if (c === ")" || c === "]" || c === "}") return "close";
  return c === ";" ? "semicolon" : "other";
}

/** The end of a quoted token opened at `i` (backslash escapes, or the quote doubled). */
function skipQuoted(sql: string, i: number, quote: string): number {
  const n = sql.length;
  i++;
  while (i < n) {
    const c = sql[i];
    if (c === "\\") {
      i += 2;
    } else if (c === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return n;
}

const isWord = (t: Token | undefined, ...words: string[]): boolean =>
  t !== undefined && t.kind === "word" && words.includes(t.text.toUpperCase());

/** An INSERT whose data follows the statement: `… FORMAT name <data>` or `… VALUES <data>`. */
export interface InsertWithData {
  /**
   * `INSERT INTO target [(columns)]`, up to the SETTINGS, FORMAT or VALUES clause; for an
   * INSERT … SELECT, the whole statement up to its FORMAT clause.
   */
  head: string;
  /** The statement's SETTINGS clause, `SETTINGS …`, or "" (always "" for an INSERT … SELECT). */
  settings: string;
  /** The data's format: the FORMAT clause's name, or Values. */
  format: string;
  /** Where the data begins in the text (may be its length: no data in the text). */
  dataStart: number;
  /** Set for `INSERT … SELECT … input(…) … FORMAT name`: the SELECT reads the data. */
  input?: InputCall;
}

/** The one input(…) call of an INSERT … SELECT, splitting the statement around it. */
export interface InputCall {
  /** The statement from INSERT up to the call. */
  before: string;
  /** The call's arguments as written (the structure), "" for none. */
  args: string;
  /** How many arguments the call has. */
  argCount: number;
  /** The statement from after the call up to its FORMAT clause, without trailing blanks. */
  after: string;
  /** The call as written. */
  text: string;
}

export interface Statement {
  /** The first word, upper-cased (SELECT, INSERT, CREATE, …), or "" for none. */
  verb: string;
  /** Set when the statement is an INSERT whose data follows it. */
  insert?: InsertWithData;
  /** The statement names a file for the data of an INSERT (FROM INFILE). */
  fromInfile: boolean;
  /** The statement writes its result to a file (INTO OUTFILE). */
  intoOutfile: boolean;
  /** The output format of a FORMAT clause (not for INSERT), if any. */
  outputFormat?: string;
  /** Offset of the semicolon that a second statement follows, if there is one. */
  multiStatementAt?: number;
  /** For an INSERT … SELECT, how many input(…) calls its SELECT makes before a FORMAT clause. */
  inputCalls?: number;
}

/**
 * Reads the statement at the start of `sql`. For an INSERT with its data inline the reading stops
 * where the data begins, as the server's parser does: the data is not SQL.
 */
export function readStatement(sql: string): Statement {
  const it = tokens(sql);
  const first = it.next();
  if (first.done) return { verb: "", fromInfile: false, intoOutfile: false };
  const verb =
    first.value.kind === "word" ? first.value.text.toUpperCase() : "";
  let inputCalls: number | undefined;
  if (verb === "INSERT") {
    const ins = readInsert(sql, first.value, it);
    if (ins.insert || ins.fromInfile)
      return { verb, ...ins, intoOutfile: false };
    inputCalls = ins.inputCalls;
  }
  // Everything else, including an INSERT … SELECT that reads no data: scan to the end.
  const result: Statement = { verb, fromInfile: false, intoOutfile: false };
  if (inputCalls !== undefined) result.inputCalls = inputCalls;
  let prev: Token = first.value;
  let semicolon: Token | undefined;
  for (const t of tokens(sql, first.value.end)) {
    if (semicolon) {
      result.multiStatementAt = semicolon.start;
      break;
    }
    if (t.kind === "semicolon" && t.depth === 0) {
      semicolon = t;
    } else if (isWord(prev, "INTO") && isWord(t, "OUTFILE")) {
      result.intoOutfile = true;
    } else if (
      verb !== "INSERT" &&
      t.depth === 0 &&
      isWord(prev, "FORMAT") &&
      (t.kind === "word" || t.kind === "quoted")
    ) {
      result.outputFormat = unquote(t);
    }
    prev = t;
  }
  return result;
}

function unquote(t: Token): string {
  return t.kind === "quoted" ? t.text.slice(1, -1) : t.text;
}

/**
 * Reads an INSERT after its first word: the target, a column list, then FROM INFILE, the
 * clause its data follows, or a SELECT that reads its data with input(…). For anything else,
 * an INSERT … SELECT without input() included, it finds none of them.
 */
function readInsert(
  sql: string,
  insertToken: Token,
  it: Iterator<Token>,
): { insert?: InsertWithData; fromInfile: boolean; inputCalls?: number } {
  const none = { fromInfile: false };
  const next = (): Token | undefined => {
    const r = it.next();
    return r.done ? undefined : r.value;
  };
  let t = afterTarget(next);
  // Column list.
  if (t?.kind === "open" && t.text === "(" && t.depth === 0) {
    const group = t;
    // `INSERT INTO t (SELECT …)` is a query, not a column list.
    const after = tokens(sql, group.end).next();
    if (!after.done && isWord(after.value, "SELECT", "WITH"))
      return {
        fromInfile: false,
        ...readInsertSelect(sql, insertToken, group),
      };
    t = skipGroup(group, next);
  }
  if (isWord(t, "FROM")) {
    const infile = next();
    return { fromInfile: isWord(infile, "INFILE") };
  }
  // Nothing after the target and columns: no clause for data to follow.
  if (t === undefined) return none;
  const select = selectAfter(sql, t);
  if (select)
    return { fromInfile: false, ...readInsertSelect(sql, insertToken, select) };
  const insert = dataClause(sql, insertToken, t, next);
  return insert ? { fromInfile: false, insert } : none;
}

/**
 * The SELECT an INSERT's source clause at `t` starts with, after an optional SETTINGS clause:
 * a SELECT, WITH or opening parenthesis at depth 0; undefined when the clause is not a query.
 */
function selectAfter(sql: string, t: Token): Token | undefined {
  const it = tokens(sql, t.start);
  const next = (): Token | undefined => {
    const r = it.next();
    return r.done ? undefined : r.value;
  };
  let clause = next();
  if (isWord(clause, "SETTINGS")) clause = afterSettings(clause, next);
  return isWord(clause, "SELECT", "WITH") ||
    (clause?.kind === "open" && clause.text === "(")
    ? clause
    : undefined;
}

/**
 * Reads the SELECT of an INSERT from `select` (at depth 0) to its FORMAT clause, counting its
 * input(…) calls. With exactly one call and a FORMAT clause the INSERT reads the data that
 * follows; the FORMAT clause is the first `FORMAT name` at depth 0 (so a column of the SELECT
 * named format must be back-quoted), and the reading stops there, as the data is not SQL.
 */
function readInsertSelect(
  sql: string,
  insertToken: Token,
  select: Token,
): { insert?: InsertWithData; inputCalls: number } {
  const calls: { name: Token; open: Token; close?: Token; commas: number }[] =
    [];
  let prev: Token | undefined;
  for (const t of tokens(sql, select.start)) {
    if (t.kind === "semicolon" && t.depth === 0) break;
    if (
      prev &&
      prev.depth === 0 &&
      isWord(prev, "FORMAT") &&
      (t.kind === "word" || t.kind === "quoted")
    ) {
      const call = calls.length === 1 ? calls[0] : undefined;
      if (!call?.close) return { inputCalls: calls.length };
      const args = sql.slice(call.open.end, call.close.start).trim();
      return {
        inputCalls: 1,
        insert: {
          head: sql.slice(insertToken.start, prev.start).trimEnd(),
          settings: "",
          format: unquote(t),
          dataStart: dataStartAfter(sql, t.end),
          input: {
            before: sql.slice(insertToken.start, call.name.start),
            args,
            argCount: args === "" ? 0 : call.commas + 1,
            after: sql.slice(call.close.end, prev.start).trimEnd(),
            text: sql.slice(call.name.start, call.close.end),
          },
        },
      };
    }
    if (t.kind === "open" && t.text === "(" && prev && isInputName(prev)) {
      calls.push({ name: prev, open: t, commas: 0 });
    } else if (t.kind === "other" && t.text === ",") {
      const call = calls.findLast(
        (c) => c.close === undefined && c.open.depth + 1 === t.depth,
      );
      if (call) call.commas++;
    } else if (t.kind === "close") {
      const call = calls.findLast(
        (c) => c.close === undefined && c.open.depth === t.depth,
      );
      if (call) call.close = t;
    }
    prev = t;
  }
  return { inputCalls: calls.length };
}

/** The name of the input table function, bare or quoted; the engine matches it exactly. */
function isInputName(t: Token): boolean {
  return (t.kind === "word" || t.kind === "quoted") && unquote(t) === "input";
}

/**
 * The token after `INTO [TABLE] target`, the target being `FUNCTION name(…)` or `[db.]table`
 * with each part bare or quoted; undefined when the tokens are not that, or nothing follows.
 */
function afterTarget(next: () => Token | undefined): Token | undefined {
  let t = next();
  if (!isWord(t, "INTO")) return undefined;
  t = next();
  if (isWord(t, "TABLE")) t = next();
  if (isWord(t, "FUNCTION")) {
    next(); // the function's name
    t = next();
    if (t?.kind !== "open") return undefined;
    return skipGroup(t, next);
  }
  if (t?.kind !== "word" && t?.kind !== "quoted") return undefined;
  t = next();
  if (t?.kind === "other" && t.text === ".") {
    t = next();
    if (t?.kind !== "word" && t?.kind !== "quoted") return undefined;
    t = next();
  }
  return t;
}

/**
 * The clause at `t` that an INSERT's data follows, `[SETTINGS …] VALUES` or
 * `[SETTINGS …] FORMAT name`, with the statement's head; undefined when it is neither.
 */
function dataClause(
  sql: string,
  insertToken: Token,
  t: Token,
  next: () => Token | undefined,
): InsertWithData | undefined {
  const head = sql.slice(insertToken.start, t.start).trimEnd();
  let clause: Token | undefined = t;
  let settings = "";
  if (isWord(t, "SETTINGS")) {
    clause = afterSettings(t, next);
    if (clause === undefined) return undefined;
    settings = sql.slice(t.start, clause.start).trim();
  }
  if (isWord(clause, "VALUES"))
    return { head, settings, format: "Values", dataStart: clause.end };
  if (!isWord(clause, "FORMAT")) return undefined;
  const name = next();
  if (name?.kind !== "word" && name?.kind !== "quoted") return undefined;
  return {
    head,
    settings,
    format: unquote(name),
    dataStart: dataStartAfter(sql, name.end),
  };
}

/**
 * The first token from `t` at depth 0 that ends a SETTINGS clause: FORMAT, VALUES, SELECT, WITH
 * or an opening parenthesis; undefined when none does.
 */
function afterSettings(
  t: Token | undefined,
  next: () => Token | undefined,
): Token | undefined {
  while (
    t !== undefined &&
    !(
      t.depth === 0 &&
      (isWord(t, "FORMAT", "VALUES", "SELECT", "WITH") ||
        (t.kind === "open" && t.text === "("))
    )
  ) {
    t = next();
  }
  return t;
}

/** Consumes tokens through the bracket closing `open`; returns the token after it. */
function skipGroup(
  open: Token,
  next: () => Token | undefined,
): Token | undefined {
  let t = next();
  while (t !== undefined && !(t.kind === "close" && t.depth === open.depth))
    t = next();
  return next();
}

/**
 * Where the data after `FORMAT name` begins: after the first line feed if the whitespace
 * following the name holds one, otherwise after all of that whitespace.
 */
function dataStartAfter(sql: string, from: number): number {
  let i = from;
  while (i < sql.length && /\s/.test(sql[i] as string)) {
    if (sql[i] === "\n") return i + 1;
    i++;
  }
  return i;
}
