// The environment variables the configuration loader reads, found by running it: an environment
// that records every name asked of it and answers none. No list is kept beside the loader's.
import { ConfigError, loadConfig } from "../../src/config/index.js";

export function envNamesTheLoaderReads(): ReadonlySet<string> {
  const asked = new Set<string>();
  const env = new Proxy<Record<string, string | undefined>>(
    {},
    {
      get(_target, name) {
        if (typeof name === "string") asked.add(name);
        return undefined;
      },
    },
  );
  try {
    loadConfig({ env });
  } catch (err) {
    // Nothing is set, so the API's settings are missing; any other failure is a real one.
    if (!(err instanceof ConfigError)) throw err;
  }
  if (asked.size === 0)
    throw new Error(
      "loadConfig read no environment variable: it no longer reads `env`",
    );
  return asked;
}
