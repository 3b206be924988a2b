// A subset of the Quickwit query language, enough for the exporter's filters and our tests:
//
//   field:value   field:"quoted value"   field:prefix*   field:*   *   (empty query)
//   a AND b   a OR b   NOT a   -a   +a   (a OR b) c      (juxtaposition means AND)
//
// Precedence: NOT / - binds tightest, then AND (explicit or implicit), then OR. Keywords are
// upper case, as in Quickwit. Matching is exact and case-sensitive (Quickwit's `raw` tokenizer);
// a multi-valued field matches when any of its values does. A field the logs do not have matches
// nothing, like Quickwit, instead of failing. A term without a field is an error: the simulated
// index has no default search fields.

import {
  fieldValue,
  isLogField,
  type EventBatch,
  type LogField,
} from "./fields.js";

type QueryNode =
  | { readonly kind: "all" }
  | {
      readonly kind: "term";
      readonly field: string;
      readonly value: string;
      /** `value*`: prefix match; `*` alone: the field is present. */
      readonly match: "exact" | "prefix" | "exists";
    }
  | { readonly kind: "not"; readonly child: QueryNode }
  | { readonly kind: "and"; readonly children: readonly QueryNode[] }
  | { readonly kind: "or"; readonly children: readonly QueryNode[] };

export class QuerySyntaxError extends Error {
  /** 0-based offset into the query string. */
  readonly position: number;

  constructor(message: string, position: number) {
    super(`query syntax error at character ${position + 1}: ${message}`);
    this.name = "QuerySyntaxError";
    this.position = position;
  }
}

export function parseQuery(source: string): QueryNode {
  return new Parser(source).parse();
}

/** Whether event i of a batch matches. */
export type EventPredicate = (b: EventBatch, i: number) => boolean;

export function compileQuery(node: QueryNode): EventPredicate {
  switch (node.kind) {
    case "all":
      return () => true;
    case "not": {
      const child = compileQuery(node.child);
      return (b, i) => !child(b, i);
    }
    case "and": {
      const children = node.children.map(compileQuery);
      return (b, i) => children.every((c) => c(b, i));
    }
    case "or": {
      const children = node.children.map(compileQuery);
      return (b, i) => children.some((c) => c(b, i));
    }
    case "term":
      return compileTerm(node.field, node.value, node.match);
  }
}

function compileTerm(
  field: string,
  value: string,
  match: "exact" | "prefix" | "exists",
): EventPredicate {
  if (!isLogField(field)) return () => false;
  const f: LogField = field;
  const test: (v: string) => boolean =
    match === "exists"
      ? () => true
      : match === "prefix"
        ? (v) => v.startsWith(value)
        : (v) => v === value;
  return (b, i) => {
    const v = fieldValue(b, i, f);
    if (v === undefined) return false;
    if (typeof v === "string") return test(v);
    return v.some(test);
  };
}

const KEYWORDS = ["AND", "OR", "NOT"] as const;

class Parser {
  readonly #src: string;
  #pos = 0;

  constructor(src: string) {
    this.#src = src;
  }

  parse(): QueryNode {
    this.#skipWs();
    if (this.#eof()) return { kind: "all" };
    const node = this.#parseOr();
    this.#skipWs();
    if (!this.#eof()) {
      if (this.#peek() === ")")
        throw this.#error('unexpected ")" without a matching "("');
      throw this.#error(`unexpected ${this.#describeHere()}`);
    }
    return node;
  }

  #parseOr(): QueryNode {
    const children = [this.#parseAnd()];
    while (this.#keyword("OR")) children.push(this.#parseAnd());
    return children.length === 1
      ? (children[0] as QueryNode)
      : { kind: "or", children };
  }

  #parseAnd(): QueryNode {
    const children = [this.#parseUnary()];
    for (;;) {
      this.#skipWs();
      if (this.#eof() || this.#peek() === ")" || this.#atKeyword("OR")) break;
      this.#keyword("AND");
      children.push(this.#parseUnary());
    }
    return children.length === 1
      ? (children[0] as QueryNode)
      : { kind: "and", children };
  }

  #parseUnary(): QueryNode {
    this.#skipWs();
    if (this.#keyword("NOT")) return { kind: "not", child: this.#parseUnary() };
    const c = this.#peek();
    if (c === "-" || c === "+") {
      const at = this.#pos;
      this.#pos++;
      if (this.#eof() || isSpace(this.#peek()))
        throw new QuerySyntaxError(`expected a term right after "${c}"`, at);
      const child = this.#parsePrimary();
      return c === "-" ? { kind: "not", child } : child;
    }
    return this.#parsePrimary();
  }

  #parsePrimary(): QueryNode {
    this.#skipWs();
    if (this.#eof())
      throw this.#error("expected a term, found the end of the query");
    const c = this.#peek();
    if (c === "(") {
      const open = this.#pos;
      this.#pos++;
      this.#skipWs();
      if (this.#peek() === ")")
        throw this.#error('empty parentheses: expected a term before ")"');
      const node = this.#parseOr();
      this.#skipWs();
      if (this.#peek() !== ")") {
        throw this.#error(
          `expected ")" to close the "(" at character ${open + 1}, found ${this.#describeHere()}`,
        );
      }
      this.#pos++;
      return node;
    }
    if (c === ")") throw this.#error('unexpected ")"');
    if (c === '"')
      throw this.#error('a quoted phrase needs a field: write field:"..."');
    for (const k of KEYWORDS) {
      if (this.#atKeyword(k))
        throw this.#error(`expected a term, found the operator ${k}`);
    }
    if (c === "*" && this.#isBoundary(this.#pos + 1)) {
      this.#pos++;
      return { kind: "all" };
    }
    return this.#parseTerm();
  }

  #parseTerm(): QueryNode {
    const start = this.#pos;
    let field = "";
    while (!this.#eof()) {
      const c = this.#peek();
      if (c === ":" || isSpace(c) || c === "(" || c === ")" || c === '"') break;
      if (c === "\\")
        throw this.#error("escapes are not allowed in a field name");
      field += c;
      this.#pos++;
    }
    if (this.#peek() !== ":") {
      throw new QuerySyntaxError(
        `the term "${field}" has no field: write field:value (this index has no default search fields)`,
        start,
      );
    }
    if (field === "")
      throw new QuerySyntaxError('expected a field name before ":"', start);
    this.#pos++;
    const valueAt = this.#pos;
    if (this.#peek() === '"')
      return { kind: "term", field, value: this.#quoted(), match: "exact" };
    if (this.#peek() === "(")
      throw this.#error(
        `grouping after "${field}:" is not supported: repeat the field`,
      );
    let value = "";
    let wildcard = false;
    while (!this.#eof()) {
      const ch = this.#peek();
      if (isSpace(ch) || ch === "(" || ch === ")") break;
      if (ch === '"')
        throw this.#error('unexpected " inside a value: quote the whole value');
      this.#pos++;
      if (ch === "\\") {
        if (this.#eof())
          throw this.#error(
            "a backslash at the end of the query escapes nothing",
          );
        value += this.#peek();
        this.#pos++;
        continue;
      }
      if (ch === "*" && this.#isBoundary(this.#pos)) {
        wildcard = true;
        break;
      }
      value += ch;
    }
    if (!wildcard && value === "")
      throw new QuerySyntaxError(`expected a value after "${field}:"`, valueAt);
    if (wildcard)
      return {
        kind: "term",
        field,
        value,
        match: value === "" ? "exists" : "prefix",
      };
    return { kind: "term", field, value, match: "exact" };
  }

  #quoted(): string {
    const open = this.#pos;
    this.#pos++;
    let value = "";
    while (!this.#eof()) {
      const ch = this.#peek();
      this.#pos++;
      if (ch === '"') return value;
      if (ch === "\\" && !this.#eof()) {
        value += this.#peek();
        this.#pos++;
        continue;
      }
      value += ch;
    }
    throw new QuerySyntaxError(
      'unterminated quoted value: missing the closing "',
      open,
    );
  }

  /** Consumes the keyword when it stands alone at the cursor (after spaces). */
  #keyword(k: (typeof KEYWORDS)[number]): boolean {
    this.#skipWs();
    if (!this.#atKeyword(k)) return false;
    this.#pos += k.length;
    return true;
  }

  #atKeyword(k: string): boolean {
    return (
      this.#src.startsWith(k, this.#pos) &&
      this.#isBoundary(this.#pos + k.length, true)
    );
  }

  #isBoundary(i: number, allowOpen = false): boolean {
    const c = this.#src.charAt(i);
    return c === "" || isSpace(c) || c === ")" || (allowOpen && c === "(");
  }

  #skipWs(): void {
    while (!this.#eof() && isSpace(this.#peek())) this.#pos++;
  }

  #eof(): boolean {
    return this.#pos >= this.#src.length;
  }

  #peek(): string {
    return this.#src.charAt(this.#pos);
  }

  #describeHere(): string {
    if (this.#eof()) return "the end of the query";
    const m = /^\S{1,20}/.exec(this.#src.slice(this.#pos));
    return `"${m?.[0] ?? this.#peek()}"`;
  }

  #error(message: string): QuerySyntaxError {
    return new QuerySyntaxError(message, this.#pos);
  }
}

function isSpace(c: string): boolean {
  return c === " " || c === "\t" || c === "\n" || c === "\r";
}
