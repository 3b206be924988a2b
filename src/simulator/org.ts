// The simulated organisation: people, service accounts, groups, resources and the sidecars
// and connectors that reach them. Built from the seed alone so that every simulator with the
// same seed describes the same company; the names look real because dashboards and demos
// are read by people.

import {
  TECHNOLOGIES,
  type MachineKind,
  type SimConnector,
  type SimGroup,
  type SimOrg,
  type SimResource,
  type SimSidecar,
  type SimSpace,
  type SimUser,
  type Technology,
} from "./model.js";
import {
  createRng,
  hash32,
  hashId,
  WeightedTable,
  type Rng,
} from "./random.js";

interface OrgDimensions {
  humans: number;
  machines: number;
  groups: number;
  resources: number;
  sidecars: number;
  connectors: number;
  spaces: number;
}

/** A preset, or explicit numbers (missing ones taken from `mid`). */
export type OrgSize = "small" | "mid" | "large" | Partial<OrgDimensions>;

const ORG_SIZE_PRESETS: Readonly<
  Record<"small" | "mid" | "large", OrgDimensions>
> = {
  small: {
    humans: 40,
    machines: 12,
    groups: 8,
    resources: 40,
    sidecars: 4,
    connectors: 2,
    spaces: 3,
  },
  mid: {
    humans: 400,
    machines: 60,
    groups: 25,
    resources: 150,
    sidecars: 12,
    connectors: 4,
    spaces: 6,
  },
  large: {
    humans: 4000,
    machines: 400,
    groups: 60,
    resources: 1000,
    sidecars: 40,
    connectors: 10,
    spaces: 12,
  },
};

function resolveOrgSize(size: OrgSize = "mid"): OrgDimensions {
  if (typeof size === "string") return { ...ORG_SIZE_PRESETS[size] };
  const out: OrgDimensions = { ...ORG_SIZE_PRESETS.mid, ...size };
  for (const [key, value] of Object.entries(out)) {
    if (!Number.isInteger(value) || value < 0) {
      throw new RangeError(
        `org size: ${key} must be a non-negative integer, got ${value}`,
      );
    }
  }
  if (out.humans + out.machines < 1) throw new RangeError("org size: no users");
  if (out.resources < 1) throw new RangeError("org size: no resources");
  if (out.groups < 1 || out.spaces < 1)
    throw new RangeError("org size: groups and spaces ≥ 1");
  if (out.sidecars + out.connectors < 1) {
    throw new RangeError(
      "org size: at least one sidecar or connector is needed",
    );
  }
  return out;
}

/** CLI form: `small`, `mid`, `large` or `humans=500,resources=200,…`. */
export function parseOrgSize(spec: string): OrgSize {
  const text = spec.trim();
  if (text === "small" || text === "mid" || text === "large") return text;
  const out: Partial<OrgDimensions> = {};
  const keys = Object.keys(ORG_SIZE_PRESETS.mid);
  for (const item of text.split(",")) {
    const [key, value, extra] = item.split("=").map((p) => p.trim());
    if (
      key === undefined ||
      value === undefined ||
      extra !== undefined ||
      !keys.includes(key)
    ) {
      throw new Error(
        `org size: "${item}" is not small|mid|large or <key>=<n> with key in ${keys.join(", ")}`,
      );
    }
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) {
      throw new Error(
        `org size: ${key}=${value} must be a non-negative integer`,
      );
    }
    out[key as keyof OrgDimensions] = n;
  }
  resolveOrgSize(out);
  return out;
}

// ---------------------------------------------------------------------------------------
// Vocabulary

const DOMAINS = [
  "acme-corp.com",
  "northwind.io",
  "globex.dev",
  "initech.com",
  "umbrella-labs.io",
  "hooli.xyz",
  "vandelay.co",
  "cyberdyne.io",
  "soylent.co",
  "tyrell.tech",
];

const FIRST_NAMES = [
  "alice",
  "bob",
  "carol",
  "david",
  "emma",
  "farid",
  "grace",
  "hugo",
  "ines",
  "jamal",
  "karen",
  "liam",
  "maria",
  "noah",
  "olivia",
  "pablo",
  "quinn",
  "rosa",
  "samir",
  "tara",
  "umar",
  "vera",
  "wei",
  "xavier",
  "yara",
  "zoe",
  "aiko",
  "bruno",
  "chloe",
  "dmitri",
  "elena",
  "felix",
  "giulia",
  "hannah",
  "ivan",
  "julia",
  "kenji",
  "lea",
  "mateo",
  "nadia",
  "oscar",
  "priya",
  "rafael",
  "sofia",
  "tomas",
  "ursula",
  "victor",
  "wanda",
  "yusuf",
  "zara",
  "amara",
  "ben",
  "camille",
  "diego",
  "esther",
  "finn",
  "gabriel",
  "helena",
  "isaac",
  "jana",
  "kofi",
  "laura",
  "marcus",
  "nina",
  "omar",
  "paula",
  "ravi",
  "sara",
  "theo",
  "valentina",
  "william",
  "ximena",
  "yuki",
  "anders",
  "beatriz",
  "cheng",
  "daniela",
  "erik",
  "fatima",
  "george",
];

const LAST_NAMES = [
  "martin",
  "smith",
  "garcia",
  "mueller",
  "rossi",
  "dubois",
  "kowalski",
  "nguyen",
  "tanaka",
  "okafor",
  "silva",
  "johansson",
  "novak",
  "haddad",
  "kim",
  "patel",
  "schmidt",
  "lopez",
  "bernard",
  "jensen",
  "ivanova",
  "moreau",
  "costa",
  "yilmaz",
  "fischer",
  "larsen",
  "romano",
  "fernandez",
  "wong",
  "mensah",
  "dupont",
  "weber",
  "santos",
  "nakamura",
  "berg",
  "khan",
  "olsen",
  "ricci",
  "alvarez",
  "chen",
  "petrov",
  "laurent",
  "meyer",
  "sato",
  "andersen",
  "marino",
  "torres",
  "park",
  "hoffmann",
  "lefebvre",
  "gomez",
  "kaya",
  "nielsen",
  "ferrari",
  "ruiz",
  "singh",
  "wagner",
  "girard",
  "carvalho",
  "hansen",
  "murphy",
  "oconnor",
  "brown",
  "walker",
  "evans",
  "baker",
  "clarke",
  "hughes",
  "reid",
  "stewart",
];

/** Group names with the technologies their members mostly touch and a relative headcount. */
const GROUP_PROFILES: readonly {
  name: string;
  techs: Technology[];
  weight: number;
}[] = [
  {
    name: "data-engineering",
    techs: [
      "snowflake",
      "postgres",
      "s3",
      "kafka",
      "bigquery",
      "clickhouse",
      "athena",
    ],
    weight: 6,
  },
  {
    name: "backend-engineering",
    techs: [
      "postgres",
      "mysql",
      "redis",
      "mongodb",
      "http",
      "grpc",
      "kafka",
      "dynamodb",
    ],
    weight: 10,
  },
  {
    name: "sre-oncall",
    techs: [
      "ssh",
      "kubernetes",
      "postgres",
      "mysql",
      "redis",
      "http",
      "elastic",
    ],
    weight: 4,
  },
  {
    name: "finance-analysts",
    techs: ["snowflake", "mssqlserver", "postgres", "web"],
    weight: 4,
  },
  {
    name: "platform-engineering",
    techs: ["kubernetes", "ssh", "http", "grpc", "s3", "redis"],
    weight: 5,
  },
  {
    name: "data-science",
    techs: ["snowflake", "bigquery", "s3", "postgres", "llm", "clickhouse"],
    weight: 4,
  },
  {
    name: "ml-engineering",
    techs: ["s3", "snowflake", "llm", "mcp", "kubernetes", "postgres"],
    weight: 3,
  },
  {
    name: "security-engineering",
    techs: ["ssh", "rdp", "elastic", "web", "http", "s3"],
    weight: 2,
  },
  {
    name: "dba-team",
    techs: ["postgres", "mysql", "mariadb", "mssqlserver", "mongodb", "redis"],
    weight: 2,
  },
  {
    name: "product-analytics",
    techs: ["snowflake", "bigquery", "clickhouse", "web"],
    weight: 3,
  },
  {
    name: "support-tier2",
    techs: ["web", "postgres", "mcp", "llm", "http"],
    weight: 5,
  },
  {
    name: "frontend-engineering",
    techs: ["http", "web", "grpc", "postgres"],
    weight: 6,
  },
  {
    name: "devops",
    techs: ["kubernetes", "ssh", "s3", "http", "rdp"],
    weight: 3,
  },
  {
    name: "payments-engineering",
    techs: ["postgres", "mysql", "kafka", "redis", "dynamodb"],
    weight: 3,
  },
  {
    name: "risk-and-compliance",
    techs: ["snowflake", "mssqlserver", "web", "elastic"],
    weight: 2,
  },
  {
    name: "bi-developers",
    techs: ["snowflake", "bigquery", "postgres", "athena", "mssqlserver"],
    weight: 2,
  },
  {
    name: "ai-platform",
    techs: ["llm", "mcp", "kubernetes", "grpc", "postgres"],
    weight: 2,
  },
  {
    name: "customer-success",
    techs: ["web", "postgres", "llm", "mcp"],
    weight: 4,
  },
  {
    name: "mobile-engineering",
    techs: ["http", "grpc", "postgres", "redis"],
    weight: 3,
  },
  {
    name: "infra-networking",
    techs: ["ssh", "rdp", "kubernetes", "http"],
    weight: 2,
  },
  {
    name: "growth-analytics",
    techs: ["bigquery", "snowflake", "clickhouse", "postgres"],
    weight: 2,
  },
  {
    name: "qa-automation",
    techs: ["postgres", "mysql", "http", "web", "kubernetes"],
    weight: 2,
  },
  { name: "it-helpdesk", techs: ["rdp", "ssh", "web"], weight: 2 },
  { name: "marketing-ops", techs: ["web", "bigquery", "mysql"], weight: 2 },
  {
    name: "research",
    techs: ["llm", "s3", "postgres", "elastic", "mongodb"],
    weight: 1,
  },
  { name: "contractors", techs: ["postgres", "ssh", "http"], weight: 2 },
  { name: "audit", techs: ["snowflake", "elastic", "web"], weight: 1 },
  { name: "executives", techs: ["web", "snowflake"], weight: 1 },
];

const GROUP_SUFFIXES = [
  "emea",
  "amer",
  "apac",
  "contractors",
  "leads",
  "interns",
];

/** Machine accounts by kind, with the technologies they use. */
const MACHINE_PROFILES: Readonly<
  Record<MachineKind, { names: string[]; techs: Technology[]; weight: number }>
> = {
  batch: {
    names: [
      "etl-nightly",
      "dbt-runner",
      "airflow-worker",
      "spark-batch",
      "backup-agent",
      "reverse-etl",
      "fivetran-sync",
      "data-quality-checks",
      "report-mailer",
      "warehouse-loader",
      "cdc-replicator",
      "archive-job",
    ],
    techs: [
      "snowflake",
      "postgres",
      "mysql",
      "s3",
      "bigquery",
      "clickhouse",
      "kafka",
      "athena",
      "mongodb",
      "mssqlserver",
      "mariadb",
    ],
    weight: 35,
  },
  bi: {
    names: [
      "looker",
      "tableau",
      "metabase",
      "superset",
      "hex-notebooks",
      "mode-analytics",
      "powerbi-gateway",
    ],
    techs: [
      "snowflake",
      "bigquery",
      "postgres",
      "clickhouse",
      "athena",
      "mssqlserver",
      "mysql",
    ],
    weight: 15,
  },
  ci: {
    names: [
      "github-actions-deploy",
      "argo-cd",
      "terraform-cloud",
      "jenkins-ci",
      "flyway-migrations",
      "helm-release",
    ],
    techs: ["kubernetes", "ssh", "http", "s3", "postgres", "mysql"],
    weight: 12,
  },
  app: {
    names: [
      "orders-api",
      "billing-service",
      "inventory-service",
      "search-indexer",
      "notifications",
      "auth-service",
      "checkout-api",
      "recommendation-api",
      "ledger-service",
      "feature-store",
    ],
    techs: [
      "postgres",
      "mysql",
      "redis",
      "mongodb",
      "dynamodb",
      "elastic",
      "kafka",
      "grpc",
      "http",
      "mariadb",
    ],
    weight: 28,
  },
  agent: {
    names: [
      "support-agent",
      "sql-copilot",
      "incident-bot",
      "code-review-agent",
      "docs-assistant",
    ],
    techs: ["llm", "mcp", "postgres", "http", "web"],
    weight: 10,
  },
};

const MACHINE_KINDS: readonly MachineKind[] = [
  "batch",
  "bi",
  "ci",
  "app",
  "agent",
];

/** Relative number of resources per technology (what a typical mid-size company runs). */
const TECH_WEIGHTS: Readonly<Record<Technology, number>> = {
  postgres: 18,
  mysql: 10,
  snowflake: 9,
  s3: 9,
  kubernetes: 8,
  ssh: 10,
  http: 7,
  redis: 4,
  mongodb: 4,
  bigquery: 3,
  clickhouse: 3,
  kafka: 3,
  elastic: 3,
  mssqlserver: 3,
  mariadb: 2,
  dynamodb: 2,
  athena: 2,
  rdp: 2,
  web: 3,
  grpc: 2,
  llm: 2,
  mcp: 2,
};

const TECH_SUFFIX: Readonly<Record<Technology, string>> = {
  athena: "athena",
  bigquery: "bq",
  clickhouse: "ch",
  dynamodb: "ddb",
  elastic: "es",
  grpc: "grpc",
  http: "api",
  kafka: "kafka",
  kubernetes: "k8s",
  llm: "llm",
  mariadb: "mariadb",
  mcp: "mcp",
  mongodb: "mongo",
  mssqlserver: "mssql",
  mysql: "mysql",
  postgres: "pg",
  rdp: "rdp",
  redis: "redis",
  s3: "s3",
  snowflake: "snowflake",
  ssh: "ssh",
  web: "web",
};

const TECH_PORT: Readonly<Record<Technology, number>> = {
  athena: 443,
  bigquery: 443,
  clickhouse: 9440,
  dynamodb: 443,
  elastic: 9200,
  grpc: 50051,
  http: 443,
  kafka: 9092,
  kubernetes: 6443,
  llm: 443,
  mariadb: 3306,
  mcp: 443,
  mongodb: 27017,
  mssqlserver: 1433,
  mysql: 3306,
  postgres: 5432,
  rdp: 3389,
  redis: 6379,
  s3: 443,
  snowflake: 443,
  ssh: 22,
  web: 443,
};

const NATIVE_USERS: Readonly<Record<Technology, string[]>> = {
  postgres: [
    "app_readonly",
    "analyst",
    "postgres",
    "app_rw",
    "etl_writer",
    "migrations",
  ],
  mysql: ["app_readonly", "app_rw", "reporting", "root", "replicator"],
  mariadb: ["app_rw", "reporting", "root", "app_readonly"],
  snowflake: ["analyst", "transformer", "loader", "reporter", "sysadmin"],
  s3: ["data-lake-reader", "etl-writer", "s3-admin"],
  kubernetes: ["developer", "readonly", "cluster-admin", "ci-deployer"],
  ssh: ["ubuntu", "deploy", "ec2-user", "admin"],
  rdp: ["support", "Administrator", "svc_rdp"],
  http: ["api-readonly", "service-token", "api-admin"],
  web: ["viewer", "editor", "admin"],
  grpc: ["service-token", "readonly-token"],
  redis: ["app", "readonly", "default"],
  mongodb: ["app_user", "analytics", "admin"],
  bigquery: ["analyst-sa", "etl-sa", "bi-sa"],
  clickhouse: ["analyst", "ingest", "default"],
  kafka: ["consumer-analytics", "producer-app", "kafka-admin"],
  elastic: ["kibana_user", "ingest", "elastic"],
  mssqlserver: ["app_user", "reporting", "sa"],
  dynamodb: ["app-role", "readonly-role"],
  athena: ["athena-analyst", "athena-etl"],
  llm: ["team-key", "prod-key", "eval-key"],
  mcp: ["mcp-readonly", "mcp-tools"],
};

const RESOURCE_PREFIXES = [
  "orders",
  "billing",
  "payments",
  "users",
  "inventory",
  "analytics",
  "events",
  "ml-features",
  "catalog",
  "ledger",
  "audit",
  "search",
  "sessions",
  "reporting",
  "marketing",
  "crm",
  "logistics",
  "fraud",
  "pricing",
  "recommendations",
  "support",
  "identity",
  "warehouse",
  "checkout",
  "notifications",
  "metrics",
  "shipping",
  "accounts",
  "loyalty",
  "partners",
];

const ENVIRONMENTS = ["prod", "staging", "dev", "sandbox"] as const;
const ENV_WEIGHTS = [40, 25, 25, 10];

const SPACE_NAMES = [
  "data-platform",
  "core-infra",
  "payments",
  "analytics",
  "ml",
  "security",
  "customer-data",
  "internal-tools",
  "emea",
  "apac",
  "finance",
  "sandbox",
];

const CONNECTOR_NAMES = [
  "connector-us-east-1",
  "connector-eu-west-1",
  "connector-onprem-dc1",
  "connector-gcp-europe-west4",
  "connector-us-west-2",
  "connector-ap-southeast-1",
  "connector-onprem-dc2",
  "connector-azure-westeurope",
];

const SAAS_HOSTS: Partial<Record<Technology, readonly string[]>> = {
  llm: [
    "api.openai.com",
    "api.anthropic.com",
    "generativelanguage.googleapis.com",
  ],
  bigquery: ["bigquery.googleapis.com"],
};

// ---------------------------------------------------------------------------------------

/** A resource's type as the session record reports it. */
function resourceType(tech: Technology, rng: Rng): SimResource["type"] {
  switch (tech) {
    case "s3":
    case "athena":
    case "dynamodb":
      return "aws";
    case "ssh":
    case "rdp":
    case "kubernetes":
      return "instance";
    case "postgres":
    case "mysql":
    case "mariadb":
    case "mssqlserver":
      // Managed databases on RDS are reported as aws resources.
      return rng.chance(0.35) ? "aws" : "datastore";
    default:
      return "datastore";
  }
}

function ipv4(a: number, b: number, c: number, d: number): string {
  return `${a}.${b}.${c}.${d}`;
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * Builds the organisation of `seed`. Pure: the same (seed, size) always yields the same org,
 * ids included.
 */
export function buildOrg(seed: number, size: OrgSize = "mid"): SimOrg {
  const dims = resolveOrgSize(size);
  const rng = createRng(hash32(seed, "org"));
  const domain =
    DOMAINS[hash32(seed, "domain") % DOMAINS.length] ?? "example.com";
  const id = (prefix: string, kind: string, i: number): string =>
    `${prefix}_${hashId(20, seed, kind, i)}`;

  // Spaces
  const spaces: SimSpace[] = [];
  for (let i = 0; i < dims.spaces; i++) {
    const base = SPACE_NAMES[i % SPACE_NAMES.length] ?? "space";
    const round = Math.floor(i / SPACE_NAMES.length);
    spaces.push({
      id: id("spc", "space", i),
      name: round === 0 ? base : `${base}-${round + 1}`,
    });
  }

  // Groups
  const groups: SimGroup[] = [];
  const groupTechs: Technology[][] = [];
  const groupWeights: number[] = [];
  for (let i = 0; i < dims.groups; i++) {
    const profile = GROUP_PROFILES[i % GROUP_PROFILES.length];
    if (!profile) throw new Error("unreachable: empty group profiles");
    const round = Math.floor(i / GROUP_PROFILES.length);
    const suffix = GROUP_SUFFIXES[(round - 1) % GROUP_SUFFIXES.length] ?? "x";
    const name =
      round === 0
        ? profile.name
        : `${profile.name}-${suffix}${round > GROUP_SUFFIXES.length ? `-${round}` : ""}`;
    groups.push({ id: id("grp", "group", i), name });
    groupTechs.push(profile.techs);
    groupWeights.push(profile.weight);
  }
  const groupTable = new WeightedTable(
    groups.map((_, i) => i),
    groupWeights,
  );

  // Human users
  const users: SimUser[] = [];
  const usedLogins = new Set<string>();
  for (let i = 0; i < dims.humans; i++) {
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    let login = `${first}.${last}`;
    for (let n = 2; usedLogins.has(login); n++) login = `${first}.${last}${n}`;
    usedLogins.add(login);
    const primary = groupTable.pick(rng);
    const groupIdx = new Set<number>([primary]);
    const extra = rng.chance(0.55) ? (rng.chance(0.3) ? 2 : 1) : 0;
    for (let k = 0; k < extra; k++) groupIdx.add(groupTable.pick(rng));
    const externalIds: string[] = [];
    if (rng.chance(0.8))
      externalIds.push(`okta|00u${hashId(17, seed, "okta", i)}`);
    if (rng.chance(0.15))
      externalIds.push(`scim|${hashId(12, seed, "scim", i)}`);
    users.push({
      id: id("usr", "user", i),
      type: "human",
      name: `${capitalize(first)} ${capitalize(last)}`,
      email: `${login}@${domain}`,
      username: login,
      groupIds: [...groupIdx].map((g) => groups[g]?.id ?? ""),
      externalIds,
    });
  }

  // Machine users: every kind gets at least one account when there is room, so every traffic
  // pattern exists even in small orgs.
  const kindTable = new WeightedTable(
    MACHINE_KINDS,
    MACHINE_KINDS.map((k) => MACHINE_PROFILES[k].weight),
  );
  const usedMachineNames = new Set<string>();
  const perKindCount = new Map<MachineKind, number>();
  for (let i = 0; i < dims.machines; i++) {
    const kind =
      i < MACHINE_KINDS.length
        ? (MACHINE_KINDS[i] ?? "batch")
        : kindTable.pick(rng);
    const n = perKindCount.get(kind) ?? 0;
    perKindCount.set(kind, n + 1);
    const names = MACHINE_PROFILES[kind].names;
    const base = names[n % names.length] ?? kind;
    const regionSuffixes = ["eu", "us", "apac", "v2", "canary", "dr"];
    const round = Math.floor(n / names.length);
    let name =
      round === 0
        ? base
        : `${base}-${regionSuffixes[(round - 1) % regionSuffixes.length]}`;
    for (let k = 2; usedMachineNames.has(name); k++) name = `${base}-${k}`;
    usedMachineNames.add(name);
    const owner = rng.chance(0.5) ? groups[groupTable.pick(rng)] : undefined;
    users.push({
      id: id("usr", "machine", i),
      type: "machine",
      name,
      email: "",
      username: `svc-${name}`,
      groupIds: owner ? [owner.id] : [],
      externalIds: [],
      machineKind: kind,
    });
  }

  // Resources: every technology once (in weight order) so all 22 show up, then by weight.
  const techOrder = [...TECHNOLOGIES].sort(
    (a, b) => TECH_WEIGHTS[b] - TECH_WEIGHTS[a],
  );
  const techTable = new WeightedTable(
    TECHNOLOGIES,
    TECHNOLOGIES.map((t) => TECH_WEIGHTS[t]),
  );
  const envTable = new WeightedTable(ENVIRONMENTS, ENV_WEIGHTS);
  const usedNames = new Set<string>();
  const usedIps = new Set<string>();
  const resources: SimResource[] = [];
  for (let i = 0; i < dims.resources; i++) {
    const technology =
      i < techOrder.length ? (techOrder[i] ?? "postgres") : techTable.pick(rng);
    const environment = envTable.pick(rng);
    const prefix = rng.pick(RESOURCE_PREFIXES);
    const suffix = TECH_SUFFIX[technology];
    const withEnv = environment !== "prod" || rng.chance(0.7);
    let name = withEnv
      ? `${prefix}-${environment}-${suffix}`
      : `${prefix}-${suffix}`;
    const baseName = name;
    for (let n = 2; usedNames.has(name); n++) name = `${baseName}-${n}`;
    usedNames.add(name);
    const type = resourceType(technology, rng);
    const envOctet = { prod: 10, staging: 20, dev: 30, sandbox: 40 }[
      environment
    ];
    let serverIpAddress: string;
    do {
      serverIpAddress =
        SAAS_HOSTS[technology] || technology === "snowflake"
          ? ipv4(
              rng.pick([34, 35, 52, 54]),
              rng.int(0, 255),
              rng.int(0, 255),
              rng.int(1, 254),
            )
          : ipv4(
              10,
              envOctet + rng.int(0, 9),
              rng.int(0, 255),
              rng.int(1, 254),
            );
    } while (usedIps.has(serverIpAddress));
    usedIps.add(serverIpAddress);
    const natives = NATIVE_USERS[technology];
    const nativeCount = Math.min(natives.length, rng.int(2, 4));
    resources.push({
      id: id("res", "resource", i),
      name,
      technology,
      type,
      environment,
      hostname: resourceHostname(name, technology, type, domain, rng),
      port: TECH_PORT[technology],
      spaceId: spaces[rng.int(0, spaces.length - 1)]?.id ?? "",
      nativeUsers: natives.slice(0, nativeCount),
      serverIpAddress,
    });
  }

  // Sidecars cover the most common technologies of this org.
  const techCount = new Map<Technology, number>();
  for (const r of resources)
    techCount.set(r.technology, (techCount.get(r.technology) ?? 0) + 1);
  const rankedTechs = [...techCount.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([t]) => t);
  const sidecars: SimSidecar[] = [];
  const sidecarsByTech = new Map<Technology, SimSidecar[]>();
  const regions = [
    "us-east-1",
    "eu-west-1",
    "us-west-2",
    "eu-central-1",
    "ap-southeast-1",
  ];
  for (let i = 0; i < dims.sidecars && rankedTechs.length > 0; i++) {
    const technology =
      rankedTechs[i % Math.min(rankedTechs.length, 8)] ?? "postgres";
    const n = (sidecarsByTech.get(technology)?.length ?? 0) + 1;
    const region = regions[(i + n) % regions.length] ?? "us-east-1";
    const name = `sidecar-${technology}-${region}-${n}`;
    const sidecar: SimSidecar = {
      id: id("sdc", "sidecar", i),
      name,
      technology,
      hostname: `${name}.sidecars.${domain}`,
    };
    sidecars.push(sidecar);
    const list = sidecarsByTech.get(technology) ?? [];
    list.push(sidecar);
    sidecarsByTech.set(technology, list);
  }

  const connectors: SimConnector[] = [];
  for (let i = 0; i < dims.connectors; i++) {
    const base = CONNECTOR_NAMES[i % CONNECTOR_NAMES.length] ?? "connector";
    const round = Math.floor(i / CONNECTOR_NAMES.length);
    connectors.push({
      id: id("con", "connector", i),
      name: round === 0 ? base : `${base}-${round + 1}`,
    });
  }

  // Each resource is reached by exactly one of them, so its sessions carry either a sidecar
  // or a connector member, never both.
  const sidecarOfResource = new Map<string, string>();
  const connectorOfResource = new Map<string, string>();
  for (const r of resources) {
    const candidates = sidecarsByTech.get(r.technology);
    const useSidecar =
      candidates !== undefined && (connectors.length === 0 || rng.chance(0.75));
    if (useSidecar && candidates) {
      sidecarOfResource.set(r.id, rng.pick(candidates).id);
    } else if (connectors.length > 0) {
      connectorOfResource.set(r.id, rng.pick(connectors).id);
    } else {
      sidecarOfResource.set(r.id, rng.pick(sidecars).id);
    }
  }

  return {
    seed,
    domain,
    groups,
    users,
    spaces,
    resources,
    sidecars,
    connectors,
    sidecarOfResource,
    connectorOfResource,
  };
}

function resourceHostname(
  name: string,
  tech: Technology,
  type: SimResource["type"],
  domain: string,
  rng: Rng,
): string {
  const saas = SAAS_HOSTS[tech];
  if (saas) return rng.pick(saas);
  const region = rng.pick(["us-east-1", "eu-west-1", "us-west-2"]);
  if (tech === "snowflake")
    return `${domain.split(".")[0] ?? "acct"}-${name}.snowflakecomputing.com`;
  if (tech === "s3") return `${name}.s3.${region}.amazonaws.com`;
  if (tech === "athena") return `athena.${region}.amazonaws.com`;
  if (tech === "dynamodb") return `dynamodb.${region}.amazonaws.com`;
  if (type === "aws")
    return `${name}.c${hashId(10, name)}.${region}.rds.amazonaws.com`;
  return `${name}.internal.${domain}`;
}

// ---------------------------------------------------------------------------------------
// Lookups and usage profiles derived from an org (not part of the org itself, so SimOrg stays
// a plain description that other parts of the simulator can build on).

export interface OrgIndex {
  readonly userById: ReadonlyMap<string, SimUser>;
  readonly groupById: ReadonlyMap<string, SimGroup>;
  readonly resourceById: ReadonlyMap<string, SimResource>;
  readonly sidecarById: ReadonlyMap<string, SimSidecar>;
  readonly connectorById: ReadonlyMap<string, SimConnector>;
  readonly spaceById: ReadonlyMap<string, SimSpace>;
  readonly humans: readonly SimUser[];
  readonly machines: readonly SimUser[];
  readonly machinesByKind: ReadonlyMap<MachineKind, readonly SimUser[]>;
  /** Resources a user habitually uses, most used first. */
  readonly favourites: ReadonlyMap<string, readonly SimResource[]>;
  /** Group names of a user (the wire carries names, not ids). */
  readonly groupNamesOfUser: ReadonlyMap<string, readonly string[]>;
}

export function indexOrg(org: SimOrg): OrgIndex {
  const byId = <T extends { id: string }>(
    items: readonly T[],
  ): Map<string, T> => new Map(items.map((x) => [x.id, x]));
  const groupById = byId(org.groups);
  const resourceById = byId(org.resources);
  const humans = org.users.filter((u) => u.type === "human");
  const machines = org.users.filter((u) => u.type === "machine");
  const machinesByKind = new Map<MachineKind, SimUser[]>();
  for (const m of machines) {
    const kind = m.machineKind ?? "batch";
    const list = machinesByKind.get(kind) ?? [];
    list.push(m);
    machinesByKind.set(kind, list);
  }

  const resourcesByTech = new Map<Technology, SimResource[]>();
  for (const r of org.resources) {
    const list = resourcesByTech.get(r.technology) ?? [];
    list.push(r);
    resourcesByTech.set(r.technology, list);
  }
  const profileOfGroup = new Map<string, Technology[]>();
  org.groups.forEach((g, i) => {
    profileOfGroup.set(
      g.id,
      GROUP_PROFILES[i % GROUP_PROFILES.length]?.techs ?? [],
    );
  });

  const favourites = new Map<string, SimResource[]>();
  for (const u of org.users) {
    const rng = createRng(hash32(org.seed, "favourites", u.id));
    const techs =
      u.type === "machine"
        ? MACHINE_PROFILES[u.machineKind ?? "batch"].techs
        : u.groupIds.flatMap((g) => profileOfGroup.get(g) ?? []);
    const pool = [...new Set(techs)].flatMap(
      (t) => resourcesByTech.get(t) ?? [],
    );
    const source = pool.length > 0 ? pool : org.resources;
    const want = u.type === "machine" ? rng.int(1, 6) : rng.int(4, 12);
    const chosen: SimResource[] = [];
    const seen = new Set<string>();
    for (
      let tries = 0;
      chosen.length < Math.min(want, source.length) && tries < want * 8;
      tries++
    ) {
      const r = rng.pick(source);
      if (!seen.has(r.id)) {
        seen.add(r.id);
        chosen.push(r);
      }
    }
    favourites.set(u.id, chosen);
  }

  const groupNamesOfUser = new Map<string, string[]>();
  for (const u of org.users) {
    groupNamesOfUser.set(
      u.id,
      u.groupIds
        .map((g) => groupById.get(g)?.name ?? "")
        .filter((n) => n !== ""),
    );
  }

  return {
    userById: byId(org.users),
    groupById,
    resourceById,
    sidecarById: byId(org.sidecars),
    connectorById: byId(org.connectors),
    spaceById: byId(org.spaces),
    humans,
    machines,
    machinesByKind,
    favourites,
    groupNamesOfUser,
  };
}

// ---------------------------------------------------------------------------------------
// Clients

/** The clients each technology is reached with: by people, and by machines. */
const APPS: Readonly<
  Record<Technology, { human: readonly string[]; machine: readonly string[] }>
> = {
  postgres: {
    human: [
      "psql",
      "DBeaver",
      "DataGrip",
      "pgAdmin 4",
      "python-psycopg2",
      "TablePlus",
    ],
    machine: ["python-psycopg2", "pgx", "node-postgres", "JDBC", "airflow"],
  },
  mysql: {
    human: ["mysql", "MySQL Workbench", "DBeaver", "DataGrip", "TablePlus"],
    machine: ["mysql-connector-python", "go-sql-driver", "JDBC"],
  },
  mariadb: {
    human: ["mariadb", "DBeaver", "HeidiSQL"],
    machine: ["mariadb-connector-j", "go-sql-driver"],
  },
  snowflake: {
    human: [
      "Snowsight",
      "SnowSQL",
      "DBeaver",
      "dbt",
      "python-snowflake-connector",
    ],
    machine: ["dbt", "snowflake-connector-python", "fivetran", "airflow"],
  },
  s3: {
    human: ["aws-cli/2.17", "Cyberduck", "boto3", "S3 Browser"],
    machine: ["boto3", "aws-sdk-go-v2", "spark-s3a", "rclone"],
  },
  kubernetes: {
    human: ["kubectl/v1.31", "k9s", "Lens", "helm"],
    machine: [
      "argocd-application-controller",
      "helm",
      "kubectl/v1.31",
      "client-go",
    ],
  },
  ssh: {
    human: ["OpenSSH_9.6", "OpenSSH_9.8", "PuTTY", "Termius"],
    machine: ["ansible", "OpenSSH_9.6", "paramiko"],
  },
  rdp: {
    human: ["mstsc", "Microsoft Remote Desktop", "Remmina"],
    machine: ["FreeRDP"],
  },
  http: {
    human: ["curl/8.7", "Postman", "python-requests", "HTTPie"],
    machine: ["python-requests", "Go-http-client/1.1", "okhttp", "axios"],
  },
  web: {
    human: ["Chrome", "Firefox", "Safari", "Edge"],
    machine: ["HeadlessChrome", "playwright"],
  },
  grpc: {
    human: ["grpcurl", "Postman", "BloomRPC"],
    machine: ["grpc-go", "grpc-java", "grpc-node"],
  },
  redis: {
    human: ["redis-cli", "RedisInsight", "Another Redis Desktop Manager"],
    machine: ["go-redis", "redis-py", "ioredis"],
  },
  mongodb: {
    human: ["mongosh", "MongoDB Compass", "Studio 3T"],
    machine: ["pymongo", "mongo-go-driver", "mongoose"],
  },
  bigquery: {
    human: ["bq", "BigQuery Studio", "DBeaver", "python-bigquery"],
    machine: ["python-bigquery", "dbt", "airflow"],
  },
  clickhouse: {
    human: ["clickhouse-client", "DBeaver", "DataGrip"],
    machine: ["clickhouse-go", "clickhouse-connect", "vector"],
  },
  kafka: {
    human: ["kcat", "kafka-console-consumer", "Conduktor"],
    machine: ["librdkafka", "kafka-go", "debezium"],
  },
  elastic: {
    human: ["Kibana", "curl/8.7", "elasticsearch-py"],
    machine: ["elasticsearch-py", "logstash", "go-elasticsearch"],
  },
  mssqlserver: {
    human: ["SSMS", "Azure Data Studio", "sqlcmd", "DBeaver"],
    machine: ["go-mssqldb", "JDBC", "pyodbc"],
  },
  dynamodb: {
    human: ["aws-cli/2.17", "NoSQL Workbench", "boto3"],
    machine: ["aws-sdk-go-v2", "boto3"],
  },
  athena: {
    human: ["Athena console", "aws-cli/2.17", "DBeaver"],
    machine: ["pyathena", "aws-sdk-go-v2"],
  },
  llm: {
    human: ["openai-python", "anthropic-sdk", "Cursor", "langchain"],
    machine: ["openai-python", "anthropic-sdk", "langchain", "litellm"],
  },
  mcp: {
    human: ["claude-code", "Cursor", "mcp-inspector", "VS Code"],
    machine: ["mcp-python-sdk", "mcp-typescript-sdk", "langgraph"],
  },
};

/** BI tools show up under their product name. */
const BI_APPS: Readonly<Record<string, string>> = {
  looker: "Looker",
  tableau: "Tableau Server",
  metabase: "Metabase",
  superset: "Apache Superset",
  "hex-notebooks": "Hex",
  "mode-analytics": "Mode",
  "powerbi-gateway": "Power BI Gateway",
};

/** The client a user reaches a technology with: a BI tool by its product name. */
export function appName(rng: Rng, user: SimUser, tech: Technology): string {
  if (user.type === "machine") {
    if (user.machineKind === "bi") {
      const base = Object.keys(BI_APPS).find((k) => user.name.startsWith(k));
      if (base) return BI_APPS[base] ?? user.name;
    }
    return rng.pick(APPS[tech].machine);
  }
  return rng.pick(APPS[tech].human);
}
