// Shared helpers of the simulator tests: a Connect call over real HTTP.

import type { Simulator } from "../../src/simulator/index.js";

export const API_KEY = "test-key-0123456789";
/** Wednesday 4 November 2026, 12:00 UTC. */
export const T0 = Date.UTC(2026, 10, 4, 12);
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown> | undefined;
}

export async function call(
  sim: Simulator,
  method: string,
  body: unknown,
  init: {
    key?: string | null;
    headers?: Record<string, string>;
    service?: string;
    raw?: string;
  } = {},
): Promise<CallResult> {
  const service =
    init.service ??
    (method === "ListLogAggregations" ? "LogsService" : "SessionsService");
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    ...init.headers,
  };
  if (init.key !== null) headers["X-Api-Key"] = init.key ?? API_KEY;
  const res = await fetch(`${sim.url}/core.v1.${service}/${method}`, {
    method: "POST",
    headers,
    body: init.raw ?? JSON.stringify(body),
  });
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export type WireRecord = Record<string, unknown>;

export function sessionsOf(r: CallResult): WireRecord[] {
  return (r.json?.sessions as WireRecord[] | undefined) ?? [];
}

export function nextCursorOf(r: CallResult): string | undefined {
  const meta = r.json?.listMetadata as { nextCursor?: string } | undefined;
  return meta?.nextCursor;
}

/** Pages through ListSessionsV2 until no nextCursor; returns every page. */
export async function pageAll(
  sim: Simulator,
  request: Record<string, unknown>,
  maxPages = 10_000,
): Promise<CallResult[]> {
  const pages: CallResult[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const r = await call(sim, "ListSessionsV2", {
      ...request,
      ...(cursor ? { cursor } : {}),
    });
    if (r.status !== 200)
      throw new Error(`page ${i}: ${r.status} ${r.text.slice(0, 200)}`);
    pages.push(r);
    cursor = nextCursorOf(r);
    if (!cursor) return pages;
  }
  throw new Error("too many pages");
}

export const secs = (ms: number): string => String(Math.floor(ms / 1000));
