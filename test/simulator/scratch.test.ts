import { test, expect } from "vitest";
import { createSessionGenerator } from "../../src/simulator/sessions.js";
import { formatTimestamp } from "../../src/simulator/time.js";
import { wireEncoder } from "../../src/simulator/wire.js";

test("scratch", () => {
  const day = Date.UTC(2026, 10, 2); // Monday
  const gen = createSessionGenerator({ seed: 1, historyStartMs: day - 30 * 86400000 });
  const big = gen.sessionsStartingIn(day - 10 * 86400000, day - 3600000 * 5);
  for (const s of big.slice(0, 2000)) expect(formatTimestamp(s.startMs)).toBe(new Date(s.startMs).toISOString().replace(".000Z", "Z").replace(/(\.\d\d\d)Z/, "$1Z"));
  const enc = wireEncoder(gen);
  for (let round = 0; round < 3; round++) {
    let t = performance.now();
    const parts: string[] = [];
    for (const s of big) parts.push(enc.json(s, day - 3600000 * 5));
    const t1 = performance.now() - t;
    const body = '{"sessions":[' + parts.join(",") + "]}";
    const t2 = performance.now() - t;
    const buf = Buffer.from(body);
    const t3 = performance.now() - t;
    console.log("json", t1, "join", t2, "buf", t3, buf.length);
  }
  for (const s of big.slice(0, 20000)) expect(enc.json(s, day - 3600000 * 5)).toBe(JSON.stringify(enc.object(s, day - 3600000 * 5)));
});
