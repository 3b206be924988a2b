// The simulated organisation and its sessions. Shared by the session generator
// (sessions.ts), the log-event generator (logs/) and the HTTP server (server.ts).
// These are the simulator's own internal records; the wire shapes are built from
// them in wire.ts (proto3 JSON, zero values omitted).

export const TECHNOLOGIES = [
  "athena",
  "bigquery",
  "clickhouse",
  "dynamodb",
  "elastic",
  "grpc",
  "http",
  "kafka",
  "kubernetes",
  "llm",
  "mariadb",
  "mcp",
  "mongodb",
  "mssqlserver",
  "mysql",
  "postgres",
  "rdp",
  "redis",
  "s3",
  "snowflake",
  "ssh",
  "web",
] as const;
export type Technology = (typeof TECHNOLOGIES)[number];

export interface SimGroup {
  id: string;
  name: string;
}

export interface SimUser {
  id: string;
  /** "human" or "machine" */
  type: "human" | "machine";
  /** Display name: "Alice Martin" or "etl-nightly". */
  name: string;
  /** Human users only; empty for machines. */
  email: string;
  /** Login name toward the control plane, e.g. "alice.martin" or "svc-etl-nightly". */
  username: string;
  groupIds: string[];
  externalIds: string[];
  /** Machine users only: what the account does, which drives its traffic pattern. */
  machineKind?: MachineKind;
}

/** batch: ETL/scheduled jobs; bi: BI tools acting for humans; ci: deploy pipelines;
 * app: application services; agent: AI agents (llm/mcp). */
export type MachineKind = "batch" | "bi" | "ci" | "app" | "agent";

export interface SimSpace {
  id: string;
  name: string;
}

export interface SimResource {
  id: string;
  /** ^[0-9a-z-]{3,256}$ */
  name: string;
  technology: Technology;
  /** "aws" | "datastore" | "instance" */
  type: "aws" | "datastore" | "instance";
  environment: string;
  hostname: string;
  port: number;
  spaceId: string;
  /** Native (database) user names that sessions on this resource use. */
  nativeUsers: string[];
  serverIpAddress: string;
}

export interface SimSidecar {
  id: string;
  name: string;
  technology: Technology;
  hostname: string;
}

export interface SimConnector {
  id: string;
  name: string;
}

export interface SimOrg {
  seed: number;
  domain: string;
  groups: SimGroup[];
  users: SimUser[];
  spaces: SimSpace[];
  resources: SimResource[];
  sidecars: SimSidecar[];
  connectors: SimConnector[];
  /** sidecarId of each resource, by resource id (resources reached through a sidecar). */
  sidecarOfResource: Map<string, string>;
  /** connectorId of each resource, by resource id (resources reached through a connector). */
  connectorOfResource: Map<string, string>;
}

/** One generated session, independent of the clock: its status at a given instant is derived. */
export interface SimSession {
  id: string;
  /** Epoch milliseconds. */
  startMs: number;
  /** Planned duration in milliseconds; the session ends at startMs + durationMs. */
  durationMs: number;
  userId: string;
  /** Set when a machine user acts on behalf of a human (BI tools, apps). */
  endUserId: string;
  resourceId: string;
  nativeUsername: string;
  clientIpAddress: string;
  parentSessionId: string;
  /** Application name of the client (psql, DBeaver, python-requests, …). */
  applicationName: string;
  /**
   * Nanoseconds past startMs (0..999999). The real service keeps sub-millisecond precision,
   * so wire timestamps carry 0, 3, 6 or 9 fractional digits; absent means 0.
   */
  startSubMsNanos?: number;
}

export type SessionStatus = "active" | "idle" | "completed";
