// Replay mode: the simulator serves the session records of a JSON Lines file, byte for byte,
// with the paging, time filter, query subset and GetSession of generated sessions.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SimClock,
  startSimulator,
  type Simulator,
} from "../../../src/simulator/index.js";
import * as wire from "../../helpers/simulator-call.js";
import type { WireRecord } from "../../helpers/simulator-call.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const dir = mkdtempSync(join(testTmpDir(), "sessionhouse-replay-"));
const FILE = join(dir, "sessions.jsonl");
const WINDOW = {
  startTimestamp: wire.secs(wire.T0 - 3 * wire.HOUR),
  endTimestamp: wire.secs(wire.T0),
};

describe("simulator replay", () => {
  let source: Simulator;
  let replay: Simulator;
  /** The records served by a generating simulator, as text, in list order. */
  let lines: string[];

  beforeAll(async () => {
    source = await startSimulator({
      apiKey: wire.API_KEY,
      seed: 5,
      clock: SimClock.fixed(wire.T0),
      sessionsPerDay: 4000,
    });
    const pages = await wire.pageAll(source, { limit: 100_000, ...WINDOW });
    lines = pages
      .flatMap(wire.sessionsOf)
      .map((s) => JSON.stringify(s))
      // The file's order is not the list order: the replay sorts.
      .reverse();
    // One record that starts after the replay's clock: not served yet.
    const future: WireRecord = {
      ...(JSON.parse(lines[0] as string) as WireRecord),
      id: "ses_future",
      startTime: new Date(wire.T0 + wire.HOUR).toISOString(),
    };
    writeFileSync(
      FILE,
      `${[...lines, "", JSON.stringify(future)].join("\n")}\n`,
    );
    lines.reverse();
    replay = await startSimulator({
      apiKey: wire.API_KEY,
      seed: 9,
      clock: SimClock.fixed(wire.T0),
      replaySessions: FILE,
    });
  });
  afterAll(async () => {
    await source.close();
    await replay.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("pages the records exactly as given, in start order, with a cursor until the last page", async () => {
    expect(lines.length).toBeGreaterThan(300);
    const pages = await wire.pageAll(replay, { limit: 97, ...WINDOW });
    const served = pages.flatMap(wire.sessionsOf).map((s) => JSON.stringify(s));
    expect(served).toEqual(lines);
    // Byte for byte: each record's text is in its page as given.
    for (const [i, p] of pages.entries())
      for (const s of wire.sessionsOf(p))
        expect(p.text, `page ${i}`).toContain(JSON.stringify(s));
    expect(wire.nextCursorOf(pages[pages.length - 1] as never)).toBeUndefined();
    for (const p of pages.slice(0, -1))
      expect((p.json?.listMetadata as { count: number }).count).toBe(97);
  });

  it("filters on start time and on the query's terms as the generated list does", async () => {
    const from = wire.T0 - 2 * wire.HOUR;
    const within = (
      await wire.pageAll(replay, {
        limit: 1000,
        startTimestamp: wire.secs(from),
        endTimestamp: wire.secs(wire.T0 - wire.HOUR),
      })
    ).flatMap(wire.sessionsOf);
    const expected = lines
      .map((l) => JSON.parse(l) as WireRecord)
      .filter((s) => {
        const t = Date.parse(s.startTime as string);
        return t >= from && t < wire.T0 - wire.HOUR;
      });
    expect(within.map((s) => s.id)).toEqual(expected.map((s) => s.id));
    const query = "resource.technology:postgres AND sessionStatus:completed";
    const replayed = (
      await wire.pageAll(replay, { limit: 1000, query, ...WINDOW })
    ).flatMap(wire.sessionsOf);
    const generated = (
      await wire.pageAll(source, { limit: 1000, query, ...WINDOW })
    ).flatMap(wire.sessionsOf);
    expect(replayed.length).toBeGreaterThan(10);
    expect(replayed).toEqual(generated);
  });

  it("answers GetSession with the record, and not_found for one it does not hold or that has not started", async () => {
    const one = JSON.parse(lines[5] as string) as WireRecord;
    const got = await wire.call(replay, "GetSession", { sessionId: one.id });
    expect(got.status).toBe(200);
    expect(got.text).toBe(`{"session":${lines[5]}}`);
    for (const sessionId of ["ses_nope", "ses_future"]) {
      const r = await wire.call(replay, "GetSession", { sessionId });
      expect(r.status).toBe(404);
      expect(r.json?.code).toBe("not_found");
    }
    const all = (await wire.pageAll(replay, { limit: 100_000 })).flatMap(
      wire.sessionsOf,
    );
    expect(all.map((s) => s.id)).not.toContain("ses_future");
  });

  it("refuses a file it cannot serve, naming the line, and the mutation mode beside it", async () => {
    await expect(
      startSimulator({
        apiKey: wire.API_KEY,
        replaySessions: FILE,
        mutations: { rates: { vanish: 0.1 } },
      }),
    ).rejects.toThrow("replaySessions and mutations cannot be combined");
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, `${lines[0]}\n{"id":"x"}\n`);
    await expect(
      startSimulator({ apiKey: wire.API_KEY, replaySessions: bad }),
    ).rejects.toThrow(
      `${bad}:2: a replayed session needs an "id" and an RFC 3339 "startTime"`,
    );
    writeFileSync(bad, `${lines[0]}\n${lines[0]}\n`);
    await expect(
      startSimulator({ apiKey: wire.API_KEY, replaySessions: bad }),
    ).rejects.toThrow(
      `${bad}:2: session "${(JSON.parse(lines[0] as string) as WireRecord).id as string}" is given twice`,
    );
  });
});
