// Reading rows back: a SELECT with typed parameters, answered as JSON objects.
import type { Warehouse } from "./client.js";

export async function selectRows<T>(
  w: Warehouse,
  query: string,
  params: Record<string, unknown> = {},
): Promise<T[]> {
  const rs = await w.client.query({
    query,
    query_params: params,
    format: "JSONEachRow",
  });
  return rs.json<T>();
}

/** The `n` of a query answering one row `{ n }`; 0 when it answers none. */
export async function selectCount(
  w: Warehouse,
  query: string,
  params: Record<string, unknown> = {},
): Promise<number> {
  const [r] = await selectRows<{ n: string | number }>(w, query, params);
  return Number(r?.n ?? 0);
}
