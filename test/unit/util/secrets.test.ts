// Every configured secret is scrubbed whatever its length, and a log line stays one valid JSON
// object however short the secret is.
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  loadConfig,
  secretsOf,
  shortSecrets,
} from "../../../src/config/index.js";
import { REDACTED, scrubber } from "../../../src/util/logger.js";
import { memoryLogger } from "../../helpers/logs.js";

const base = {
  SESSIONHOUSE_API_URL: "https://cp.example.com",
  SESSIONHOUSE_API_KEY: "k-123456789abcdef",
};

describe("scrubbing short secrets", () => {
  it("replaces a three-character key wherever it occurs in text", () => {
    const scrub = scrubber(["k3y"]);
    expect(scrub("invalid_argument: key k3y is not valid (k3y)")).toBe(
      `invalid_argument: key ${REDACTED} is not valid (${REDACTED})`,
    );
    expect(scrub("nothing here")).toBe("nothing here");
  });

  it("replaces in one pass, the longer secret first, never inside a marker it wrote", () => {
    const scrub = scrubber(["ab", "abc", "D"]);
    expect(scrub("abcd ab D")).toBe(`${REDACTED}d ${REDACTED} ${REDACTED}`);
  });

  it("keeps a log line one valid JSON object with a one-character secret", () => {
    for (const secret of ["1", '"', ":", "e", "{"]) {
      const { logger, lines } = memoryLogger([secret]);
      logger.info(
        { rows: 1000, note: `a${secret}b`, nested: { m: `x${secret}` } },
        "page stored",
      );
      logger.flush();
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0] ?? "") as Record<string, unknown>;
      // Strings coming from data lose the secret; numbers and the logger's own envelope stay.
      expect(line.note, secret).toBe(`a${REDACTED}b`);
      expect(line.nested, secret).toEqual({ m: `x${REDACTED}` });
      expect(line.rows, secret).toBe(1000);
      expect(line.level, secret).toBe(30);
      expect(typeof line.time).toBe("string");
      expect(Number.isNaN(Date.parse(String(line.time)))).toBe(false);
      expect(line.service).toBe("sessionhouse");
    }
  });

  it("scrubs a short secret out of an error's message and stack in a log line", () => {
    const { logger, text } = memoryLogger(["k3y"]);
    logger.error({ err: new Error("key k3y refused") }, "run failed");
    logger.flush();
    expect(text()).not.toContain("k3y");
    expect(text()).toContain(`key ${REDACTED} refused`);
  });
});

describe("the secrets of a configuration", () => {
  it("holds the key, the password, the URL's password and every extra header value, whatever their length", () => {
    const config = loadConfig({
      env: {
        ...base,
        SESSIONHOUSE_API_KEY: "k3y",
        SESSIONHOUSE_API_EXTRA_HEADERS:
          "Authorization: Bearer tok-9f8e7d; X-Api-Version: 1",
        CLICKHOUSE_URL: "http://default:p%40ss@127.0.0.1:8123",
        CLICKHOUSE_PASSWORD: "pw",
      },
    });
    const secrets = secretsOf(config);
    for (const s of [
      "k3y",
      "Bearer tok-9f8e7d",
      "tok-9f8e7d",
      "1",
      "pw",
      "p%40ss",
      "p@ss",
    ])
      expect(secrets, s).toContain(s);
  });

  it("names the secrets that are short, never their values", () => {
    const config = loadConfig({
      env: {
        ...base,
        SESSIONHOUSE_API_KEY: "k3y",
        SESSIONHOUSE_API_EXTRA_HEADERS: "X-Api-Version: 1",
      },
    });
    const short = shortSecrets(config);
    expect(short.map((s) => s.setting)).toEqual([
      "SESSIONHOUSE_API_KEY (api.apiKey)",
      "SESSIONHOUSE_API_EXTRA_HEADERS (api.extraHeaders), X-Api-Version",
    ]);
    expect(JSON.stringify(short)).not.toContain("k3y");
    expect(shortSecrets(loadConfig({ env: base }))).toEqual([]);
  });

  it("a malformed extra header is named by its position, its value is not repeated", () => {
    try {
      loadConfig({
        env: {
          ...base,
          SESSIONHOUSE_API_EXTRA_HEADERS: "X-Api-Version: 1; Bearer tok-9f8e7d",
        },
      });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as ConfigError).message;
      expect(message).toMatch(/SESSIONHOUSE_API_EXTRA_HEADERS: part 2 /);
      expect(message).not.toContain("tok-9f8e7d");
    }
  });
});
