// The one place that writes names and values into SQL text: identifiers and string literals,
// quoted for ClickHouse. A value the client can bind goes in as a query parameter ({name:Type})
// instead; these are for what takes no parameter (database and table names in DDL and mutations,
// the paths of file() and INFILE, the HTTP front's SET and USE statements).

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
