// Regenerates the reference of every setting in docs/configuration.md from the configuration
// schema (src/config/schema.ts). Run after adding or changing a setting, and read the diff.
import { spawnSync } from "node:child_process";

const result = spawnSync(
  "npx",
  ["vitest", "run", "test/unit/config/reference.test.ts"],
  {
    stdio: "inherit",
    env: { ...process.env, UPDATE_CONFIG_REFERENCE: "1" },
  },
);
process.exit(result.status ?? 1);
