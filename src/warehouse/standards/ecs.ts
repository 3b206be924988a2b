// The sessions as Elastic Common Schema 8 events: one event per session. A later major version
// of ECS gets a view of its own (ecs_sessions_v9, …) in a new migration; this one stays.
import { field, IS_DATASTORE, OPENED, type StandardView } from "./fields.js";

const ECS_VERSION = "8.11.0";

/** SQL: `ip` when it is an IPv4 or IPv6 address (ECS `ip` fields take nothing else), else NULL. */
const validIp = (column: string) =>
  `if(isIPv4String(${column}) OR isIPv6String(${column}), ${column}, NULL)`;

/** The view `ecs_sessions_v8`: one ECS event per session, ordered by start and id. */
export const ECS_SESSIONS: StandardView = {
  name: "ecs_sessions_v8",
  standard: `ECS ${ECS_VERSION}`,
  order: { time: "@timestamp", id: "event.id" },
  fields: [
    field("@timestamp", "s.start_time", "date", "the session's start"),
    field("ecs.version", `'${ECS_VERSION}'`, "string", ECS_VERSION),
    field("event.kind", "'event'", "string", "event"),
    field(
      "event.category",
      `if(${IS_DATASTORE}, ['database', 'session'], ['session'])`,
      "string",
      "session, and database when the resource is a datastore",
      true,
    ),
    field(
      "event.type",
      `if(${IS_DATASTORE}, ['access', 'start'], ['start'])`,
      "string",
      "start, and access when the resource is a datastore",
      true,
    ),
    field("event.action", "'connect'", "string", "connect"),
    field(
      "event.outcome",
      `if(${OPENED}, 'success', 'unknown')`,
      "string",
      "success for a session the control plane opened (`active`, `idle`, `completed`), else unknown",
    ),
    field(
      "event.duration",
      "s.duration_ms * 1000000",
      "long",
      "the session's duration in nanoseconds; absent while it is open",
    ),
    field("event.start", "s.start_time", "date", "the session's start"),
    field(
      "event.end",
      "s.end_time",
      "date",
      "the session's end; absent while it is open",
    ),
    field("event.id", "s.id", "string", "the session's id"),
    field("event.module", "'sessionhouse'", "string", "sessionhouse"),
    field(
      "event.dataset",
      "'sessionhouse.sessions'",
      "string",
      "sessionhouse.sessions",
    ),
    field(
      "event.ingested",
      "s.fetched_at",
      "date",
      "when sessionhouse read the session's latest state",
    ),
    field(
      "event.original",
      "s.raw",
      "string",
      "the session record exactly as the control plane sent it",
    ),
    field(
      "event.hash",
      "lower(hex(SHA256(s.raw)))",
      "string",
      "the SHA-256 of event.original, hex",
    ),
    field(
      "user.id",
      "nullIf(s.person_id, '')",
      "string",
      "the person behind the session (`sessions_enriched.person_id`)",
    ),
    field(
      "user.name",
      "nullIf(s.person_name, '')",
      "string",
      "that person's name",
    ),
    field(
      "user.email",
      "nullIf(s.person_email, '')",
      "string",
      "that person's e-mail address",
    ),
    field(
      "user.effective.name",
      "nullIf(s.native_username, '')",
      "string",
      "the native database account the session used",
    ),
    field(
      "source.address",
      "nullIf(s.client_ip_address, '')",
      "string",
      "the client's address as the control plane gives it",
    ),
    field(
      "source.ip",
      validIp("s.client_ip_address"),
      "string",
      "the client's IP address, when it is one",
    ),
    field(
      "destination.address",
      "nullIf(s.server_ip_address, '')",
      "string",
      "the resource's address as the control plane gives it",
    ),
    field(
      "destination.ip",
      validIp("s.server_ip_address"),
      "string",
      "the resource's IP address, when it is one",
    ),
    field(
      "service.target.id",
      "nullIf(s.resource_id, '')",
      "string",
      "the resource's id",
    ),
    field(
      "service.target.name",
      "nullIf(toString(s.resource_name), '')",
      "string",
      "the resource's name",
    ),
    field(
      "service.target.type",
      "nullIf(toString(s.resource_technology), '')",
      "string",
      "the resource's technology",
    ),
    field(
      "observer.name",
      "nullIf(toString(s.sidecar_name), '')",
      "string",
      "the sidecar the session went through",
    ),
    field(
      "related.user",
      "arrayDistinct(arrayFilter(x -> x != '', [s.person_email, s.person_name, s.user_username, s.native_username]))",
      "string",
      "every name of the person and the account",
      true,
    ),
    field(
      "related.ip",
      "arrayDistinct(arrayFilter(x -> isIPv4String(x) OR isIPv6String(x), [s.client_ip_address, s.server_ip_address]))",
      "string",
      "the client's and the resource's IP addresses",
      true,
    ),
  ],
};
