// Typed operations of the control plane used by the exporter. Request timestamps are Unix
// seconds by default or RFC 3339 (docs/control-plane-wire.md, "Requests").
import type { Config } from "../config/index.js";
import type { Logger } from "../util/logger.js";
import {
  checkListPage,
  checkSessionsPage,
  getAnswerProblem,
  GET_ANSWERS,
  type GetOperation,
  LIST_MEMBERS,
  type ListPage,
  logAggregationsProblem,
  SESSIONS_MEMBER,
} from "./answers.js";
import {
  ControlPlaneClient,
  type ApiObserver,
  type CallOptions,
} from "./client.js";
import { ApiError } from "./errors.js";
import type { SplitElement } from "./json-stream.js";
import type { ListMetadata } from "./schemas/common.js";
import { scanSessionAt, type ScanFinding } from "./schemas/session-scan.js";
import type { ListSessionsRequest } from "./schemas/session.js";
import type { ListLogAggregationsRequest } from "./schemas/logs.js";

/**
 * Every operation the exporter calls, and its procedure: reads only (List*, Get*), never a write,
 * so that a read-only API key is enough. Each has its answer's member in LIST_MEMBERS.
 */
export const PROCEDURES = {
  listSessionsV2: "SessionsService/ListSessionsV2",
  getSession: "SessionsService/GetSession",
  listLogAggregations: "LogsService/ListLogAggregations",
  getUser: "UserService/GetUser",
  listUserDevices: "DesktopService/ListUserDevices",
  listNativeUsers: "ResourceService/ListNativeUsers",
  listIdentityLinks: "ResourceService/ListNativeUserIdentityLinks",
  listInventoryObjects: "InventoryService/ListInventoryObjects",
  listPolicySuspensions: "PoliciesService/ListPolicySuspensions",
  listIntegrationClouds: "IntegrationCloudService/ListIntegrationClouds",
} as const satisfies Record<keyof typeof LIST_MEMBERS, string>;

/** The directory list operations and the largest `limit` each accepts. */
const LIST_LIMITS = {
  listUserDevices: 100,
  listNativeUsers: 500,
  listIdentityLinks: 500,
  listInventoryObjects: 500,
  listPolicySuspensions: 500,
  listIntegrationClouds: 0,
} as const;
export type DirectoryList = keyof typeof LIST_LIMITS;

export interface SessionPageRequest {
  startMs: number;
  endMs: number;
  limit: number;
  cursor?: string | undefined;
}

export class ControlPlaneApi {
  readonly client: ControlPlaneClient;
  readonly #format: "unix" | "rfc3339";

  constructor(client: ControlPlaneClient, timestampFormat: "unix" | "rfc3339") {
    this.client = client;
    this.#format = timestampFormat;
  }

  /**
   * The API of the configuration. `personWaits`: the caller is a command a person waits on, whose
   * requests give up at once on a connection that cannot be made (the service keeps retrying).
   */
  static fromConfig(
    config: Config,
    logger?: Logger,
    observer?: ApiObserver,
    personWaits = false,
  ): ControlPlaneApi {
    const a = config.api;
    const client = new ControlPlaneClient({
      url: a.url,
      apiKey: a.apiKey,
      extraHeaders: a.extraHeaders,
      requestTimeoutMs: a.requestTimeoutMs,
      bodyIdleTimeoutMs: a.bodyIdleTimeoutMs,
      maxPageBytes: a.maxPageBytes,
      maxRecordBytes: a.maxRecordBytes,
      maxRequestsPerSecond: a.maxRequestsPerSecond,
      maxRetries: a.maxRetries,
      retryBaseMs: a.retryBaseMs,
      retryMaxMs: a.retryMaxMs,
      personWaits,
      connections: a.connections,
      caFile: a.caFile,
      logger,
      observer,
    });
    return new ControlPlaneApi(client, a.timestampFormat);
  }

  formatTimestamp(ms: number): string {
    return this.#format === "unix"
      ? String(Math.floor(ms / 1000))
      : new Date(ms).toISOString();
  }

  /** "window [start, end)" of a request, for messages. */
  #windowOf(startMs: number, endMs: number): string {
    return `window [${new Date(startMs).toISOString()}, ${new Date(endMs).toISOString()})`;
  }

  /**
   * One page of ListSessionsV2, as raw session texts (or broken elements) in batches; returns
   * its listMetadata. A page of the wrong shape fails (BAD_RESPONSE) before its last batch.
   */
  async *sessionsPage(
    req: SessionPageRequest,
    options: CallOptions & { batchSize: number; onRestart?: () => void },
  ): AsyncGenerator<SplitElement<ScanFinding>[], ListMetadata> {
    const body: ListSessionsRequest = {
      limit: req.limit,
      startTimestamp: this.formatTimestamp(req.startMs),
      endTimestamp: this.formatTimestamp(req.endMs),
      ...(req.cursor ? { cursor: req.cursor } : {}),
    };
    let listMetadata: ListMetadata | undefined;
    yield* this.client.streamArray(
      PROCEDURES.listSessionsV2,
      body,
      SESSIONS_MEMBER,
      {
        ...options,
        reader: scanSessionAt,
        context: `${this.#windowOf(req.startMs, req.endMs)}${req.cursor ? " (a page after the first)" : " (first page)"}`,
        check: (end) => {
          const checked = checkSessionsPage(
            end.others,
            end.elements,
            end.sawMember,
          );
          if ("problem" in checked) return checked.problem;
          listMetadata = checked.listMetadata;
          return undefined;
        },
      },
    );
    if (listMetadata === undefined)
      throw new Error("ListSessionsV2 page ended without its check");
    return listMetadata;
  }

  /** GetSession; undefined when the service no longer knows the session. */
  async getSession(
    sessionId: string,
    options: CallOptions = {},
  ): Promise<unknown> {
    return this.#getOne("getSession", sessionId, options);
  }

  /**
   * ListLogAggregations for [startMs, endMs); returns the parsed JSON body. Its shape is checked
   * (an `aggregations` object, a valid `numHits`: else BAD_RESPONSE); its members are not.
   * Integers longer than 15 digits arrive as strings, so 64-bit counts stay exact.
   */
  async listLogAggregations(
    req: Omit<ListLogAggregationsRequest, "startTimestamp" | "endTimestamp"> & {
      startMs: number;
      endMs: number;
    },
    options: CallOptions = {},
  ): Promise<unknown> {
    const { startMs, endMs, ...rest } = req;
    const body: ListLogAggregationsRequest = {
      ...rest,
      startTimestamp: this.formatTimestamp(startMs),
      endTimestamp: this.formatTimestamp(endMs),
    };
    return this.client.call(PROCEDURES.listLogAggregations, body, {
      ...options,
      context: this.#windowOf(startMs, endMs),
      check: logAggregationsProblem,
      exactIntegers: true,
    });
  }

  /** GetUser; undefined when the service does not know the user (not_found). */
  async getUser(id: string, options: CallOptions = {}): Promise<unknown> {
    return this.#getOne("getUser", id, options);
  }

  /**
   * A Get* call's object, checked by the answer contract (getAnswerProblem: its shape, and that
   * it is the object asked for: an answer for another id is a BAD_RESPONSE); undefined when it
   * is not_found.
   */
  async #getOne(
    operation: GetOperation,
    id: string,
    options: CallOptions,
  ): Promise<unknown> {
    const { request, member } = GET_ANSWERS[operation];
    try {
      const res = (await this.client.call(
        PROCEDURES[operation],
        { [request]: id },
        {
          ...options,
          context: `${member} ${id.slice(0, 100)}`,
          check: (answer) => getAnswerProblem(operation, answer, id),
        },
      )) as Record<string, unknown>;
      return res[member];
    } catch (err) {
      if (err instanceof ApiError && err.code === "not_found") return undefined;
      throw err;
    }
  }

  /**
   * One page of a directory list operation: `filters` (resourceId, userId, order, …) with the
   * operation's largest limit (or `options.limit`, smaller) and the cursor. The answer's shape
   * is checked (BAD_RESPONSE); its elements are not.
   */
  async listPage(
    operation: DirectoryList,
    filters: Readonly<Record<string, string>>,
    cursor: string,
    options: CallOptions & { limit?: number } = {},
  ): Promise<ListPage> {
    const largest = LIST_LIMITS[operation];
    const limit =
      options.limit === undefined || largest === 0
        ? largest
        : Math.min(options.limit, largest);
    const body = {
      ...filters,
      ...(limit > 0 ? { limit } : {}),
      ...(cursor !== "" ? { cursor } : {}),
    };
    const member = LIST_MEMBERS[operation];
    let page: ListPage | undefined;
    await this.client.call(PROCEDURES[operation], body, {
      ...options,
      context: `${Object.entries(filters)
        .map(([k, v]) => `${k} ${v.slice(0, 100)}`)
        .join(
          ", ",
        )}${cursor !== "" ? " (a page after the first)" : " (first page)"}`,
      check: (answer) => {
        const checked = checkListPage(answer, member);
        if ("problem" in checked) return checked.problem;
        page = checked;
        return undefined;
      },
    });
    if (page === undefined)
      throw new Error(`${operation} page ended without its check`);
    return page;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
