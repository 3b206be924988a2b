// An organisation small enough to build in milliseconds, for the tests of the org scale
// scenario's rows (bench/org-scenario.ts) against the simulator's organisation model.

/** The counts buildOrg takes: 60 people, 30 machine accounts, 40 resources. */
export const SMALL_ORG = {
  humans: 60,
  machines: 30,
  resources: 40,
  groups: 8,
  sidecars: 4,
  connectors: 2,
  spaces: 3,
} as const;
