// Directory records before they are stored: the shape checks of a list page, the secrets a
// native user loses, and an inventory object of each of the six kinds turned into column rows.
import { describe, expect, it } from "vitest";
import { checkListPage, getAnswerProblem } from "../../../src/api/answers.js";
import {
  DROPPED_SECRET_FIELDS,
  redactNativeUser,
} from "../../../src/sources/credentials.js";
import {
  inventoryColumns,
  isBad,
  normalizeIdentityLink,
  normalizeNativeUser,
  normalizeUser,
  type EntityRecord,
} from "../../../src/sources/directory.js";

const problem = (answer: unknown) => {
  const r = checkListPage(answer, "nativeUsers");
  return "problem" in r ? r.problem : undefined;
};

describe("list page checks", () => {
  it("accepts pages, empty ones included, and members the spec does not name", () => {
    expect(problem({})).toBeUndefined();
    expect(problem({ listMetadata: {} })).toBeUndefined();
    expect(
      problem({
        nativeUsers: [{ id: "a" }],
        listMetadata: { nextCursor: "a", count: "1" },
        extra: 1,
      }),
    ).toBeUndefined();
  });

  it("accepts a count that differs from the records on the page: what count counts is not known", () => {
    const page = checkListPage(
      { nativeUsers: [{}, {}], listMetadata: { count: 1200, nextCursor: "c" } },
      "nativeUsers",
    );
    expect(page).toMatchObject({
      items: [{}, {}],
      listMetadata: { count: 1200n, nextCursor: "c" },
    });
  });

  it("refuses what is not a page of this operation", () => {
    expect(problem([])).toMatch(/not an object/);
    expect(problem({ nativeUsers: {} })).toMatch(/not a list/);
    expect(problem({ users: [{}] })).toMatch(/no "nativeUsers" list/);
    expect(problem({ listMetadata: { nextCursor: "x" } })).toMatch(
      /nextCursor on a page with no/,
    );
    expect(problem({ listMetadata: "x" })).toMatch(/listMetadata/);
  });

  it("checks a GetUser answer: its shape, and that it is the user asked for", () => {
    const problem = (answer: unknown) =>
      getAnswerProblem("getUser", answer, "u");
    expect(problem({ user: { id: "u" } })).toBeUndefined();
    expect(problem({})).toMatch(/no "user"/);
    expect(problem({ user: [] })).toMatch(/not an object/);
    expect(problem({ user: { id: "v" } })).toBe(
      'the answer is for user "v", not for user "u" that was asked for',
    );
    // Without an id it names no other user: a record its stream dead-letters.
    expect(problem({ user: { name: "U" } })).toBeUndefined();
    expect(problem({ user: { id: 7 } })).toMatch(/"user.id" is a number/);
  });
});

const SECRETS = {
  secret: "S-top",
  basic: {
    username: "app",
    password: "S-basic",
    passwordIsEnv: false,
    usernameIsEnv: true,
  },
  httpApiKey: {
    location: "HTTP_API_KEY_LOCATION_HEADER",
    key: "X-Api-Key",
    value: "S-apikey",
  },
  httpBasic: { header: "Authorization", username: "u", password: "S-hb" },
  httpBearer: { header: "Authorization", token: "S-bearer" },
  iam: { type: "IAM_NATIVE_USER_TYPE_AWS", role: "arn:r", username: "i" },
  kubernetes: { kubeconfigEnv: "KUBECONFIG" },
  snowflakeKey: { username: "sf", key: "S-snow" },
  sshKey: { username: "ssh", key: "S-ssh" },
  futureVariant: { username: "f", anything: "S-future" },
  futureMember: "S-member",
};

describe("native user credentials", () => {
  it("keep each variant's kind and non-secret fields, never a secret value", () => {
    const redacted = redactNativeUser({
      id: "nu",
      resourceId: "r",
      username: "app",
      ...SECRETS,
    });
    expect(JSON.stringify(redacted)).not.toMatch(/S-/);
    expect(redacted).toMatchObject({
      id: "nu",
      basic: { username: "app", usernameIsEnv: true, passwordIsEnv: false },
      httpApiKey: {
        location: "HTTP_API_KEY_LOCATION_HEADER",
        key: "X-Api-Key",
      },
      httpBearer: { header: "Authorization" },
      iam: { role: "arn:r" },
      futureVariant: {},
    });
    expect(DROPPED_SECRET_FIELDS).toContain("httpApiKey.value");
  });

  it("are gone from the row, the raw record and a dead letter", () => {
    const good = normalizeNativeUser({ id: "nu", resourceId: "r", ...SECRETS });
    expect(isBad(good)).toBe(false);
    const row = good as EntityRecord;
    expect(row.columns.credential_kinds).toEqual([
      "basic",
      "futureVariant",
      "httpApiKey",
      "httpBasic",
      "httpBearer",
      "iam",
      "kubernetes",
      "snowflakeKey",
      "sshKey",
    ]);
    expect(JSON.stringify(row)).not.toMatch(/S-/);
    const bad = normalizeNativeUser({
      id: "nu",
      useAsDefault: "yes",
      ...SECRETS,
    });
    expect(isBad(bad)).toBe(true);
    expect(JSON.stringify(bad)).not.toMatch(/S-/);
    const link = normalizeIdentityLink({
      id: "l",
      nativeUser: { id: "nu", resourceId: "r", username: "app", ...SECRETS },
      user: { id: "u", human: { email: "a@b" } },
      createdAt: 7,
    });
    expect(isBad(link)).toBe(true);
    expect(JSON.stringify(link)).not.toMatch(/S-/);
  });
});

describe("content hash", () => {
  it("ignores updatedAt and the order of group ids, not a group joined", () => {
    const user = (updatedAt: string, groupIds: string[]) =>
      normalizeUser({ id: "u", updatedAt, groupIds }) as EntityRecord;
    const a = user("2026-11-01T00:00:00Z", ["g1", "g2"]);
    const b = user("2026-11-02T00:00:00Z", ["g2", "g1"]);
    const c = user("2026-11-02T00:00:00Z", ["g1", "g2", "g3"]);
    expect(b.contentHash).toBe(a.contentHash);
    expect(c.contentHash).not.toBe(a.contentHash);
  });
});

describe("inventory objects", () => {
  const column = (id: string, label = "") => ({
    id,
    resourceId: "r",
    name: id,
    path: `app.public.t.${id}`,
    dataLabel: label,
  });
  const table = { id: "t", columns: [column("c1", "email"), column("c2")] };
  const schema = { id: "s", tables: [table] };
  const db = {
    id: "d",
    schemas: [schema],
    tables: [{ columns: [column("c3")] }],
  };

  it("become one row per column or sub-column, whatever kind holds them", () => {
    const ids = (o: unknown) =>
      inventoryColumns(o).map((r) => (isBad(r) ? "bad" : r.id));
    expect(ids({ datastore: { id: "ds", dbs: [db] } })).toEqual([
      "c1",
      "c2",
      "c3",
    ]);
    expect(ids({ db })).toEqual(["c1", "c2", "c3"]);
    expect(ids({ schema })).toEqual(["c1", "c2"]);
    expect(ids({ table })).toEqual(["c1", "c2"]);
    expect(ids({ column: column("c4") })).toEqual(["c4"]);
    expect(ids({ subColumn: column("c5") })).toEqual(["c5"]);
    expect(ids({ somethingNew: {} })).toEqual(["bad"]);
    const [ds] = inventoryColumns({ datastore: { id: "ds", dbs: [db] } });
    expect((ds as EntityRecord).columns).toMatchObject({
      datastore_id: "ds",
      data_labels: ["email"],
      kind: "column",
    });
    const [sub] = inventoryColumns({ subColumn: column("c5") });
    expect((sub as EntityRecord).columns.kind).toBe("subColumn");
  });

  it("a part that cannot be read names the datastore, else the resource, whose stored columns it keeps", () => {
    const [ds] = inventoryColumns({ datastore: { id: "ds", dbs: "x" } });
    expect(ds).toMatchObject({
      recordId: "",
      scope: { column: "datastore_id", value: "ds" },
    });
    expect((ds as { reason: string }).reason).toMatch(
      /dbs: expected a list of objects/,
    );
    const [noId] = inventoryColumns({
      table: { resourceId: "r", columns: [{ name: "no id" }] },
    });
    expect(noId).toMatchObject({
      recordId: "",
      scope: { column: "resource_id", value: "r" },
    });
    // A bad column with a readable id keeps that id only; an object of no known kind, all.
    const [badColumn] = inventoryColumns({
      table: { resourceId: "r", columns: [{ ...column("c9"), tags: "x" }] },
    });
    expect(badColumn).toMatchObject({ recordId: "c9" });
    expect(badColumn).not.toHaveProperty("scope");
    const [unknown] = inventoryColumns({ somethingNew: {} });
    expect(unknown).not.toHaveProperty("scope");
  });

  it("marked for deletion is a disappearance; a bad column does not hide the others", () => {
    const [marked] = inventoryColumns({
      column: { ...column("c6"), markedForDeletionAt: "2026-11-01T00:00:00Z" },
    });
    expect((marked as EntityRecord).deleted).toBe(true);
    const rows = inventoryColumns({
      table: { columns: [column("c7"), { ...column("c8"), tags: "x" }] },
    });
    expect(rows.map((r) => (isBad(r) ? r.reason : r.id))).toEqual([
      "c7",
      expect.stringMatching(/tags: expected a list of strings/),
    ]);
  });
});
