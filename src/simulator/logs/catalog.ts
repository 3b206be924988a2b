// Fixed catalogs the log generator draws from. Names are fixed so that tests and demos can
// refer to them; ids and statuses are derived from the seed so that two seeds differ.

import type { SimUser, Technology } from "../model.js";
import { hash32, hexOf, Rng } from "../random.js";

export type PolicyType =
  "masking" | "blocking" | "filtering" | "session" | "notification";
export type PolicyStatus = "draft" | "dry-run" | "active";

export interface SimPolicy {
  readonly id: string;
  readonly name: string;
  readonly type: PolicyType;
  readonly status: PolicyStatus;
}

const POLICY_DEFS: readonly (readonly [name: string, type: PolicyType])[] = [
  ["mask-pii-emails", "masking"],
  ["mask-phone-numbers", "masking"],
  ["mask-credit-cards", "masking"],
  ["mask-ssn", "masking"],
  ["mask-iban", "masking"],
  ["block-prod-ddl", "blocking"],
  ["block-bulk-export", "blocking"],
  ["block-llm-secrets", "blocking"],
  ["filter-tenant-rows", "filtering"],
  ["filter-rows-by-region", "filtering"],
  ["session-require-mfa", "session"],
  ["session-block-after-hours", "session"],
  ["session-max-duration-8h", "session"],
  ["notify-sensitive-table-access", "notification"],
  ["notify-llm-pii-prompt", "notification"],
  ["mask-llm-pii-responses", "masking"],
];

/** ~70 % active, the rest dry-run or draft; which ones depends on the seed. */
export function policyCatalog(seed: number): readonly SimPolicy[] {
  return POLICY_DEFS.map(([name, type]) => {
    const r = hash32(seed, "policy-status", name) % 10;
    const status: PolicyStatus = r < 7 ? "active" : r < 9 ? "dry-run" : "draft";
    return Object.freeze({
      id: `pol_${hexOf(20, seed, "policy", name)}`,
      name,
      type,
      status,
    });
  });
}

/** Data label of a column → the masking policy that fires on it. */
export const MASKING_POLICY_OF_LABEL: Readonly<Record<string, string>> = {
  email: "mask-pii-emails",
  phone: "mask-phone-numbers",
  credit_card: "mask-credit-cards",
  ssn: "mask-ssn",
  iban: "mask-iban",
};

export const SENSITIVE_LABELS: ReadonlySet<string> = new Set([
  "ssn",
  "credit_card",
  "iban",
  "date_of_birth",
]);

// ---------------------------------------------------------------------------------------------
// Tables behind the query templates of databases and warehouses.

export const DATA_LABELS = [
  "email",
  "phone",
  "ssn",
  "credit_card",
  "name",
  "address",
  "date_of_birth",
  "iban",
  "ip_address",
  "none",
] as const;
export type DataLabel = (typeof DATA_LABELS)[number];

export interface SimColumn {
  readonly name: string;
  readonly label: DataLabel;
  /** Literal style used when the column appears in a WHERE clause. */
  readonly literal:
    | "id"
    | "email"
    | "name"
    | "date"
    | "word"
    | "amount"
    | "phone"
    | "address"
    | "ip"
    | "card"
    | "iban"
    | "ssn"
    | "sku"
    | "currency";
}

export interface SimTable {
  readonly name: string;
  readonly columns: readonly SimColumn[];
}

const col = (
  name: string,
  label: DataLabel,
  literal: SimColumn["literal"] = "word",
): SimColumn => ({
  name,
  label,
  literal,
});

export const TABLES: readonly SimTable[] = [
  {
    name: "customers",
    columns: [
      col("id", "none", "id"),
      col("email", "email", "email"),
      col("full_name", "name", "name"),
      col("phone", "phone", "phone"),
      col("address", "address", "address"),
      col("date_of_birth", "date_of_birth", "date"),
      col("created_at", "none", "date"),
    ],
  },
  {
    name: "orders",
    columns: [
      col("id", "none", "id"),
      col("customer_id", "none", "id"),
      col("total_amount", "none", "amount"),
      col("status", "none"),
      col("shipping_address", "address", "address"),
      col("created_at", "none", "date"),
    ],
  },
  {
    name: "payments",
    columns: [
      col("id", "none", "id"),
      col("order_id", "none", "id"),
      col("card_number", "credit_card", "card"),
      col("iban", "iban", "iban"),
      col("amount", "none", "amount"),
      col("currency", "none", "currency"),
    ],
  },
  {
    name: "employees",
    columns: [
      col("id", "none", "id"),
      col("full_name", "name", "name"),
      col("email", "email", "email"),
      col("ssn", "ssn", "ssn"),
      col("salary", "none", "amount"),
      col("date_of_birth", "date_of_birth", "date"),
      col("phone", "phone", "phone"),
    ],
  },
  {
    name: "users",
    columns: [
      col("id", "none", "id"),
      col("email", "email", "email"),
      col("username", "none"),
      col("last_login_ip", "ip_address", "ip"),
      col("created_at", "none", "date"),
    ],
  },
  {
    name: "invoices",
    columns: [
      col("id", "none", "id"),
      col("customer_id", "none", "id"),
      col("amount", "none", "amount"),
      col("iban", "iban", "iban"),
      col("due_date", "none", "date"),
    ],
  },
  {
    name: "audit_log",
    columns: [
      col("id", "none", "id"),
      col("actor_email", "email", "email"),
      col("action", "none"),
      col("ip_address", "ip_address", "ip"),
      col("created_at", "none", "date"),
    ],
  },
  {
    name: "products",
    columns: [
      col("id", "none", "id"),
      col("name", "none"),
      col("sku", "none", "sku"),
      col("price", "none", "amount"),
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// Families and per-technology request shapes.

/** `session.type`: the technology family of the resource. */
export const SESSION_TYPE_OF: Readonly<Record<Technology, string>> = {
  athena: "warehouse",
  bigquery: "warehouse",
  snowflake: "warehouse",
  clickhouse: "database",
  dynamodb: "database",
  elastic: "database",
  mariadb: "database",
  mongodb: "database",
  mssqlserver: "database",
  mysql: "database",
  postgres: "database",
  redis: "database",
  grpc: "http",
  http: "http",
  web: "http",
  kafka: "kafka",
  kubernetes: "kubernetes",
  llm: "llm",
  mcp: "mcp",
  rdp: "rdp",
  s3: "s3",
  ssh: "ssh",
};

export type EventKind =
  | "sql"
  | "document"
  | "keyvalue"
  | "request"
  | "command"
  | "llm"
  | "mcp"
  | "screen";

export const EVENT_KIND_OF: Readonly<Record<Technology, EventKind>> = {
  athena: "sql",
  bigquery: "sql",
  clickhouse: "sql",
  mariadb: "sql",
  mssqlserver: "sql",
  mysql: "sql",
  postgres: "sql",
  snowflake: "sql",
  dynamodb: "document",
  elastic: "document",
  mongodb: "document",
  redis: "keyvalue",
  grpc: "request",
  http: "request",
  web: "request",
  kafka: "command",
  kubernetes: "command",
  s3: "command",
  ssh: "command",
  llm: "llm",
  mcp: "mcp",
  rdp: "screen",
};

/** Placeholders: {id} {n} {email} {name} {date} {word} {amount}; each becomes `?` once normalized. */
export const COMMAND_TEMPLATES: Readonly<
  Partial<Record<Technology, readonly string[]>>
> = {
  ssh: [
    "ls -la /var/log",
    "tail -n {n} /var/log/syslog",
    "sudo systemctl restart nginx",
    "cat /etc/hosts",
    "df -h",
    "top -b -n {n}",
    "journalctl -u app --since '{n} min ago'",
    "grep -r ERROR /var/log/app --max-count={n}",
    "sudo cat /etc/shadow",
  ],
  kubernetes: [
    "kubectl get pods -n payments",
    "kubectl logs deploy/api -n payments --tail={n}",
    "kubectl describe pod api-{id} -n payments",
    "kubectl exec -it api-{id} -n payments -- sh",
    "kubectl get secrets -n payments",
    "kubectl rollout restart deploy/worker -n jobs",
    "kubectl scale deploy/worker --replicas={n} -n jobs",
  ],
  kafka: [
    "FETCH orders.v1 partition={n}",
    "PRODUCE orders.v1 partition={n}",
    "FETCH payments.v1 partition={n}",
    "LIST_OFFSETS customers.v1",
    "METADATA",
  ],
  s3: [
    "GetObject s3://data-lake/exports/{date}/part-{n}.parquet",
    "ListObjectsV2 s3://data-lake/exports/{date}/",
    "PutObject s3://data-lake/uploads/{id}.csv",
    "HeadObject s3://backups/db/{date}.dump",
    "DeleteObject s3://data-lake/tmp/{id}.json",
  ],
};

export const REQUEST_TEMPLATES: Readonly<
  Partial<Record<Technology, readonly string[]>>
> = {
  http: [
    "GET /api/v1/customers/{id}",
    "GET /api/v1/customers?email={email}",
    "GET /api/v1/orders?limit={n}",
    "POST /api/v1/orders",
    "PATCH /api/v1/orders/{id}",
    "DELETE /api/v1/sessions/{id}",
    "GET /api/v1/employees/{id}",
    "GET /healthz",
  ],
  web: [
    "GET /",
    "GET /dashboard",
    "GET /reports/{id}",
    "POST /login",
    "GET /settings/billing",
    "GET /admin/users",
  ],
  grpc: [
    "/payments.v1.PaymentService/Charge",
    "/payments.v1.PaymentService/Refund",
    "/customers.v1.CustomerService/GetCustomer",
    "/customers.v1.CustomerService/ListCustomers",
    "/grpc.health.v1.Health/Check",
  ],
};

export const KEYVALUE_TEMPLATES: readonly string[] = [
  "GET session:{id}",
  "SET cache:customer:{id} {word}",
  "HGETALL user:{id}",
  "DEL lock:order:{id}",
  "EXPIRE session:{id} {n}",
  "KEYS customer:*",
];

// ---------------------------------------------------------------------------------------------
// LLM and MCP.

export const LLM_PROVIDERS: Readonly<Record<string, readonly string[]>> = {
  openai: ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3-mini"],
  anthropic: ["claude-sonnet-4", "claude-opus-4", "claude-3-5-haiku"],
  google: ["gemini-2.5-pro", "gemini-2.5-flash"],
  "aws-bedrock": [
    "anthropic.claude-sonnet-4",
    "amazon.nova-pro",
    "meta.llama3-70b-instruct",
  ],
  "azure-openai": ["gpt-4o", "gpt-4.1-mini"],
};

export const LLM_TOOLS: readonly string[] = [
  "search_web",
  "get_customer",
  "create_ticket",
  "run_sql",
  "send_email",
];
export const MCP_TOOLS: readonly string[] = [
  "query_database",
  "read_file",
  "search_docs",
  "list_tables",
  "create_issue",
  "fetch_url",
];

// ---------------------------------------------------------------------------------------------
// Control-plane commands and workflows (events not tied to a session).

export interface SimCommand {
  readonly service: string;
  readonly method: string;
  readonly commandName: string;
  readonly commandType: "create" | "update" | "delete" | "read";
  readonly policyAction?: string;
  readonly weight: number;
}

const cmd = (
  service: string,
  method: string,
  commandType: SimCommand["commandType"],
  weight: number,
  policyAction?: string,
): SimCommand => ({
  service: `core.v1.${service}`,
  method,
  commandName: method.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase(),
  commandType,
  weight,
  ...(policyAction === undefined ? {} : { policyAction }),
});

export const COMMANDS: readonly SimCommand[] = [
  cmd("PoliciesService", "CreatePolicy", "create", 2, "create"),
  cmd("PoliciesService", "UpdatePolicy", "update", 5, "update"),
  cmd("PoliciesService", "DeletePolicy", "delete", 1, "delete"),
  cmd("PoliciesService", "CreatePolicySuspension", "create", 2, "suspend"),
  cmd("PoliciesService", "DeletePolicySuspension", "delete", 1, "unsuspend"),
  cmd("ResourceService", "CreateResource", "create", 1),
  cmd("ResourceService", "UpdateResource", "update", 2),
  cmd("ResourceService", "CreateNativeUserIdentityLink", "create", 2),
  cmd("UserService", "CreateUser", "create", 2),
  cmd("UserService", "DeleteUser", "delete", 1),
  cmd("UserService", "GetUser", "read", 3),
  cmd("SessionsService", "ListSessionsV2", "read", 4),
  cmd("LogsService", "ListLogAggregations", "read", 4),
  cmd("SidecarService", "CreateSidecarResourceLink", "create", 1),
  cmd("ChangeAuthorizationService", "UpdateSigningKey", "update", 1),
];

export interface SimWorkflowStep {
  readonly name: string;
  readonly type: "action" | "condition" | "approval" | "notification";
}

export interface SimWorkflow {
  readonly id: string;
  readonly name: string;
  readonly triggerType: "schedule" | "manual" | "webhook" | "policy_event";
  readonly triggerName: string;
  readonly steps: readonly SimWorkflowStep[];
}

const WORKFLOW_DEFS: readonly Omit<SimWorkflow, "id">[] = [
  {
    name: "offboard-user",
    triggerType: "webhook",
    triggerName: "okta-user-deactivated",
    steps: [
      { name: "lookup-user", type: "action" },
      { name: "revoke-native-users", type: "action" },
      { name: "notify-slack", type: "notification" },
    ],
  },
  {
    name: "rotate-db-credentials",
    triggerType: "schedule",
    triggerName: "weekly-sunday-0300",
    steps: [
      { name: "list-native-users", type: "action" },
      { name: "rotate-secret", type: "action" },
      { name: "update-vault", type: "action" },
    ],
  },
  {
    name: "jit-access-approval",
    triggerType: "manual",
    triggerName: "access-request",
    steps: [
      { name: "request-approval", type: "approval" },
      { name: "grant-access", type: "action" },
      { name: "schedule-revoke", type: "action" },
    ],
  },
  {
    name: "quarterly-access-review",
    triggerType: "schedule",
    triggerName: "quarterly",
    steps: [
      { name: "collect-grants", type: "action" },
      { name: "send-review", type: "notification" },
    ],
  },
  {
    name: "auto-tag-pii-columns",
    triggerType: "schedule",
    triggerName: "hourly",
    steps: [
      { name: "scan-inventory", type: "action" },
      { name: "is-new-label", type: "condition" },
      { name: "tag-columns", type: "action" },
    ],
  },
  {
    name: "notify-on-block",
    triggerType: "policy_event",
    triggerName: "block-prod-ddl",
    steps: [
      { name: "format-message", type: "action" },
      { name: "send-slack-message", type: "notification" },
    ],
  },
];

export function workflowCatalog(seed: number): readonly SimWorkflow[] {
  return WORKFLOW_DEFS.map((w) =>
    Object.freeze({ ...w, id: `wf_${hexOf(20, seed, "workflow", w.name)}` }),
  );
}

// ---------------------------------------------------------------------------------------------
// Desktop devices.

interface SimDesktopDevice {
  readonly deviceId: string;
  readonly systemVersion: string;
  readonly kernelVersion: string;
  readonly computerName: string;
  readonly userName: string;
  readonly modelName: string;
  readonly modelIdentifier: string;
  readonly modelNumber: string;
  readonly serialNumber: string;
}

const MAC_MODELS = [
  ["MacBook Pro", "Mac15,3", "MRX33LL/A"],
  ["MacBook Pro", "MacBookPro18,3", "MKGR3LL/A"],
  ["MacBook Air", "Mac14,2", "MLY33LL/A"],
  ["MacBook Air", "Mac15,12", "MRXN3LL/A"],
  ["Mac mini", "Mac14,3", "MMFJ3LL/A"],
] as const;
const MAC_SYSTEMS = [
  ["macOS 14.6.1 (23G93)", "Darwin 23.6.0"],
  ["macOS 15.1 (24B83)", "Darwin 24.1.0"],
  ["macOS 15.3.2 (24D81)", "Darwin 24.3.0"],
] as const;
const PC_MODELS = [
  ["ThinkPad X1 Carbon Gen 11", "21HM", "21HMCTO1WW"],
  ["Latitude 7440", "0C0B", "LAT7440-I7"],
] as const;
const PC_SYSTEMS = [
  ["Windows 11 Pro 23H2 (22631.4169)", "10.0.22631"],
  ["Windows 11 Enterprise 24H2 (26100.2033)", "10.0.26100"],
] as const;
const SERIAL_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789";

/**
 * The desktop device of a human user, stable per (seed, user); about 60 % of humans have one,
 * machines never. Exported so that a devices endpoint can describe the same machines.
 */
export function desktopDeviceOf(
  seed: number,
  user: SimUser,
): SimDesktopDevice | undefined {
  if (user.type !== "human") return undefined;
  const rng = new Rng(hash32(seed, "device", user.id));
  if (!rng.chance(0.6)) return undefined;
  const login = (user.username.split(/[.@_-]/)[0] ?? user.username) || "user";
  const firstName = user.name.split(" ")[0] ?? login;
  const serial = (prefix: string, n: number): string => {
    let s = prefix;
    while (s.length < n)
      s += SERIAL_CHARS.charAt(rng.below(SERIAL_CHARS.length));
    return s;
  };
  const deviceId = `dev_${hexOf(20, seed, "device-id", user.id)}`;
  if (rng.chance(0.8)) {
    const [modelName, modelIdentifier, modelNumber] = rng.pick(MAC_MODELS);
    const [systemVersion, kernelVersion] = rng.pick(MAC_SYSTEMS);
    return {
      deviceId,
      systemVersion,
      kernelVersion,
      computerName: `${firstName}'s ${modelName}`,
      userName: login,
      modelName,
      modelIdentifier,
      modelNumber,
      serialNumber: serial(rng.pick(["C02", "FVF", "H4T"]), 10),
    };
  }
  const [modelName, modelIdentifier, modelNumber] = rng.pick(PC_MODELS);
  const [systemVersion, kernelVersion] = rng.pick(PC_SYSTEMS);
  return {
    deviceId,
    systemVersion,
    kernelVersion,
    computerName: serial("DESKTOP-", 15),
    userName: login,
    modelName,
    modelIdentifier,
    modelNumber,
    serialNumber: serial("PF", 10),
  };
}

/** `user.sub_type`: what a machine account does (its kind in the org), or how a person is employed. */
export function userSubTypeOf(seed: number, user: SimUser): string {
  if (user.type === "machine") return user.machineKind ?? "batch";
  return hash32(seed, "sub-type", user.id) % 100 < 80
    ? "employee"
    : "contractor";
}

// ---------------------------------------------------------------------------------------------
// Literal values substituted into placeholders.

const FIRST = [
  "jane",
  "john",
  "maria",
  "wei",
  "amir",
  "sofia",
  "liam",
  "noah",
  "emma",
  "yuki",
  "olga",
  "raj",
];
const LAST = [
  "doe",
  "smith",
  "garcia",
  "chen",
  "khan",
  "rossi",
  "martin",
  "novak",
  "silva",
  "tanaka",
];
const STREETS = [
  "Main St",
  "Oak Ave",
  "Rue de Rivoli",
  "Hauptstrasse",
  "Elm Rd",
];
const WORDS = [
  "pending",
  "shipped",
  "active",
  "eu-west",
  "premium",
  "refunded",
  "draft",
  "archived",
];

export function literalFor(kind: string, rng: Rng): string {
  switch (kind) {
    case "id":
      return String(1 + rng.below(99_999));
    case "n":
      return String(1 + rng.below(500));
    case "amount":
      return (rng.below(100_000) / 100).toFixed(2);
    case "email":
      return `${rng.pick(FIRST)}.${rng.pick(LAST)}${rng.below(100)}@example.com`;
    case "name": {
      const f = rng.pick(FIRST);
      const l = rng.pick(LAST);
      return `${f.charAt(0).toUpperCase()}${f.slice(1)} ${l.charAt(0).toUpperCase()}${l.slice(1)}`;
    }
    case "phone":
      return `+1-555-${String(rng.below(10_000)).padStart(4, "0")}`;
    case "address":
      return `${1 + rng.below(999)} ${rng.pick(STREETS)}`;
    case "ip":
      return `203.0.113.${1 + rng.below(254)}`;
    case "card":
      return `4111-****-****-${String(rng.below(10_000)).padStart(4, "0")}`;
    case "iban":
      return `DE89370400440532${String(rng.below(1_000_000)).padStart(6, "0")}`;
    case "ssn":
      return `***-**-${String(rng.below(10_000)).padStart(4, "0")}`;
    case "sku":
      return `SKU-${String(rng.below(100_000)).padStart(5, "0")}`;
    case "currency":
      return rng.pick(["EUR", "USD", "GBP", "JPY"]);
    case "date":
      return `2026-${String(1 + rng.below(12)).padStart(2, "0")}-${String(1 + rng.below(28)).padStart(2, "0")}`;
    default:
      return rng.pick(WORDS);
  }
}
