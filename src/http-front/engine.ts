// The embedded engine as the front uses it: chdb's Session, typed here by the few members the
// front calls (chdb is an optional dependency, so the build does not need its typings), and a
// gate that bounds how many queries run at once.
import { FrontError } from "./errors.js";

/** What the engine reports about a finished query. */
export interface EngineResult {
  /** Seconds, as the engine measured them. */
  readonly elapsed: number;
  /** Rows of the query's result; for an INSERT … FROM INFILE, the rows read from the file. */
  readonly rowsRead: number;
  /** Bytes (in memory) of those rows. */
  readonly bytesRead: number;
  bytes(): Uint8Array;
}

/** The members of a chdb `Session` the front uses. */
export interface EngineSession {
  /** The data directory the session is bound to. */
  readonly path: string;
  queryAsync(
    query: string,
    opts?: { format?: string; signal?: AbortSignal },
  ): Promise<EngineResult>;
  close(): void;
}

export type SessionConstructor = new (path: string) => EngineSession;

/** chdb's Session class; loads the optional dependency on first use. */
export async function loadSessionClass(): Promise<SessionConstructor> {
  // A variable specifier: chdb is optional, and a build without it must still compile.
  const specifier = "chdb";
  const mod = (await import(specifier)) as { Session: SessionConstructor };
  return mod.Session;
}

/** Runs at most `limit` tasks at once; a task beyond `limit + queue` waiting is refused. */
export class Gate {
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly queue: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.limit) {
      if (this.#waiting.length >= this.queue) {
        throw new FrontError(
          "TOO_MANY_SIMULTANEOUS_QUERIES",
          `Too many simultaneous queries. Maximum: ${this.limit + this.queue}`,
        );
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
