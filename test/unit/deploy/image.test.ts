// The image's Dockerfile, read without a Docker engine: the final stage runs as a numbered
// non-root user (what Kubernetes' runAsNonRoot can check), has the WITH_EMBEDDED switch the
// embedded overlay needs, and sets no environment variable the exporter does not read.
import { describe, expect, it } from "vitest";
import { envNamesTheLoaderReads } from "../../helpers/config-env.js";
import { dockerfileStages, imageUser } from "../../helpers/dockerfile.js";

/** Node's own, read by libraries rather than by the exporter's loader. */
const NODE_RUNTIME_ENV = new Set(["NODE_ENV"]);

describe("the image's final stage", () => {
  const runtime = dockerfileStages().stages.at(-1);
  const lines = runtime?.lines ?? [];

  it("runs as a numbered user that is not root", () => {
    const user = imageUser();
    expect(user.spec, "the final stage has no USER").not.toBe("");
    expect(user.uid, `USER ${user.spec} is not a number`).toBeDefined();
    expect(user.uid).not.toBe(0);
    expect(user.gid, `USER ${user.spec} names no numbered group`).toBeDefined();
    expect(user.gid).not.toBe(0);
  });

  it("leaves the embedded engine out unless WITH_EMBEDDED=true", () => {
    expect(lines).toContain("ARG WITH_EMBEDDED=false");
  });

  it("sets only environment variables the exporter or Node.js reads", () => {
    const read = envNamesTheLoaderReads();
    const set = lines.flatMap((l) => {
      const m = /^ENV\s+(\w+)[=\s]/.exec(l);
      return m?.[1] === undefined ? [] : [m[1]];
    });
    for (const name of set)
      expect(
        read.has(name) || NODE_RUNTIME_ENV.has(name),
        `the Dockerfile sets ${name}, which nothing reads`,
      ).toBe(true);
  });
});
