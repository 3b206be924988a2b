// Errors as ClickHouse's HTTP interface sends them: an HTTP status chosen from the exception
// code, the header X-ClickHouse-Exception-Code, and a body
// `Code: N. DB::Exception: <message>. (NAME) (version V)` followed by a line feed.
import { ClickHouseCode, type ClickHouseCodeName } from "../warehouse/index.js";

/** An error the front answers with, in ClickHouse's terms. */
export class FrontError extends Error {
  readonly code: number;
  readonly codeName: string;
  constructor(name: ClickHouseCodeName, message: string) {
    super(message);
    this.code = ClickHouseCode[name];
    this.codeName = name;
  }
}

/** What an error answer carries. */
export interface ErrorAnswer {
  status: number;
  code: number;
  /** The body without the version suffix: `Code: N. DB::Exception: … (NAME)`. */
  text: string;
}

/**
 * The HTTP status ClickHouse answers an exception code with (the server's own table,
 * src/Server/HTTP/exceptionCodeToHTTPStatus.cpp of github.com/ClickHouse/ClickHouse; the
 * numbers are the engine's own, as its errorCodeToName function names them). Every code not
 * listed is 500.
 */
function httpStatusFor(code: number): number {
  return STATUS.get(code) ?? 500;
}

const STATUS = new Map<number, number>([
  [194, 401], // REQUIRED_PASSWORD
  [192, 403], // UNKNOWN_USER
  [193, 403], // WRONG_PASSWORD
  [516, 403], // AUTHENTICATION_FAILED
  [512, 403], // SET_NON_GRANTED_ROLE
  [497, 403], // ACCESS_DENIED
  [36, 400], // BAD_ARGUMENTS
  [427, 400], // CANNOT_COMPILE_REGEXP
  [6, 400], // CANNOT_PARSE_TEXT
  [25, 400], // CANNOT_PARSE_ESCAPE_SEQUENCE
  [26, 400], // CANNOT_PARSE_QUOTED_STRING
  [38, 400], // CANNOT_PARSE_DATE
  [41, 400], // CANNOT_PARSE_DATETIME
  [72, 400], // CANNOT_PARSE_NUMBER
  [441, 400], // CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING
  [675, 400], // CANNOT_PARSE_IPV4
  [676, 400], // CANNOT_PARSE_IPV6
  [27, 400], // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  [376, 400], // CANNOT_PARSE_UUID
  [15, 400], // DUPLICATE_COLUMN
  [44, 400], // ILLEGAL_COLUMN
  [37, 400], // UNKNOWN_ELEMENT_IN_AST
  [123, 400], // UNKNOWN_TYPE_OF_AST_NODE
  [8, 400], // THERE_IS_NO_COLUMN
  [167, 400], // TOO_DEEP_AST
  [168, 400], // TOO_BIG_AST
  [223, 400], // UNEXPECTED_AST_STRUCTURE
  [62, 400], // SYNTAX_ERROR
  [117, 400], // INCORRECT_DATA
  [53, 400], // TYPE_MISMATCH
  [321, 400], // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  [60, 404], // UNKNOWN_TABLE
  [46, 404], // UNKNOWN_FUNCTION
  [47, 404], // UNKNOWN_IDENTIFIER
  [50, 404], // UNKNOWN_TYPE
  [56, 404], // UNKNOWN_STORAGE
  [81, 404], // UNKNOWN_DATABASE
  [115, 404], // UNKNOWN_SETTING
  [152, 404], // UNKNOWN_DIRECTION_OF_SORTING
  [63, 404], // UNKNOWN_AGGREGATE_FUNCTION
  [73, 404], // UNKNOWN_FORMAT
  [336, 404], // UNKNOWN_DATABASE_ENGINE
  [78, 404], // UNKNOWN_TYPE_OF_QUERY
  [511, 404], // UNKNOWN_ROLE
  [229, 413], // QUERY_IS_TOO_LARGE
  [48, 501], // NOT_IMPLEMENTED
  [209, 503], // SOCKET_TIMEOUT
  [76, 503], // CANNOT_OPEN_FILE
  [439, 503], // CANNOT_SCHEDULE_TASK
  [381, 411], // HTTP_LENGTH_REQUIRED
  [159, 408], // TIMEOUT_EXCEEDED
  [779, 415], // UNSUPPORTED_MEDIA_TYPE
]);

/** The answer for an error of the front itself. */
export function frontErrorAnswer(err: FrontError): ErrorAnswer {
  const message = err.message.replace(/\.?$/, ".");
  return {
    status: httpStatusFor(err.code),
    code: err.code,
    text: `Code: ${err.code}. DB::Exception: ${message} (${err.codeName})`,
  };
}

/**
 * The answer for an error thrown by the engine. Its message carries `Code: N.` and the name;
 * when the engine wrapped an exception in another with the same code (`Code: N. DB::Exception:
 * Code: N. DB::Exception: … (NAME) (version V). (NAME)`), the inner one is what a server sends.
 */
export function engineErrorAnswer(err: unknown): ErrorAnswer {
  const raw =
    err instanceof Error ? err.message : typeof err === "string" ? err : "";
  let text = raw.trim();
  const head = /^Code: (\d+)\. DB::Exception: /.exec(text);
  const fromProperty = (err as { clickhouseCode?: unknown } | null)
    ?.clickhouseCode;
  const code = head
    ? Number(head[1])
    : typeof fromProperty === "number"
      ? fromProperty
      : ClickHouseCode.STD_EXCEPTION;
  if (head) {
    const inner = text.slice(head[0].length);
    if (inner.startsWith(head[0])) {
      // Keep the inner exception, without its version and the outer name that follows it.
      text = inner.replace(
        /\s*\(version [^()]*(?:\([^()]*\)[^()]*)*\)\.?\s*\([A-Z0-9_]+\)\s*$/,
        "",
      );
    }
  } else {
    const name =
      code === ClickHouseCode.STD_EXCEPTION ? "STD_EXCEPTION" : "UNKNOWN";
    const message = (text || "unknown error").replace(/\.?$/, ".");
    text = `Code: ${code}. DB::Exception: ${message} (${name})`;
  }
  return { status: httpStatusFor(code), code, text };
}
