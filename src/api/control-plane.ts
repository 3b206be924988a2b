// Typed operations of the control plane used by the exporter. Request timestamps are Unix
// seconds by default or RFC 3339 (API-FACTS, "Timestamps in requests").
import type { Config } from "../config/index.js";
import type { Logger } from "../util/logger.js";
import {
  ControlPlaneClient,
  type ApiObserver,
  type CallOptions,
} from "./client.js";
import { ApiError } from "./errors.js";
import { listMetadataSchema, type ListMetadata } from "./schemas/common.js";
import type { ListSessionsRequest } from "./schemas/session.js";
import type { ListLogAggregationsRequest } from "./schemas/logs.js";

export const PROCEDURES = {
  listSessionsV2: "SessionsService/ListSessionsV2",
  getSession: "SessionsService/GetSession",
  listLogAggregations: "LogsService/ListLogAggregations",
} as const;

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

  static fromConfig(
    config: Config,
    logger?: Logger,
    observer?: ApiObserver,
  ): ControlPlaneApi {
    const a = config.api;
    const client = new ControlPlaneClient({
      url: a.url,
      apiKey: a.apiKey,
      extraHeaders: a.extraHeaders,
      requestTimeoutMs: a.requestTimeoutMs,
      maxRequestsPerSecond: a.maxRequestsPerSecond,
      maxRetries: a.maxRetries,
      retryBaseMs: a.retryBaseMs,
      retryMaxMs: a.retryMaxMs,
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

  /** One page of ListSessionsV2, as raw session texts in batches; returns its listMetadata. */
  async *sessionsPage(
    req: SessionPageRequest,
    options: CallOptions & { batchSize: number; onRestart?: () => void },
  ): AsyncGenerator<string[], ListMetadata> {
    const body: ListSessionsRequest = {
      limit: req.limit,
      startTimestamp: this.formatTimestamp(req.startMs),
      endTimestamp: this.formatTimestamp(req.endMs),
      ...(req.cursor ? { cursor: req.cursor } : {}),
    };
    const others = yield* this.client.streamArray(
      PROCEDURES.listSessionsV2,
      body,
      "sessions",
      options,
    );
    return listMetadataSchema.parse(others.listMetadata ?? {});
  }

  /** GetSession; undefined when the service no longer knows the session. */
  async getSession(
    sessionId: string,
    options: CallOptions = {},
  ): Promise<unknown> {
    try {
      const res = (await this.client.call(
        PROCEDURES.getSession,
        { sessionId },
        options,
      )) as { session?: unknown };
      return res.session;
    } catch (err) {
      if (err instanceof ApiError && err.code === "not_found") return undefined;
      throw err;
    }
  }

  /** ListLogAggregations for [startMs, endMs); returns the parsed JSON body, unvalidated. */
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
    return this.client.call(PROCEDURES.listLogAggregations, body, options);
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
