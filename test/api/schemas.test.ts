import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  aiProviderMembers,
  cloudIntegrationProvider,
  cloudIntegrationSchema,
  connectorAiProviderSchema,
  desktopDeviceSchema,
  findAiSatelliteMember,
  identityLinkType,
  inventoryObjectMembers,
  inventoryObjectSchema,
  isKnownValue,
  KNOWN_AGGREGATION_MEMBERS,
  listInventoryObjectsResponseSchema,
  listLogAggregationsRequestSchema,
  listLogAggregationsResponseSchema,
  listPolicySuspensionsResponseSchema,
  logsOverTimeDatetimeMs,
  nativeUserCredentialMembers,
  nativeUserIdentityLinkSchema,
  nativeUserSchema,
  POLICY_STATUSES,
  policySchema,
  resourceClassifierConfigurationSchema,
  resourceSchema,
  sessionSchema,
  signingKeySchema,
  topValueMembers,
  userSchema,
  type LogBucket,
} from "../../src/api/schemas/index.js";

describe("object schemas: omitted zero values", () => {
  it("fills defaults for a Resource that carries only its id", () => {
    const r = resourceSchema.parse({ id: "res-1" });
    expect(r).toMatchObject({
      id: "res-1",
      name: "",
      technology: "",
      hostname: "",
      port: 0,
      terminationProtection: false,
      spaceId: "",
      tags: [],
      aliases: [],
    });
    expect(r.space).toBeUndefined();
    expect(r.createdAt).toBeUndefined();
  });

  it("fills defaults for a Policy, a PolicySuspension list and a DesktopDevice", () => {
    const p = policySchema.parse({ id: "pol-1", name: "mask pii" });
    expect(p).toMatchObject({
      notification: "",
      status: "",
      owners: [],
      version: 0,
      terminationProtection: false,
    });

    const list = listPolicySuspensionsResponseSchema.parse({
      policySuspensions: [{ id: "s1" }],
    });
    expect(list.policySuspensions[0]).toMatchObject({
      id: "s1",
      policyId: "",
      identityType: "",
    });
    expect(list.listMetadata).toEqual({
      after: "",
      before: "",
      nextCursor: "",
      count: 0n,
    });
    expect(
      listPolicySuspensionsResponseSchema.parse({}).policySuspensions,
    ).toEqual([]);

    const d = desktopDeviceSchema.parse({ deviceId: "dev-1" });
    expect(d.transparentProxyEnabled).toBe(false);
    expect(d.hardwareInfo.serialNumber).toBe("");
    expect(d.softwareInfo.computerName).toBe("");
  });

  it("accepts null for the nullable spaceId", () => {
    expect(resourceSchema.parse({ id: "r", spaceId: null }).spaceId).toBe("");
  });
});

describe("object schemas: unknown members are kept", () => {
  it("keeps unknown members at every level", () => {
    const r = resourceSchema.parse({
      id: "r",
      brandNew: { nested: true },
      space: { id: "sp", color: "blue" },
      tags: [{ key: "env", value: "prod", weight: 3 }],
    });
    expect(r.brandNew).toEqual({ nested: true });
    expect(r.space?.color).toBe("blue");
    expect(r.tags[0]?.weight).toBe(3);
  });

  it("keeps an unknown enum value instead of rejecting the record", () => {
    const p = policySchema.parse({
      id: "p",
      status: "archived",
      notification: "pager",
    });
    expect(p.status).toBe("archived");
    expect(isKnownValue(POLICY_STATUSES, p.status)).toBe(false);
    expect(isKnownValue(POLICY_STATUSES, "dry-run")).toBe(true);
    expect(signingKeySchema.parse({ id: "k", status: "rotating" }).status).toBe(
      "rotating",
    );
  });

  it("finds the brand-named AI satellite member of a connector AI provider", () => {
    const a = connectorAiProviderSchema.parse({
      id: "ai-1",
      connectorId: "c-1",
      config: { acmeAiSatellite: {}, openai: { apiKey: "sk-x" } },
    });
    expect(a.config.acmeAiSatellite).toEqual({});
    expect(findAiSatelliteMember(a.config)?.member).toBe("acmeAiSatellite");
    expect(aiProviderMembers(a.config)).toEqual([
      "openai",
      "serviceAiSatellite",
    ]);
    expect(connectorAiProviderSchema.parse({ id: "x" }).config).toEqual({});
  });

  it("reads the native user credential variants and identity links", () => {
    const n = nativeUserSchema.parse({
      id: "nu",
      basic: { username: "app", passwordIsEnv: true },
      iam: { type: "IAM_NATIVE_USER_TYPE_AWS", role: "arn:aws:iam::1:role/x" },
    });
    expect(n.basic).toEqual({
      username: "app",
      usernameIsEnv: false,
      password: "",
      passwordIsEnv: true,
    });
    expect(nativeUserCredentialMembers(n)).toEqual(["basic", "iam"]);
    const link = nativeUserIdentityLinkSchema.parse({
      id: "l",
      nativeUser: n,
      group: { id: "g", name: "dba" },
    });
    expect(identityLinkType(link)).toBe("group");
  });

  it("reads nested inventory objects", () => {
    const inv = listInventoryObjectsResponseSchema.parse({
      inventory: [
        {
          db: {
            id: "db1",
            schemas: [
              {
                id: "s1",
                tables: [
                  {
                    id: "t1",
                    columns: [{ id: "c1", dataTypeOid: 23, tags: ["pii"] }],
                  },
                ],
              },
            ],
          },
        },
      ],
      listMetadata: { nextCursor: "db1", count: "1" },
    });
    const o = inventoryObjectSchema.parse(inv.inventory[0]);
    expect(inventoryObjectMembers(o)).toEqual(["db"]);
    expect(o.db?.schemas[0]?.tables[0]?.columns[0]).toMatchObject({
      id: "c1",
      dataTypeOid: 23,
      dataLabel: "",
    });
    expect(o.db?.tables).toEqual([]);
    expect(inv.listMetadata.count).toBe(1n);
  });
});

describe("object schemas: integers", () => {
  it("parses 64-bit integers sent as strings", () => {
    const gcp = cloudIntegrationSchema.parse({
      id: "ci",
      gcp: { projectId: "p", projectNumber: "123456789012" },
    });
    expect(gcp.gcp?.projectNumber).toBe(123456789012);
    expect(cloudIntegrationProvider(gcp)).toBe("gcp");
    expect(
      cloudIntegrationSchema.parse({ gcp: { projectNumber: 42 } }).gcp
        ?.projectNumber,
    ).toBe(42);
    expect(policySchema.parse({ version: "7" }).version).toBe(7);
    expect(
      resourceClassifierConfigurationSchema.parse({
        aiAnalysisTimeoutSeconds: "30",
      }).aiAnalysisTimeoutSeconds,
    ).toBe(30);
  });

  it("copies brand-named aws members into the spec's awsService* spelling and keeps them", () => {
    const c = cloudIntegrationSchema.parse({
      id: "ci",
      aws: {
        awsAccountId: "111122223333",
        awsAcmeId: "brand-id",
        awsAcmeHandshakeId: "hs",
        awsAcmeIamRoleArn: "arn:role",
        awsAcmeIamRole: "role",
        awsEnableRdsAutodiscovery: true,
      },
    });
    expect(cloudIntegrationProvider(c)).toBe("aws");
    expect(c.aws).toMatchObject({
      awsAccountId: "111122223333",
      awsServiceId: "brand-id",
      awsServiceHandshakeId: "hs",
      awsServiceIamRoleArn: "arn:role",
      awsServiceIamRole: "role",
      awsServiceStackName: "",
      awsAcmeId: "brand-id",
      awsEnableRdsAutodiscovery: true,
      awsEnableEksAutodiscovery: false,
    });
  });
});

describe("object schemas: wrong types are rejected with a readable issue", () => {
  it("rejects a string where a boolean belongs", () => {
    const r = userSchema.safeParse({ id: "u", terminationProtection: "yes" });
    expect(r.success).toBe(false);
    if (r.success) return;
    expect(r.error.issues[0]?.path).toEqual(["terminationProtection"]);
    expect(z.prettifyError(r.error)).toMatch(
      /expected boolean.*\n.*terminationProtection/s,
    );
  });

  it("rejects a non-integer string and a bad timestamp", () => {
    const r = cloudIntegrationSchema.safeParse({
      gcp: { projectNumber: "12ab" },
    });
    expect(r.success).toBe(false);
    if (!r.success)
      expect(z.prettifyError(r.error)).toContain("gcp.projectNumber");
    const t = policySchema.safeParse({ createdAt: "yesterday" });
    expect(t.success).toBe(false);
    if (!t.success)
      expect(t.error.issues[0]?.message).toBe("expected an RFC 3339 timestamp");
  });
});

describe("session schema", () => {
  const base = { id: "sess-1", startTime: "2026-11-02T10:04:05.123456Z" };

  it("reads the brand-named user member by its shape", () => {
    const s = sessionSchema.parse({
      ...base,
      user: {
        type: "human",
        formal: {
          user: { id: "u1", email: "a@example.com", groups: ["dba"] },
          endUser: { id: "e1", name: "Eve" },
        },
      },
    });
    expect(s.user.identity).toMatchObject({
      id: "u1",
      email: "a@example.com",
      groups: ["dba"],
      externalIds: [],
    });
    expect(s.user.endUser).toMatchObject({ id: "e1", name: "Eve", email: "" });
    expect(s.user).toHaveProperty("formal.user.id", "u1");
  });

  it("still reads the spec's spelling `service`", () => {
    const s = sessionSchema.parse({
      ...base,
      user: { service: { user: { id: "u2" } } },
    });
    expect(s.user.identity?.id).toBe("u2");
    expect(s.user.endUser).toBeUndefined();
  });

  it("fails without an id", () => {
    const r = sessionSchema.safeParse({ startTime: base.startTime });
    expect(r.success).toBe(false);
    if (!r.success)
      expect(r.error.issues[0]?.message).toBe("session has no id");
  });
});

describe("ListLogAggregations", () => {
  const body = {
    numHits: "1234567",
    aggregations: {
      logsOverTime: [
        {
          datetime: "1793613600000",
          count: 7,
          buckets: [
            {
              key: "postgres",
              count: 5,
              buckets: [
                {
                  key: "alice@example.com",
                  count: 4,
                  buckets: [{ key: 200, count: 4 }],
                },
                { key: "bob@example.com", buckets: [] },
              ],
            },
          ],
        },
        { datetime: "2026-11-02T10:05:00Z" },
      ],
      userEmails: [
        { key: "alice@example.com", count: 4 },
        { key: "bob@example.com" },
      ],
      sessionRegions: [{ key: "eu-west-1", count: 2, extra: "kept" }],
      resourceTypes: [],
      brokenMember: { key: "x" },
    },
  };

  it("parses three nesting levels, numHits as a string and datetime as epoch milliseconds", () => {
    const r = listLogAggregationsResponseSchema.parse(body);
    expect(r.numHits).toBe(1234567n);
    const first = r.aggregations.logsOverTime?.[0];
    expect(first?.datetime).toBe("1793613600000");
    expect(logsOverTimeDatetimeMs(first?.datetime ?? "")).toBe(1793613600000);
    const level1 = first?.buckets[0];
    const level2 = level1?.buckets[1];
    const level3 = level1?.buckets[0]?.buckets[0];
    expect(level1).toMatchObject({ key: "postgres", count: 5n });
    expect(level2).toEqual({ key: "bob@example.com", count: 0n, buckets: [] });
    expect(level3).toEqual({ key: "200", count: 4n, buckets: [] });
    expectTypeOf(level3).toEqualTypeOf<LogBucket | undefined>();

    const second = r.aggregations.logsOverTime?.[1];
    expect(second).toEqual({
      datetime: "2026-11-02T10:05:00Z",
      count: 0n,
      buckets: [],
    });
    expect(logsOverTimeDatetimeMs(second?.datetime ?? "")).toBe(
      Date.parse("2026-11-02T10:05:00Z"),
    );
  });

  it("returns known and unknown key/count members and reports the rest", () => {
    const r = listLogAggregationsResponseSchema.parse(body);
    const { members, rejected } = topValueMembers(r.aggregations);
    expect(members.map((m) => m.member)).toEqual([
      "userEmails",
      "sessionRegions",
      "resourceTypes",
    ]);
    expect(members.find((m) => m.member === "sessionRegions")?.values).toEqual([
      { key: "eu-west-1", count: 2n, extra: "kept" },
    ]);
    expect(members.find((m) => m.member === "userEmails")?.values[1]).toEqual({
      key: "bob@example.com",
      count: 0n,
    });
    expect(members.find((m) => m.member === "resourceTypes")?.values).toEqual(
      [],
    );
    expect(rejected).toHaveLength(1);
    expect(rejected[0]?.member).toBe("brokenMember");
    expect(rejected[0]?.value).toEqual({ key: "x" });
    expect(rejected[0]?.error).toContain("expected array");
  });

  it("defaults an empty response and accepts numeric datetime and numHits", () => {
    expect(listLogAggregationsResponseSchema.parse({})).toEqual({
      aggregations: {},
      numHits: 0n,
    });
    const r = listLogAggregationsResponseSchema.parse({
      numHits: 3,
      aggregations: { logsOverTime: [{ datetime: 1793613600000, count: 3 }] },
    });
    expect(r.aggregations.logsOverTime?.[0]?.datetime).toBe("1793613600000");
  });

  it("rejects a datetime that is neither RFC 3339 nor epoch milliseconds", () => {
    const r = listLogAggregationsResponseSchema.safeParse({
      aggregations: { logsOverTime: [{ datetime: "soon" }] },
    });
    expect(r.success).toBe(false);
    expect(logsOverTimeDatetimeMs("soon")).toBeNaN();
  });

  it("lists the spec's members in order", () => {
    expect(KNOWN_AGGREGATION_MEMBERS[0]).toBe("sessionTypes");
    expect(KNOWN_AGGREGATION_MEMBERS.at(-1)).toBe("llmStopReasons");
    expect(KNOWN_AGGREGATION_MEMBERS).toHaveLength(67);
    expect(new Set(KNOWN_AGGREGATION_MEMBERS).size).toBe(67);
  });

  it("checks a request: required timestamps, at most 3 group-by fields, known modes", () => {
    const ok = {
      startTimestamp: "1793613600",
      endTimestamp: "1793617200",
      histogramGroupByFields: ["a", "b", "c"],
    };
    expect(listLogAggregationsRequestSchema.safeParse(ok).success).toBe(true);
    expect(
      listLogAggregationsRequestSchema.safeParse({
        ...ok,
        histogramGroupByFields: ["a", "b", "c", "d"],
      }).success,
    ).toBe(false);
    expect(
      listLogAggregationsRequestSchema.safeParse({ ...ok, startTimestamp: "" })
        .success,
    ).toBe(false);
    expect(
      listLogAggregationsRequestSchema.safeParse({ ...ok, mode: "everything" })
        .success,
    ).toBe(false);
    expect(
      listLogAggregationsRequestSchema.safeParse({
        ...ok,
        mode: "logs_over_time_only",
      }).success,
    ).toBe(true);
  });
});
