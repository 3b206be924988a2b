// The one place that writes names and values into SQL text: identifiers and string literals,
// quoted for ClickHouse. A value the client can bind goes in as a query parameter ({name:Type})
// instead; these are for what takes no parameter (database and table names in DDL and mutations,
// the paths of file() and INFILE, the HTTP front's SET and USE statements), and sets of values
// too large for the URL (literalBatches).

/** ClickHouse's escapes inside a quoted name or literal: backslash, the quote, control characters. */
function escaped(text: string, quote: "'" | "`"): string {
  return text.replace(/[\\'`\0\n\r\t]/g, (c) => {
    switch (c) {
      case "\0":
        return "\\0";
      case "\n":
        return "\\n";
      case "\r":
        return "\\r";
      case "\t":
        return "\\t";
      default:
        return c === "\\" || c === quote ? "\\" + c : c;
    }
  });
}

/** A ClickHouse identifier, back-quoted: any name, the quote and backslash escaped. */
export function quoteIdent(name: string): string {
  return "`" + escaped(name, "`") + "`";
}

/** A ClickHouse string literal, single-quoted: any text, the quote and backslash escaped. */
export function quoteString(value: string): string {
  return "'" + escaped(value, "'") + "'";
}

/** `db`.`table`, each part quoted. */
export function qualified(
  w: { readonly database: string },
  table: string,
): string {
  return `${quoteIdent(w.database)}.${quoteIdent(table)}`;
}

/** ClickHouse's default max_query_size: the longest query text the engine parses. */
export const MAX_QUERY_BYTES = 256 * 1024;

/** Bytes of literals in one query's text: well under MAX_QUERY_BYTES. */
const LITERAL_BYTES_PER_QUERY = MAX_QUERY_BYTES / 2;

/**
 * `items` in batches whose literals (`literal(item)`: all the text an item puts in the query)
 * take at most LITERAL_BYTES_PER_QUERY bytes in all; an item larger than that is a batch alone.
 * For a set of values that can be large: as literals of the query's text it travels in the
 * request body, while a query parameter travels in the URL, whose length a server bounds
 * (http_max_uri_size, 1 MiB by default; the HTTP front the same).
 */
export function literalBatches<T>(
  items: readonly T[],
  literal: (item: T) => string,
): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = Buffer.byteLength(literal(item)) + 2;
    if (batch.length > 0 && bytes + size > LITERAL_BYTES_PER_QUERY) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** `values` as a list of string literals, `'a', 'b'`: the inside of IN (…) or […]. */
export function stringList(values: readonly string[]): string {
  return values.map(quoteString).join(", ");
}
