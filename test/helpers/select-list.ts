// The names of the columns a query returns, read from its text without an engine: the outer
// SELECT list (the first SELECT outside parentheses, after any WITH), each item's name as the
// engine gives it: the alias after AS, else a column named alone (`id`, or `s.id`, which the
// engine returns as `id`). An item that is neither (an expression without AS, or `*`) has no name
// read here: a spec that needs its column must give it an alias.

/** One piece of the text at the outer level: a word, a quoted name, or any other character. */
interface Token {
  text: string;
  /** Inside parentheses, brackets or braces (a subquery, a call, a {parameter:Type}). */
  nested: boolean;
  /** A name: a word, or a quoted name ("x", `x`), its text without the quotes. */
  name: boolean;
}

const OPEN = "([{";
const CLOSE = ")]}";

/** The query's tokens outside strings and comments, each marked nested or not. */
function tokens(sql: string): Token[] {
  const out: Token[] = [];
  let depth = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql.charAt(i);
    if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
    } else if (sql.startsWith("/*", i)) {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (c === "'" || c === '"' || c === "`") {
      let j = i + 1;
      while (j < sql.length && sql.charAt(j) !== c)
        j += sql.charAt(j) === "\\" ? 2 : 1;
      const quoted = sql.slice(i, j + 1);
      // A quoted name ("x", `x`) is a word; a string literal is any other text.
      out.push({
        text: c === "'" ? "''" : quoted.slice(1, -1),
        nested: depth > 0,
        name: c !== "'",
      });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i))?.[0] ?? c;
      out.push({ text: word, nested: depth > 0, name: true });
      i += word.length;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      if (CLOSE.includes(c)) depth = Math.max(0, depth - 1);
      out.push({ text: c, nested: depth > 0 || OPEN.includes(c), name: false });
      if (OPEN.includes(c)) depth++;
      i++;
    }
  }
  return out;
}

const keyword = (t: Token | undefined, word: string): boolean =>
  t !== undefined && !t.nested && t.text.toUpperCase() === word;

/** Where the SELECT list ends: the outer FROM, or a clause of a query without one. */
const LIST_END = [
  "FROM",
  "WHERE",
  "GROUP",
  "ORDER",
  "LIMIT",
  "UNION",
  "SETTINGS",
  "FORMAT",
];

/**
 * The outer SELECT list's column names in order; an item without a name read here (see the
 * header) is given as undefined. Undefined when the text has no outer SELECT.
 */
export function selectListNames(
  sql: string,
): (string | undefined)[] | undefined {
  const all = tokens(sql);
  const start = all.findIndex((t) => keyword(t, "SELECT"));
  if (start === -1) return undefined;
  let i = start + 1;
  if (keyword(all[i], "DISTINCT")) i++;
  const items: Token[][] = [[]];
  for (; i < all.length; i++) {
    const t = all[i] as Token;
    if (LIST_END.some((w) => keyword(t, w))) break;
    if (!t.nested && t.text === ",") items.push([]);
    else items.at(-1)?.push(t);
  }
  return items.map(itemName);
}

/** An item's column name: its alias, or the column it names alone. */
function itemName(item: readonly Token[]): string | undefined {
  const [first, second, third] = item;
  const last = item.at(-1);
  if (last?.name === true && keyword(item.at(-2), "AS")) return last.text;
  if (item.length === 1 && first?.name === true) return first.text;
  // table.column: the engine names it by the column.
  if (
    item.length === 3 &&
    first?.name === true &&
    second?.text === "." &&
    third?.name === true
  )
    return third.text;
  return undefined;
}
