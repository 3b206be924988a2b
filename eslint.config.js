import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Product code reaches the simulator only through the demo and simulate commands.
const SIMULATOR_ONLY_IN_DEMO = {
  regex: String.raw`(^|/)simulator(/|$)`,
  message:
    "only the demo and simulate commands use the simulator; the exporter talks to a control plane over HTTP",
};

// The warehouse and the HTTP front are entered through their index.ts only (their build in dist/
// likewise, for the scripts).
const WAREHOUSE_DOOR = {
  regex: String.raw`(^|/)warehouse/(?!index\.js$)`,
  message:
    "import the warehouse through its entry, warehouse/index.js (export what is needed there)",
};
const FRONT_DOOR = {
  regex: String.raw`(^|/)http-front/(?!index\.js$)`,
  message:
    "import the HTTP front through its entry, http-front/index.js (export what is needed there)",
};

const restrictImports = (...patterns) => ({
  "no-restricted-imports": ["error", { patterns }],
});

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      ".bench-dist/**",
      "node_modules/**",
      "data/**",
      "bench/RESULTS.md",
      "coverage/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        { allowNumber: true, allowBoolean: true },
      ],
    },
  },
  {
    // The simulator is a stand-in for the control plane: it shares no code with the exporter,
    // so a wrong mapping in the exporter fails a test against it instead of agreeing with it.
    // The one exception is the protocol's own table of Connect codes and HTTP statuses.
    files: ["src/simulator/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: String.raw`^\.\./\.\./(?!simulator/)|^\.\./(?!api/connect-codes\.js$)(api|cli|config|http-front|ops|pipeline|scheduler|sources|util|warehouse)/`,
              message:
                "the simulator imports nothing from the exporter; keep its own copy",
            },
          ],
        },
      ],
    },
  },
  // Imports refused outside an area. ESLint keeps one setting of a rule per file (the last entry
  // that matches it), so each entry below lists every pattern that applies to its files.
  {
    files: ["src/**/*.ts"],
    ignores: [
      "src/simulator/**",
      "src/cli/commands/demo.ts",
      "src/cli/commands/simulate.ts",
      "src/warehouse/**",
      "src/http-front/**",
    ],
    rules: restrictImports(SIMULATOR_ONLY_IN_DEMO, WAREHOUSE_DOOR, FRONT_DOOR),
  },
  {
    files: [
      "src/cli/commands/demo.ts",
      "src/cli/commands/simulate.ts",
      "bench/**/*.ts",
      "scripts/**/*.mjs",
    ],
    rules: restrictImports(WAREHOUSE_DOOR, FRONT_DOOR),
  },
  {
    files: ["src/warehouse/**/*.ts"],
    rules: restrictImports(SIMULATOR_ONLY_IN_DEMO, FRONT_DOOR),
  },
  {
    files: ["src/http-front/**/*.ts"],
    rules: restrictImports(SIMULATOR_ONLY_IN_DEMO, WAREHOUSE_DOOR),
  },
  {
    // A test's temporary files go to the run's directory, removed when the run ends.
    files: ["test/**/*.ts"],
    ignores: [
      "test/helpers/run-tmp.ts",
      "test/unit/warehouse/insert-files.test.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "node:os",
              importNames: ["tmpdir"],
              message:
                "make temporary files in testTmpDir() (test/helpers/run-tmp.ts): the run's directory, removed at its end",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: "readonly", console: "readonly" },
    },
  },
);
