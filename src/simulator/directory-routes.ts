// The read operations of the directory (directory.ts) as Connect routes: request checks as the
// control plane makes them (`limit` within each operation's bound, required ids at least one
// character), keyset paging whose cursor is the id of the last object served, and answers in
// proto3 JSON (`listMetadata` with `nextCursor` only when a next page exists).

import { SimConnectError, truncateForMessage } from "./connect.js";
import type { Directory } from "./directory.js";
import type { CountMeans } from "./list-sessions.js";
import type { RouteHandler } from "./server.js";

export const DIRECTORY_PATHS = {
  getUser: "/core.v1.UserService/GetUser",
  listUserDevices: "/core.v1.DesktopService/ListUserDevices",
  listNativeUsers: "/core.v1.ResourceService/ListNativeUsers",
  listIdentityLinks: "/core.v1.ResourceService/ListNativeUserIdentityLinks",
  listInventoryObjects: "/core.v1.InventoryService/ListInventoryObjects",
  listPolicySuspensions: "/core.v1.PoliciesService/ListPolicySuspensions",
  listIntegrationClouds:
    "/core.v1.IntegrationCloudService/ListIntegrationClouds",
} as const;

/** Page size when a request gives no limit (or 0). */
const DEFAULT_DIRECTORY_LIMIT = 50;

function limitOf(body: Record<string, unknown>, max: number): number {
  const v = body.limit;
  if (v === undefined || v === null || v === 0) return DEFAULT_DIRECTORY_LIMIT;
  if (typeof v !== "number" || !Number.isInteger(v))
    throw new SimConnectError("invalid_argument", "limit: expected an integer");
  if (v < 0 || v > max)
    throw new SimConnectError(
      "invalid_argument",
      `validation error: limit: value must be less than or equal to ${max} (got ${v})`,
    );
  return v;
}

function stringField(
  body: Record<string, unknown>,
  name: string,
  required = false,
): string {
  const v = body[name];
  if (v === undefined || v === null || v === "") {
    if (required)
      throw new SimConnectError(
        "invalid_argument",
        `validation error: ${name}: value length must be at least 1 characters`,
      );
    return "";
  }
  if (typeof v !== "string")
    throw new SimConnectError(
      "invalid_argument",
      `${name}: expected a string, got ${typeof v}`,
    );
  return v;
}

function orderOf(body: Record<string, unknown>): "asc" | "desc" | "" {
  const o = stringField(body, "order").toLowerCase();
  if (o === "" || o === "asc" || o === "desc") return o;
  throw new SimConnectError(
    "invalid_argument",
    `order: "${truncateForMessage(o)}" is not asc or desc`,
  );
}

/** One page of `items` after the object whose id is the cursor; `count` as `countMeans` says. */
function pageOf<T>(
  items: readonly T[],
  idOf: (item: T) => string,
  body: Record<string, unknown>,
  max: number,
  countMeans: CountMeans,
): { items: T[]; listMetadata: Record<string, unknown> } {
  const limit = limitOf(body, max);
  const cursor = stringField(body, "cursor");
  let from = 0;
  if (cursor !== "") {
    const at = items.findIndex((item) => idOf(item) === cursor);
    if (at < 0)
      throw new SimConnectError(
        "invalid_argument",
        `cursor: no object with id "${truncateForMessage(cursor)}"`,
      );
    from = at + 1;
  }
  const slice = items.slice(from, from + limit);
  const last = slice[slice.length - 1];
  const more = from + limit < items.length && last !== undefined;
  return {
    items: slice,
    listMetadata: {
      ...(slice.length > 0
        ? { count: countMeans === "total" ? items.length : slice.length }
        : {}),
      ...(more ? { nextCursor: idOf(last) } : {}),
    },
  };
}

function listAnswer(
  member: string,
  p: { items: unknown[]; listMetadata: Record<string, unknown> },
): Record<string, unknown> {
  return {
    ...(p.items.length > 0 ? { [member]: p.items } : {}),
    listMetadata: p.listMetadata,
  };
}

const idOf = (o: Record<string, unknown>): string =>
  typeof o.id === "string" ? o.id : "";

/** The id of the object an InventoryObject carries, whatever its kind. */
function inventoryIdOf(o: Record<string, unknown>): string {
  for (const v of Object.values(o)) {
    if (typeof v === "object" && v !== null && "id" in v) return String(v.id);
  }
  return "";
}

/** Every directory route, bound to `directory`; `countMeans` as SimulatorOptions.countMeans. */
export function directoryRoutes(
  directory: Directory,
  options: { countMeans: CountMeans } = { countMeans: "page" },
): Array<[string, RouteHandler]> {
  const page = <T>(
    items: readonly T[],
    idOf: (item: T) => string,
    body: Record<string, unknown>,
    max: number,
  ) => pageOf(items, idOf, body, max, options.countMeans);
  return [
    [
      DIRECTORY_PATHS.getUser,
      (body, ctx) => {
        const id = stringField(body, "id", true);
        const user = directory.user(id, ctx.nowMs);
        if (!user)
          throw new SimConnectError(
            "not_found",
            `user "${truncateForMessage(id)}" not found`,
          );
        return { user };
      },
    ],
    [
      DIRECTORY_PATHS.listUserDevices,
      (body, ctx) => {
        const userId = stringField(body, "userId", true);
        const devices = directory.devices(userId, ctx.nowMs);
        return listAnswer(
          "devices",
          page(
            devices,
            (d) => (typeof d.deviceId === "string" ? d.deviceId : ""),
            body,
            100,
          ),
        );
      },
    ],
    [
      DIRECTORY_PATHS.listNativeUsers,
      (body, ctx) => {
        const resourceId = stringField(body, "resourceId", true);
        orderOf(body);
        const users = directory
          .nativeUsersOf(resourceId)
          .filter((n) => directory.nativeUserPresent(n, ctx.nowMs))
          .map((n) => directory.nativeUser(n, ctx.nowMs))
          .sort((a, b) => idOf(a).localeCompare(idOf(b)));
        return listAnswer("nativeUsers", page(users, idOf, body, 500));
      },
    ],
    [
      DIRECTORY_PATHS.listIdentityLinks,
      (body, ctx) => {
        const nativeUserId = stringField(body, "nativeUserId");
        const identityType = stringField(body, "identityType");
        orderOf(body);
        const links = directory.links(ctx.nowMs).filter((l) => {
          if (
            nativeUserId !== "" &&
            idOf(l.nativeUser as never) !== nativeUserId
          )
            return false;
          if (identityType === "") return true;
          const kind =
            "user" in l ? "user" : "group" in l ? "group" : "resource_hostname";
          return kind === identityType;
        });
        return listAnswer("links", page(links, idOf, body, 500));
      },
    ],
    [
      DIRECTORY_PATHS.listInventoryObjects,
      (body, ctx) => {
        orderOf(body);
        const objects = directory.inventory(ctx.nowMs);
        return listAnswer("inventory", page(objects, inventoryIdOf, body, 500));
      },
    ],
    [
      DIRECTORY_PATHS.listPolicySuspensions,
      (body, ctx) => {
        const order = orderOf(body);
        const all = directory.suspensions(ctx.nowMs);
        // Newest first unless asked otherwise.
        if (order !== "asc") all.reverse();
        return listAnswer("policySuspensions", page(all, idOf, body, 500));
      },
    ],
    [
      DIRECTORY_PATHS.listIntegrationClouds,
      (_body, ctx) => {
        const clouds = directory.clouds(ctx.nowMs);
        return { clouds, listMetadata: { count: clouds.length } };
      },
    ],
  ];
}
