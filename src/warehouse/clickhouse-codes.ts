// ClickHouse error codes the exporter acts on or raises (the HTTP front), by name (`SELECT errorCodeToName(N)` gives the
// same names), and the three things a failed insert can mean: the statement itself is wrong
// (another try cannot help), some rows are wrong (the block can be split to find them), or
// neither (the server is busy, unreachable or out of memory: try again later).

export const ClickHouseCode = {
  UNSUPPORTED_METHOD: 1,
  UNEXPECTED_END_OF_FILE: 3,
  CANNOT_PARSE_TEXT: 6,
  INCORRECT_NUMBER_OF_COLUMNS: 7,
  DUPLICATE_COLUMN: 15,
  NO_SUCH_COLUMN_IN_TABLE: 16,
  CANNOT_PARSE_ESCAPE_SEQUENCE: 25,
  CANNOT_PARSE_QUOTED_STRING: 26,
  CANNOT_PARSE_INPUT_ASSERTION_FAILED: 27,
  CANNOT_READ_ALL_DATA: 33,
  BAD_ARGUMENTS: 36,
  CANNOT_PARSE_DATE: 38,
  CANNOT_PARSE_DATETIME: 41,
  NUMBER_OF_ARGUMENTS_DOESNT_MATCH: 42,
  UNKNOWN_IDENTIFIER: 47,
  NOT_IMPLEMENTED: 48,
  UNKNOWN_TYPE: 50,
  TYPE_MISMATCH: 53,
  UNKNOWN_TABLE: 60,
  SYNTAX_ERROR: 62,
  ARGUMENT_OUT_OF_BOUND: 69,
  CANNOT_CONVERT_TYPE: 70,
  CANNOT_PARSE_NUMBER: 72,
  UNKNOWN_TYPE_OF_QUERY: 78,
  UNKNOWN_DATABASE: 81,
  UNKNOWN_SETTING: 115,
  INCORRECT_DATA: 117,
  CANNOT_READ_ARRAY_FROM_TEXT: 130,
  TOO_LARGE_STRING_SIZE: 131,
  READONLY: 164,
  THERE_IS_NO_PROFILE: 180,
  TOO_MANY_SIMULTANEOUS_QUERIES: 202,
  QUERY_IS_TOO_LARGE: 229,
  CANNOT_DECOMPRESS: 271,
  VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE: 321,
  CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN: 349,
  INTO_OUTFILE_NOT_ALLOWED: 358,
  CANNOT_PARSE_UUID: 376,
  QUERY_WAS_CANCELLED: 394,
  FUNCTION_THROW_IF_VALUE_IS_NON_ZERO: 395,
  TOO_MANY_ROWS_OR_BYTES: 396,
  DECIMAL_OVERFLOW: 407,
  SETTING_CONSTRAINT_VIOLATION: 452,
  CANNOT_PARSE_BOOL: 467,
  VIOLATED_CONSTRAINT: 469,
  INVALID_USAGE_OF_INPUT: 477,
  ACCESS_ENTITY_NOT_FOUND: 492,
  ACCESS_DENIED: 497,
  UNKNOWN_ROLE: 511,
  AUTHENTICATION_FAILED: 516,
  STD_EXCEPTION: 1001,
} as const;

export type ClickHouseCodeName = keyof typeof ClickHouseCode;

const codes = (names: readonly ClickHouseCodeName[]) =>
  new Set(names.map((n) => String(ClickHouseCode[n])));

/** The statement is wrong whatever the rows: every try and every half of a block fails alike. */
const STATEMENT_CODES = codes([
  "NO_SUCH_COLUMN_IN_TABLE",
  "DUPLICATE_COLUMN",
  "UNKNOWN_IDENTIFIER",
  "UNKNOWN_TYPE",
  "UNKNOWN_TABLE",
  "SYNTAX_ERROR",
  "UNKNOWN_DATABASE",
  "UNKNOWN_SETTING",
  "BAD_ARGUMENTS",
  "NUMBER_OF_ARGUMENTS_DOESNT_MATCH",
  "READONLY",
  "SETTING_CONSTRAINT_VIOLATION",
  "INVALID_USAGE_OF_INPUT",
  "ACCESS_DENIED",
  "AUTHENTICATION_FAILED",
]);

/** A value of some row cannot be stored: the rows without it can. */
const ROW_CODES = codes([
  "UNEXPECTED_END_OF_FILE",
  "CANNOT_PARSE_TEXT",
  "INCORRECT_NUMBER_OF_COLUMNS",
  "CANNOT_PARSE_ESCAPE_SEQUENCE",
  "CANNOT_PARSE_QUOTED_STRING",
  "CANNOT_PARSE_INPUT_ASSERTION_FAILED",
  "CANNOT_READ_ALL_DATA",
  "CANNOT_PARSE_DATE",
  "CANNOT_PARSE_DATETIME",
  "TYPE_MISMATCH",
  "ARGUMENT_OUT_OF_BOUND",
  "CANNOT_CONVERT_TYPE",
  "CANNOT_PARSE_NUMBER",
  "INCORRECT_DATA",
  "CANNOT_READ_ARRAY_FROM_TEXT",
  "TOO_LARGE_STRING_SIZE",
  "VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE",
  "CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN",
  "CANNOT_PARSE_UUID",
  "DECIMAL_OVERFLOW",
  "CANNOT_PARSE_BOOL",
  "VIOLATED_CONSTRAINT",
  // sessionRowsSelect refuses a record the engine cannot read with throwIf.
  "FUNCTION_THROW_IF_VALUE_IS_NON_ZERO",
]);

/**
 * The code ClickHouse gave with an error, if any: `err.code`, a numeric string, from a server;
 * from the embedded engine's own calls `err.clickhouseCode`, a number, or, for an error its
 * stream raised mid-result (which carries none), the code its message opens with
 * ("Code: 47. DB::Exception: …", as ClickHouse writes every exception).
 */
export function clickHouseCode(err: unknown): string | undefined {
  const e = err as {
    code?: unknown;
    clickhouseCode?: unknown;
    message?: unknown;
  } | null;
  if (typeof e?.code === "string" && /^\d+$/.test(e.code)) return e.code;
  if (typeof e?.clickhouseCode === "number") return String(e.clickhouseCode);
  if (typeof e?.message !== "string") return undefined;
  return /^Code: (\d+)\. DB::Exception: /.exec(e.message)?.[1];
}

/** How an insert that failed with `err` can go on. */
export type InsertFailure = "statement" | "rows" | "transient";

export function insertFailure(err: unknown): InsertFailure {
  const code = clickHouseCode(err);
  if (code === undefined) return "transient";
  if (STATEMENT_CODES.has(code)) return "statement";
  if (ROW_CODES.has(code)) return "rows";
  return "transient";
}
