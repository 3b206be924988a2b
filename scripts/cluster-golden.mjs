// Regenerates test/integration/cluster/golden/: every migration rendered in every cluster mode, as the
// embedded engine formats it. Run after adding or changing a migration, and read the diff.
import { spawnSync } from "node:child_process";

const result = spawnSync(
  "npx",
  ["vitest", "run", "test/integration/cluster/golden.test.ts"],
  {
    stdio: "inherit",
    env: { ...process.env, UPDATE_CLUSTER_GOLDEN: "1", CLICKHOUSE_URL: "" },
  },
);
process.exit(result.status ?? 1);
