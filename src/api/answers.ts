// What each operation's answer must look like, checked before anything of it is stored. An
// answer that is HTTP 200 and valid JSON but not this operation's answer is a bad answer
// (BAD_RESPONSE, retried like a 5xx): read as "nothing", it would let a checkpoint move past
// data that was never stored. Members beside the expected ones are welcome (the service adds
// fields over time) and stay in the raw records.
import {
  countOf,
  listMetadataSchema,
  MAX_COUNT64,
  type ListMetadata,
} from "./schemas/common.js";
import type { Logger } from "../util/logger.js";

/** The array member of a ListSessionsV2 page. */
export const SESSIONS_MEMBER = "sessions";
const LIST_METADATA_MEMBER = "listMetadata";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

function names(keys: readonly string[]): string {
  const shown = keys.slice(0, 5).map((k) => `"${k.slice(0, 60)}"`);
  return keys.length > 5
    ? `${shown.join(", ")} and ${keys.length - 5} more`
    : shown.join(", ");
}

/** The listMetadata of a page, or the reason it is not one. */
function listMetadataOf(value: unknown): ListMetadata | string {
  if (value === undefined || value === null)
    return listMetadataSchema.parse({});
  if (!isObject(value))
    return `"listMetadata" is ${kindOf(value)}, not an object`;
  const parsed = listMetadataSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `"listMetadata.${issue?.path.map(String).join(".") ?? ""}": ${issue?.message ?? "invalid"}`;
  }
  return parsed.data;
}

/**
 * Checks a ListSessionsV2 page once its body has ended: `others` are its members besides the
 * `sessions` list, `records` the elements that list held, `sawList` whether it was present.
 * Returns the page's listMetadata, or what is wrong with the page.
 */
export function checkSessionsPage(
  others: Readonly<Record<string, unknown>>,
  records: number,
  sawList: boolean,
): { listMetadata: ListMetadata } | { problem: string } {
  const list = others[SESSIONS_MEMBER];
  // proto3 JSON reads null as the default value: an empty list.
  if (list !== undefined && list !== null)
    return { problem: `"sessions" is ${kindOf(list)}, not a list` };
  if (!sawList) {
    // proto3 omits an empty list: then the page holds a listMetadata at most.
    const unknown = Object.keys(others).filter(
      (k) => k !== LIST_METADATA_MEMBER && k !== SESSIONS_MEMBER,
    );
    if (unknown.length > 0) {
      return {
        problem: `no "sessions" list but ${names(unknown)} where a page without sessions holds only "listMetadata"`,
      };
    }
  }
  const meta = listMetadataOf(others[LIST_METADATA_MEMBER]);
  if (typeof meta === "string") return { problem: meta };
  if (meta.nextCursor !== "" && records === 0)
    return { problem: "a nextCursor on a page with no sessions" };
  return { listMetadata: meta };
}

/**
 * A `listMetadata.count` that differs from the records of its page, or undefined. What `count`
 * counts (the page, or the whole listing) is not known, so a difference is noted, never a
 * reason to refuse the page; proto3 omits a count of 0, so an absent count says nothing.
 */
function countDiffers(meta: ListMetadata, records: number): bigint | undefined {
  return meta.count !== 0n && meta.count !== BigInt(records)
    ? meta.count
    : undefined;
}

/**
 * The pages of one listing and how many of them had a `count` that differs from their records:
 * one log line at the end of the listing says so (operation, count, records), none when every
 * page agreed.
 */
export class ListingCounts {
  #pages = 0;
  #records = 0;
  #differing = 0;
  #firstCount: bigint | undefined;

  /** Notes one page; returns whether its count differs from its records. */
  page(meta: ListMetadata, records: number): boolean {
    this.#pages++;
    this.#records += records;
    const count = countDiffers(meta, records);
    if (count === undefined) return false;
    this.#differing++;
    this.#firstCount ??= count;
    return true;
  }

  /** The one line for the listing, when a page's count differed. */
  report(
    logger: Pick<Logger, "info"> | undefined,
    fields: Readonly<Record<string, unknown>>,
  ): void {
    if (this.#differing === 0 || logger === undefined) return;
    logger.info(
      {
        ...fields,
        count: String(this.#firstCount),
        records: this.#records,
        pages: this.#pages,
        pagesDiffering: this.#differing,
      },
      "listMetadata.count differs from the records on the page (noted, not refused)",
    );
  }
}

/** What is wrong with an answer that must be an object holding the object `member`, or undefined. */
function objectMemberProblem(
  answer: unknown,
  member: string,
): string | undefined {
  if (!isObject(answer))
    return `the answer is ${kindOf(answer)}, not an object`;
  const value = answer[member];
  if (!isObject(value)) {
    return value === undefined
      ? `no "${member}" member${Object.keys(answer).length > 0 ? ` (members: ${names(Object.keys(answer))})` : ""}`
      : `"${member}" is ${kindOf(value)}, not an object`;
  }
  return undefined;
}

/**
 * The Get operations: the request member that names the object asked for, and the answer's
 * member that holds it. Every Get answer must prove whose it is (getAnswerProblem).
 */
export const GET_ANSWERS = {
  getSession: { request: "sessionId", member: "session" },
  getUser: { request: "id", member: "user" },
} as const;
export type GetOperation = keyof typeof GET_ANSWERS;

/** An id as a message shows it: quoted, at most 100 characters. */
function shownId(id: string): string {
  return JSON.stringify(id.length > 100 ? `${id.slice(0, 100)}…` : id);
}

/**
 * What is wrong with the answer of a Get operation asked for `id`, or undefined: it must hold
 * the object member, and that object must not name another id. An answer for another object is
 * not this request's answer: believed, it would store an object never asked for and leave the
 * one asked for unread, or take it as gone. An object without an id names no other object: it
 * is a record that cannot be stored, dead-lettered by its stream like any such record, and
 * proves nothing gone.
 */
export function getAnswerProblem(
  operation: GetOperation,
  answer: unknown,
  id: string,
): string | undefined {
  const { member } = GET_ANSWERS[operation];
  const shape = objectMemberProblem(answer, member);
  if (shape !== undefined) return shape;
  const got = (answer as Record<string, Record<string, unknown>>)[member]?.id;
  if (got === id || got === undefined || got === null || got === "")
    return undefined;
  if (typeof got !== "string")
    return `"${member}.id" is ${kindOf(got)}, not the id asked for, ${shownId(id)}`;
  return `the answer is for ${member} ${shownId(got)}, not for ${member} ${shownId(id)} that was asked for`;
}

/**
 * What is wrong with a ListLogAggregations answer, or undefined. The service always sets the
 * `aggregations` message (a window without hits is `{"aggregations":{}}`, numHits omitted), so
 * an answer without it is not an answer. The members of `aggregations` are checked by the
 * aggregation pipeline, which dead-letters a bad member without losing the others.
 */
export function logAggregationsProblem(answer: unknown): string | undefined {
  if (!isObject(answer))
    return `the answer is ${kindOf(answer)}, not an object`;
  if (answer.aggregations === undefined) {
    const keys = Object.keys(answer);
    return `no "aggregations" member${keys.length > 0 ? ` (members: ${names(keys)})` : " (an empty object)"}`;
  }
  if (!isObject(answer.aggregations))
    return `"aggregations" is ${kindOf(answer.aggregations)}, not an object`;
  const numHits = answer.numHits;
  if (numHits !== undefined && numHits !== null) {
    const n = countOf(numHits, MAX_COUNT64);
    if (typeof n === "string") return `"numHits": ${n}`;
  }
  return undefined;
}

/**
 * The member of each read operation's answer that holds what it read: the list of a List
 * operation, the object of a Get, the aggregations of ListLogAggregations (an object). The
 * operations are those of the API (control-plane.ts), and only they: the two key sets are held
 * equal by the compiler there.
 */
export const LIST_MEMBERS = {
  listSessionsV2: SESSIONS_MEMBER,
  getSession: GET_ANSWERS.getSession.member,
  listLogAggregations: "aggregations",
  getUser: GET_ANSWERS.getUser.member,
  listUserDevices: "devices",
  listNativeUsers: "nativeUsers",
  listIdentityLinks: "links",
  listInventoryObjects: "inventory",
  listPolicySuspensions: "policySuspensions",
  listIntegrationClouds: "clouds",
} as const;

/** A checked page of a directory list: its elements (not checked one by one) and metadata. */
export interface ListPage {
  items: unknown[];
  listMetadata: ListMetadata;
}

/**
 * Checks a page of a directory list operation whose array member is `member`: an object, the
 * member a list (proto3 omits an empty one), listMetadata valid, no nextCursor on an empty page
 * (a `count` that differs from the elements is not checked: see countDiffers). Elements are checked by the stream that stores them,
 * which dead-letters a bad one without losing the others.
 */
export function checkListPage(
  answer: unknown,
  member: string,
): ListPage | { problem: string } {
  if (!isObject(answer))
    return { problem: `the answer is ${kindOf(answer)}, not an object` };
  const list = answer[member];
  if (list !== undefined && list !== null && !Array.isArray(list))
    return { problem: `"${member}" is ${kindOf(list)}, not a list` };
  const items = Array.isArray(list) ? (list as unknown[]) : [];
  if (list === undefined || list === null) {
    const unknown = Object.keys(answer).filter(
      (k) => k !== LIST_METADATA_MEMBER && k !== member,
    );
    if (unknown.length > 0)
      return {
        problem: `no "${member}" list but ${names(unknown)} where an empty page holds only "listMetadata"`,
      };
  }
  const meta = listMetadataOf(answer[LIST_METADATA_MEMBER]);
  if (typeof meta === "string") return { problem: meta };
  if (meta.nextCursor !== "" && items.length === 0)
    return { problem: `a nextCursor on a page with no ${member}` };
  return { items, listMetadata: meta };
}
