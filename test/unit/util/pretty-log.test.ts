// A log event on a terminal is one line: its message and its fields side by side.
import { PassThrough } from "node:stream";
import pino from "pino";
import pretty from "pino-pretty";
import { describe, expect, it } from "vitest";
import { PRETTY_OPTIONS } from "../../../src/util/logger.js";

describe("the terminal's log lines", () => {
  it("print one line per event, its fields included, without pid and host", () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (c: Buffer) => (text += c.toString("utf8")));
    const logger = pino(
      { base: { service: "sessionhouse" } },
      pretty({ ...PRETTY_OPTIONS, colorize: false, destination: out }),
    );
    logger.warn(
      { procedure: "SessionsService/ListSessionsV2", attempt: 2, waitMs: 400 },
      "api call failed, retrying",
    );
    logger.info({ job: "sessions", rows: 120, windows: 3 }, "run finished");
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /WARN.*api call failed, retrying.*"procedure":"SessionsService\/ListSessionsV2".*"attempt":2/,
    );
    expect(lines[1]).toMatch(/INFO.*run finished.*"rows":120/);
    expect(text).not.toMatch(/pid|hostname|"service"/);
  });
});
