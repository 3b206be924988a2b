// The session id of a record that cannot be parsed, found in its bytes for its dead letter.
import { describe, expect, it } from "vitest";
import { scanTopLevelId } from "../../../src/sources/record-id.js";

const scan = (text: string | Buffer) =>
  scanTopLevelId(typeof text === "string" ? Buffer.from(text) : text);

describe("scanTopLevelId", () => {
  it("takes the outermost object's id, not a nested one, wherever it comes", () => {
    expect(scan('{"id":"ses_1","x":1}')).toBe("ses_1");
    expect(
      scan('{"sidecar":{"id":"sc_9"},"tags":["id"], "id" : "ses_2"}'),
    ).toBe("ses_2");
    expect(scan('  {"a":{"b":[{"id":"deep"}]},"id":"ses_\\"3\\u00e9"}')).toBe(
      'ses_"3é',
    );
  });

  it("reads a record cut short or broken after its id", () => {
    expect(scan('{"id":"ses_4","padding":"xxxxxxxx')).toBe("ses_4");
    expect(
      scan(
        Buffer.concat([
          Buffer.from('{"id":"ses_5","name":"'),
          Buffer.from([0xc3, 0x28]),
          Buffer.from('"}'),
        ]),
      ),
    ).toBe("ses_5");
    expect(scan('{"id":"ses_6",}')).toBe("ses_6");
  });

  it("finds nothing where there is no top-level string id", () => {
    expect(scan('{"sidecar":{"id":"sc_9"}}')).toBeUndefined();
    expect(scan('{"id":42}')).toBeUndefined();
    expect(scan('{"id":"cut')).toBeUndefined();
    expect(scan('["id","ses_7"]')).toBeUndefined();
    expect(scan("not json")).toBeUndefined();
    expect(scan('{"name":"x"')).toBeUndefined();
  });
});
