// The type of scripts/server-suites.mjs, for the test that holds it.
export interface ServerSuite {
  /** A test file, from the repository's root. */
  readonly suite: string;
  /** "server": run again in the server pass; "own front": starts an HTTP front itself. */
  readonly pass: "server" | "own front";
  /** The sources branching on the warehouse's kind that it runs against a server. */
  readonly covers: readonly string[];
}
export declare const SERVER_SUITES: readonly ServerSuite[];
