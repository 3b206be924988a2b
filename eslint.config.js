import js from "@eslint/js";
import tseslint from "typescript-eslint";

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
    files: ["src/simulator/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: String.raw`^\.\./\.\./(?!simulator/)|^\.\./(api|cli|config|ops|pipeline|scheduler|sources|util|warehouse)/`,
              message:
                "the simulator imports nothing from the exporter; keep its own copy",
            },
          ],
        },
      ],
    },
  },
  {
    // Product code reaches the simulator only through the demo and simulate commands.
    files: ["src/**/*.ts"],
    ignores: [
      "src/simulator/**",
      "src/cli/commands/demo.ts",
      "src/cli/commands/simulate.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: String.raw`(^|/)simulator(/|$)`,
              message:
                "only the demo and simulate commands use the simulator; the exporter talks to a control plane over HTTP",
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
