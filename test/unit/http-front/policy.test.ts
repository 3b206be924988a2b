// The settings policy of a readonly front (src/http-front/policy.ts): a request sets only the
// settings of the readers' allow-list, the HTTP layer's own included, and the engine's account of
// a prepared session is checked against the same list.
import { describe, expect, it } from "vitest";
import {
  sessionPrelude,
  settingsBeyondList,
  type Policy,
} from "../../../src/http-front/policy.js";
import type { RequestParams } from "../../../src/http-front/request.js";

const readonly: Policy = { readonly: true, maxExecutionTimeS: 30 };

function request(
  settings: Record<string, string>,
  httpSettings: Record<string, string> = {},
): RequestParams {
  return {
    settings: new Map(Object.entries(settings)),
    queryParams: new Map(),
    httpSettings: new Map(Object.entries(httpSettings)),
    compression: { enabled: false, level: 3 },
  };
}

describe("a readonly front's settings", () => {
  it("sets the readers' settings, capped, and readonly last", () => {
    const prelude = sessionPrelude(
      readonly,
      request({
        max_execution_time: "600",
        output_format_parquet_row_group_size: "100",
      }),
      "POST",
    );
    expect(prelude).toBe(
      "SET max_execution_time = '30', output_format_parquet_row_group_size = '100'; SET readonly = 1",
    );
  });

  it.each([
    ["output_format_schema", "/data/.sessionhouse-service.json"],
    ["format_schema", "/etc/passwd"],
    ["output_format_json_quote_64bit_integers", "1"],
    ["max_threads", "1"],
  ])("refuses %s before anything runs", (name, value) => {
    expect(() =>
      sessionPrelude(readonly, request({ [name]: value }), "POST"),
    ).toThrow(`Cannot modify '${name}' setting in readonly mode`);
  });

  it("refuses the HTTP layer's settings as a readonly = 1 server does, but those of the list", () => {
    for (const name of [
      "http_zlib_compression_level",
      "send_progress_in_http_headers",
    ]) {
      expect(() =>
        sessionPrelude(readonly, request({}, { [name]: "1" }), "POST"),
      ).toThrow(`Cannot modify '${name}' setting`);
      expect(
        sessionPrelude(
          { readonly: false },
          request({}, { [name]: "1" }),
          "POST",
        ),
      ).toBe("");
    }
    expect(
      sessionPrelude(
        readonly,
        request({}, { enable_http_compression: "1" }),
        "POST",
      ),
    ).toBe("SET max_execution_time = '30'; SET readonly = 1");
  });

  it("finds a changed setting of the session that is neither the engine's own, the front's, nor the readers'", () => {
    const baseline = new Map([["storage_file_read_method", "mmap"]]);
    expect(
      settingsBeyondList(
        [
          ["storage_file_read_method", "mmap"],
          ["readonly", "1"],
          ["max_memory_usage", "1000"],
          ["max_execution_time", "5"],
          ["output_format_parquet_row_group_size", "100"],
          ["output_format_schema", "/tmp/x.proto"],
          ["storage_file_read_method", "pread"],
        ],
        baseline,
      ),
    ).toEqual(["output_format_schema", "storage_file_read_method"]);
  });
});
