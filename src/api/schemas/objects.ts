// Every object of the spec's "Resources and their fields" (except Session, see session.ts) as it
// arrives on the wire. Tolerant by design (API-FACTS, "JSON mapping is proto3's"): zero values may
// be omitted and get defaults, unknown members are kept, enum fields are plain strings (an
// unknown value never rejects a record; the known values are exported as consts).
import { z } from "zod";
import {
  bool,
  int32,
  int64,
  listMetadataSchema,
  loose,
  str,
  strArray,
  timestamp,
} from "./common.js";

/** An integer whose width the spec does not state: a JSON number, or a string from a 64-bit field. */
const integer = int64;

/** A timestamp proto3 omits when unset. */
const optTimestamp = timestamp.optional();

/** A string the spec allows to be null (proto3 JSON: null means the default value). */
const nullableStr = z
  .string()
  .nullable()
  .transform((v) => v ?? "")
  .default("");

/** Whether `v` is one of the known values of a tolerant enum field. */
export function isKnownValue<T extends string>(
  known: readonly T[],
  v: string,
): v is T {
  return (known as readonly string[]).includes(v);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// Resources

/** `technology` values listed under CreateResource. */
export const RESOURCE_TECHNOLOGIES = [
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
export type ResourceTechnology = (typeof RESOURCE_TECHNOLOGIES)[number];

export const spaceSchema = loose({
  id: str,
  name: str,
  description: str,
  terminationProtection: bool,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
});
export type Space = z.infer<typeof spaceSchema>;

export const resourceTagSchema = loose({
  key: str,
  value: str,
  id: str,
});
export type ResourceTag = z.infer<typeof resourceTagSchema>;

export const resourceSchema = loose({
  id: str,
  name: str,
  /** One of RESOURCE_TECHNOLOGIES, or a newer value. */
  technology: str,
  hostname: str,
  port: int32,
  environment: str,
  terminationProtection: bool,
  spaceId: nullableStr,
  space: spaceSchema.optional(),
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
  provider: str,
  tags: z.array(resourceTagSchema).default([]),
  aliases: strArray,
});
export type Resource = z.infer<typeof resourceSchema>;

export const resourceHostnameSchema = loose({
  id: str,
  name: str,
  hostname: str,
  resource: resourceSchema.optional(),
  terminationProtection: bool,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
});
export type ResourceHostname = z.infer<typeof resourceHostnameSchema>;

export const resourceHealthCheckSchema = loose({
  id: str,
  resourceId: str,
  orgId: str,
  database: str,
  databaseName: str,
  terminationProtection: bool,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
});
export type ResourceHealthCheck = z.infer<typeof resourceHealthCheckSchema>;

export const resourceClassifierConfigurationSchema = loose({
  id: str,
  resourceId: str,
  /** `nlp` appears; other values not shown. */
  preference: str,
  strictClassifierResultCount: bool,
  aiAnalysisTimeoutSeconds: integer,
  aiAnalysisScope: str,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
});
export type ResourceClassifierConfiguration = z.infer<
  typeof resourceClassifierConfigurationSchema
>;

// ---------------------------------------------------------------------------------------------
// Users and groups

export const userHumanSchema = loose({
  firstName: str,
  lastName: str,
  email: str,
});
export type UserHuman = z.infer<typeof userHumanSchema>;

export const userMachineSchema = loose({
  name: str,
});
export type UserMachine = z.infer<typeof userMachineSchema>;

export const userSchema = loose({
  id: str,
  dbUsername: str,
  /** `machine` appears; other values not shown. */
  type: str,
  terminationProtection: bool,
  expireAt: optTimestamp,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
  groupIds: strArray,
  fullName: str,
  human: userHumanSchema.optional(),
  machine: userMachineSchema.optional(),
});
export type User = z.infer<typeof userSchema>;

export const groupSchema = loose({
  id: str,
  name: str,
  description: str,
  dsyncGroupId: str,
  terminationProtection: bool,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
});
export type Group = z.infer<typeof groupSchema>;

// ---------------------------------------------------------------------------------------------
// Native users

export const nativeUserBasicSchema = loose({
  username: str,
  usernameIsEnv: bool,
  password: str,
  passwordIsEnv: bool,
});
export const nativeUserHttpApiKeySchema = loose({
  /** `HTTP_API_KEY_LOCATION_HEADER` appears; other values not shown. */
  location: str,
  key: str,
  value: str,
});
export const nativeUserHttpBasicSchema = loose({
  header: str,
  username: str,
  password: str,
});
export const nativeUserHttpBearerSchema = loose({ header: str, token: str });
export const nativeUserIamSchema = loose({
  /** `IAM_NATIVE_USER_TYPE_AWS` appears; other values not shown. */
  type: str,
  role: str,
  username: str,
});
export const nativeUserKubernetesSchema = loose({ kubeconfigEnv: str });
export const nativeUserSnowflakeKeySchema = loose({ username: str, key: str });
export const nativeUserSshKeySchema = loose({ username: str, key: str });

/** The credential variants of a native user, each an optional member. */
export const NATIVE_USER_CREDENTIAL_MEMBERS = [
  "basic",
  "httpApiKey",
  "httpBasic",
  "httpBearer",
  "iam",
  "kubernetes",
  "snowflakeKey",
  "sshKey",
] as const;
export type NativeUserCredentialMember =
  (typeof NATIVE_USER_CREDENTIAL_MEMBERS)[number];

export const nativeUserSchema = loose({
  id: str,
  resourceId: str,
  username: str,
  secret: str,
  useAsDefault: bool,
  terminationProtection: bool,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
  basic: nativeUserBasicSchema.optional(),
  httpApiKey: nativeUserHttpApiKeySchema.optional(),
  httpBasic: nativeUserHttpBasicSchema.optional(),
  httpBearer: nativeUserHttpBearerSchema.optional(),
  iam: nativeUserIamSchema.optional(),
  kubernetes: nativeUserKubernetesSchema.optional(),
  snowflakeKey: nativeUserSnowflakeKeySchema.optional(),
  sshKey: nativeUserSshKeySchema.optional(),
});
export type NativeUser = z.infer<typeof nativeUserSchema>;

/** The credential variants present on a native user (the spec does not say how many). */
export function nativeUserCredentialMembers(
  user: NativeUser,
): NativeUserCredentialMember[] {
  return NATIVE_USER_CREDENTIAL_MEMBERS.filter((m) => user[m] !== undefined);
}

export const nativeUserIdentityLinkSchema = loose({
  id: str,
  nativeUser: nativeUserSchema.optional(),
  terminationProtection: bool,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
  group: groupSchema.optional(),
  resourceHostname: resourceHostnameSchema.optional(),
  user: userSchema.optional(),
});
export type NativeUserIdentityLink = z.infer<
  typeof nativeUserIdentityLinkSchema
>;

/** `identityType` values of CreateNativeUserIdentityLink. */
export const IDENTITY_LINK_TYPES = [
  "user",
  "group",
  "resource_hostname",
] as const;
export type IdentityLinkType = (typeof IDENTITY_LINK_TYPES)[number];

/** Which identity a link points to (exactly one is expected; the first present wins). */
export function identityLinkType(
  link: NativeUserIdentityLink,
): IdentityLinkType | undefined {
  if (link.user !== undefined) return "user";
  if (link.group !== undefined) return "group";
  if (link.resourceHostname !== undefined) return "resource_hostname";
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Sidecars

export const sidecarSchema = loose({
  id: str,
  name: str,
  hostname: str,
  technology: str,
  terminationProtection: bool,
  deployed: bool,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
});
export type Sidecar = z.infer<typeof sidecarSchema>;

export const sidecarResourceLinkSchema = loose({
  id: str,
  sidecar: sidecarSchema.optional(),
  resource: resourceSchema.optional(),
  port: int32,
  terminationProtection: bool,
});
export type SidecarResourceLink = z.infer<typeof sidecarResourceLinkSchema>;

// ---------------------------------------------------------------------------------------------
// Connector AI providers

/** The provider variants of `config`; the satellite member carries the brand name on the wire. */
export const AI_PROVIDER_MEMBERS = [
  "anthropic",
  "awsBedrock",
  "azureAi",
  "serviceAiSatellite",
  "gemini",
  "googleVertexAi",
  "openai",
] as const;
export type AiProviderMember = (typeof AI_PROVIDER_MEMBERS)[number];

const AI_SATELLITE_SUFFIX = "AiSatellite";

/**
 * `config` of a connector AI provider. The member the spec spells `serviceAiSatellite` is
 * `<brand>AiSatellite` on the wire: whatever its prefix, loose keeps it, and
 * `aiProviderMembers` / `findAiSatelliteMember` find it by its suffix.
 */
export const connectorAiProviderConfigSchema = loose({
  anthropic: loose({ apiKey: str }).optional(),
  awsBedrock: loose({ region: str }).optional(),
  azureAi: loose({ apiKey: str, endpoint: str }).optional(),
  serviceAiSatellite: loose({}).optional(),
  gemini: loose({ apiKey: str }).optional(),
  googleVertexAi: loose({ gcpProjectId: str, region: str }).optional(),
  openai: loose({ apiKey: str }).optional(),
});
export type ConnectorAiProviderConfig = z.infer<
  typeof connectorAiProviderConfigSchema
>;

export const connectorAiProviderSchema = loose({
  id: str,
  connectorId: str,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
  config: connectorAiProviderConfigSchema.prefault({}),
});
export type ConnectorAiProvider = z.infer<typeof connectorAiProviderSchema>;

/** The wire name and value of the `*AiSatellite` member of a provider config, if any. */
export function findAiSatelliteMember(
  config: Record<string, unknown>,
): { member: string; value: Record<string, unknown> } | undefined {
  for (const [member, value] of Object.entries(config)) {
    if (
      member.endsWith(AI_SATELLITE_SUFFIX) &&
      member.length > AI_SATELLITE_SUFFIX.length &&
      isObject(value)
    ) {
      return { member, value };
    }
  }
  return undefined;
}

/** The provider variants present in a config, the satellite reported as `serviceAiSatellite`. */
export function aiProviderMembers(
  config: Record<string, unknown>,
): AiProviderMember[] {
  const found = AI_PROVIDER_MEMBERS.filter(
    (m) => m !== "serviceAiSatellite" && isObject(config[m]),
  );
  if (findAiSatelliteMember(config) !== undefined)
    found.push("serviceAiSatellite");
  return found;
}

// ---------------------------------------------------------------------------------------------
// Cloud integrations

/**
 * Suffixes of the `aws` members the spec spells `awsService<Suffix>`; on the wire `Service` is
 * the brand name. Most specific first, so `IamRoleArn` is tried before `IamRole`.
 */
const AWS_BRAND_SUFFIXES = [
  "HandshakeId",
  "PingbackArn",
  "StackName",
  "IamRoleArn",
  "UserName",
  "IamRole",
  "Id",
] as const;

const awsShape = {
  url: str,
  awsServiceId: str,
  awsAccountId: str,
  awsServiceIamRole: str,
  awsServiceHandshakeId: str,
  templateBody: str,
  awsServiceUserName: str,
  awsServicePingbackArn: str,
  awsServiceStackName: str,
  awsCloudRegion: str,
  awsTemplateVersion: str,
  awsS3BucketArn: str,
  awsCustomerRoleArn: str,
  awsServiceIamRoleArn: str,
  awsEnableEksAutodiscovery: bool,
  awsEnableRdsAutodiscovery: bool,
  awsEnableRedshiftAutodiscovery: bool,
  awsAllowS3Access: bool,
  awsEnableEc2Autodiscovery: bool,
  awsEnableEcsAutodiscovery: bool,
  awsEnableS3Autodiscovery: bool,
};
const AWS_KNOWN = new Set(Object.keys(awsShape));

/**
 * The brand token of the `aws` members (`awsAcmeHandshakeId` → `Acme`), found by the most
 * specific suffixes among members the spec does not name; undefined when there is none.
 */
export function findAwsBrandToken(
  aws: Record<string, unknown>,
): string | undefined {
  const votes = new Map<string, number>();
  for (const key of Object.keys(aws)) {
    if (AWS_KNOWN.has(key) || !key.startsWith("aws")) continue;
    for (const suffix of AWS_BRAND_SUFFIXES) {
      if (suffix === "Id" || !key.endsWith(suffix)) continue;
      const token = key.slice(3, key.length - suffix.length);
      if (/^[A-Z][A-Za-z0-9]*$/.test(token))
        votes.set(token, (votes.get(token) ?? 0) + 1);
      break;
    }
  }
  let best: string | undefined;
  let bestVotes = 0;
  for (const [token, n] of votes) {
    if (n > bestVotes) [best, bestVotes] = [token, n];
  }
  return best;
}

/**
 * `aws` variant of a cloud integration. Brand-named members (`aws<Brand>Id`, ...) are kept as
 * they are and also copied into the spec's `awsService*` spelling when that one is absent.
 */
export const cloudIntegrationAwsSchema = z
  .looseObject(awsShape)
  .transform((aws) => {
    const token = findAwsBrandToken(aws);
    if (token === undefined) return aws;
    const out: typeof aws = { ...aws };
    for (const suffix of AWS_BRAND_SUFFIXES) {
      const specName = `awsService${suffix}` as const;
      const wire = aws[`aws${token}${suffix}`];
      if (out[specName] === "" && typeof wire === "string")
        out[specName] = wire;
    }
    return out;
  });
export type CloudIntegrationAws = z.infer<typeof cloudIntegrationAwsSchema>;

export const cloudIntegrationGcpSchema = loose({
  name: str,
  projectId: str,
  /** A number, or a string when encoded as a 64-bit integer. */
  projectNumber: integer,
  serviceAccountEmail: str,
  workloadIdentityProviderName: str,
  url: str,
  accountId: str,
  roleName: str,
  callbackUri: str,
  gcpEnableComputeInstancesAutodiscovery: bool,
  gcpEnableGkeClustersAutodiscovery: bool,
  gcpEnableCloudsqlInstancesAutodiscovery: bool,
});
export type CloudIntegrationGcp = z.infer<typeof cloudIntegrationGcpSchema>;

export const cloudIntegrationSchema = loose({
  id: str,
  name: str,
  active: bool,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
  aws: cloudIntegrationAwsSchema.optional(),
  gcp: cloudIntegrationGcpSchema.optional(),
});
export type CloudIntegration = z.infer<typeof cloudIntegrationSchema>;

/** The provider variant present (exactly one is expected). */
export function cloudIntegrationProvider(
  c: CloudIntegration,
): "aws" | "gcp" | undefined {
  if (c.aws !== undefined) return "aws";
  if (c.gcp !== undefined) return "gcp";
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Inventory

const inventoryColumnShape = {
  id: str,
  resourceId: str,
  name: str,
  path: str,
  dataLabel: str,
  dataLabelV2: str,
  dataType: str,
  resourceName: str,
  dataTypeOid: integer,
  dataLabelLockedForSidecar: bool,
  tags: strArray,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
  markedForDeletionAt: optTimestamp,
};

export const inventoryColumnSchema = loose(inventoryColumnShape);
export type InventoryColumn = z.infer<typeof inventoryColumnSchema>;

export const inventorySubColumnSchema = loose(inventoryColumnShape);
export type InventorySubColumn = z.infer<typeof inventorySubColumnSchema>;

const inventoryBaseShape = {
  id: str,
  resourceId: str,
  name: str,
  path: str,
  resourceName: str,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
  markedForDeletionAt: optTimestamp,
};

export const inventoryTableSchema = loose({
  ...inventoryBaseShape,
  columns: z.array(inventoryColumnSchema).default([]),
});
export type InventoryTable = z.infer<typeof inventoryTableSchema>;

/** An inventory Schema (a database schema holding tables). */
export const inventorySchemaSchema = loose({
  ...inventoryBaseShape,
  tables: z.array(inventoryTableSchema).default([]),
});
export type InventorySchema = z.infer<typeof inventorySchemaSchema>;

export const inventoryDbSchema = loose({
  ...inventoryBaseShape,
  schemas: z.array(inventorySchemaSchema).default([]),
  tables: z.array(inventoryTableSchema).default([]),
});
export type InventoryDb = z.infer<typeof inventoryDbSchema>;

export const inventoryDatastoreSchema = loose({
  id: str,
  name: str,
  technology: str,
  dbs: z.array(inventoryDbSchema).default([]),
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
});
export type InventoryDatastore = z.infer<typeof inventoryDatastoreSchema>;

export const INVENTORY_OBJECT_MEMBERS = [
  "column",
  "datastore",
  "db",
  "schema",
  "subColumn",
  "table",
] as const;
export type InventoryObjectMember = (typeof INVENTORY_OBJECT_MEMBERS)[number];

export const inventoryObjectSchema = loose({
  column: inventoryColumnSchema.optional(),
  datastore: inventoryDatastoreSchema.optional(),
  db: inventoryDbSchema.optional(),
  schema: inventorySchemaSchema.optional(),
  subColumn: inventorySubColumnSchema.optional(),
  table: inventoryTableSchema.optional(),
});
export type InventoryObject = z.infer<typeof inventoryObjectSchema>;

/** The members present on an inventory object (the spec does not say which or how many). */
export function inventoryObjectMembers(
  o: InventoryObject,
): InventoryObjectMember[] {
  return INVENTORY_OBJECT_MEMBERS.filter((m) => o[m] !== undefined);
}

// ---------------------------------------------------------------------------------------------
// Policies

export const POLICY_NOTIFICATIONS = [
  "none",
  "consumer",
  "owners",
  "all",
] as const;
export type PolicyNotification = (typeof POLICY_NOTIFICATIONS)[number];

export const POLICY_STATUSES = ["draft", "dry-run", "active"] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];

export const policyOwnerSchema = loose({
  group: groupSchema.optional(),
  user: userSchema.optional(),
});
export type PolicyOwner = z.infer<typeof policyOwnerSchema>;

export const policySchema = loose({
  id: str,
  name: str,
  description: str,
  code: str,
  ast: str,
  /** One of POLICY_NOTIFICATIONS, or a newer value (kept, never rejected). */
  notification: str,
  owners: z.array(policyOwnerSchema).default([]),
  /** One of POLICY_STATUSES, or a newer value (kept, never rejected). */
  status: str,
  terminationProtection: bool,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
  version: integer,
});
export type Policy = z.infer<typeof policySchema>;

export const policySuspensionSchema = loose({
  id: str,
  policyId: str,
  orgId: str,
  /** `user` appears; other values not shown. */
  identityType: str,
  identityId: str,
  createdBy: str,
  requestId: str,
  suspensionType: str,
  inputCondition: str,
  expireAt: optTimestamp,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
});
export type PolicySuspension = z.infer<typeof policySuspensionSchema>;

// ---------------------------------------------------------------------------------------------
// Desktop devices and signing keys

export const desktopDeviceHardwareInfoSchema = loose({
  modelName: str,
  modelIdentifier: str,
  modelNumber: str,
  serialNumber: str,
  hardwareUuid: str,
  provisioningUdid: str,
  activationLockStatus: str,
});
export const desktopDeviceSoftwareInfoSchema = loose({
  systemVersion: str,
  kernelVersion: str,
  computerName: str,
  userName: str,
});

export const desktopDeviceSchema = loose({
  deviceId: str,
  version: str,
  ipAddress: str,
  transparentProxyEnabled: bool,
  hardwareInfo: desktopDeviceHardwareInfoSchema.prefault({}),
  softwareInfo: desktopDeviceSoftwareInfoSchema.prefault({}),
  lastSeenAt: optTimestamp,
});
export type DesktopDevice = z.infer<typeof desktopDeviceSchema>;

export const SIGNING_KEY_STATUSES = ["active", "revoked"] as const;
export type SigningKeyStatus = (typeof SIGNING_KEY_STATUSES)[number];

export const signingKeySchema = loose({
  id: str,
  name: str,
  publicKey: str,
  /** `ecdsa-p384` appears; other values not shown. */
  algorithm: str,
  /** One of SIGNING_KEY_STATUSES, or a newer value (kept, never rejected). */
  status: str,
  userId: str,
  terminationProtection: bool,
  createdAt: optTimestamp,
  updatedAt: optTimestamp,
});
export type SigningKey = z.infer<typeof signingKeySchema>;

// ---------------------------------------------------------------------------------------------
// Response envelopes

const listMetadata = listMetadataSchema.prefault({});

/** ListIntegrationClouds. */
export const listIntegrationCloudsResponseSchema = loose({
  clouds: z.array(cloudIntegrationSchema).default([]),
  listMetadata,
});
/** ListNativeUsers. */
export const listNativeUsersResponseSchema = loose({
  nativeUsers: z.array(nativeUserSchema).default([]),
  listMetadata,
});
/** ListNativeUserIdentityLinks. */
export const listNativeUserIdentityLinksResponseSchema = loose({
  links: z.array(nativeUserIdentityLinkSchema).default([]),
  listMetadata,
});
/** ListInventoryObjects. */
export const listInventoryObjectsResponseSchema = loose({
  inventory: z.array(inventoryObjectSchema).default([]),
  listMetadata,
});
/** ListUserDevices. */
export const listUserDevicesResponseSchema = loose({
  devices: z.array(desktopDeviceSchema).default([]),
  listMetadata,
});
/** ListPolicySuspensions. */
export const listPolicySuspensionsResponseSchema = loose({
  policySuspensions: z.array(policySuspensionSchema).default([]),
  listMetadata,
});

/** UpdateConnectorAiProvider. */
export const updateConnectorAiProviderResponseSchema = loose({
  connectorAiProvider: connectorAiProviderSchema,
});
/** UpdateCloudIntegration. */
export const updateCloudIntegrationResponseSchema = loose({
  cloud: cloudIntegrationSchema,
});
/** CreateResource. */
export const createResourceResponseSchema = loose({ resource: resourceSchema });
/** CreateResourceHostname. */
export const createResourceHostnameResponseSchema = loose({
  resourceHostname: resourceHostnameSchema,
});
/** CreateResourceHealthCheck. */
export const createResourceHealthCheckResponseSchema = loose({
  resourceHealthCheck: resourceHealthCheckSchema,
});
/** UpdateResourceClassifierConfigurationV2. */
export const updateResourceClassifierConfigurationResponseSchema = loose({
  resourceClassifierConfiguration: resourceClassifierConfigurationSchema,
});
/** CreateResourceTag. */
export const createResourceTagResponseSchema = loose({
  tag: resourceTagSchema,
});
/** CreateNativeUserIdentityLink. */
export const createNativeUserIdentityLinkResponseSchema = loose({
  link: nativeUserIdentityLinkSchema,
});
/** GetUser. */
export const getUserResponseSchema = loose({ user: userSchema });
/** UpdatePolicy. */
export const updatePolicyResponseSchema = loose({ policy: policySchema });
/** CreateSidecarResourceLink and UpdateSidecarResourceLink. */
export const sidecarResourceLinkResponseSchema = loose({
  link: sidecarResourceLinkSchema,
});
/** UpdateSigningKey. */
export const updateSigningKeyResponseSchema = loose({
  signingKey: signingKeySchema,
});
