// Base of every error the service raises on purpose. Callers match on `code`, never on message
// text. `hint` tells a person what to change; it is printed by the CLI.

export abstract class SessionhouseError extends Error {
  abstract readonly code: string;
  /** What a person should do about it, when we know. */
  readonly hint: string | undefined;

  constructor(message: string, options?: { cause?: unknown; hint?: string }) {
    super(
      message,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = new.target.name;
    this.hint = options?.hint;
  }
}

/** Wrong input from a person: a flag, an argument, a date. Exit status 2. */
export class UsageError extends SessionhouseError {
  readonly code = "USAGE";
}

/** Something the run cannot go on from, with a reason; exit status 1. */
export class FatalError extends SessionhouseError {
  readonly code: string;
  constructor(
    code: string,
    message: string,
    options?: { cause?: unknown; hint?: string },
  ) {
    super(message, options);
    this.code = code;
  }
}

/**
 * A request refused as it stands, not a failure of the run: a warehouse not created yet, SQL
 * that is not a read where only reads run. Exit status 2, as for a UsageError; `code` names it.
 */
export class RefusedError extends FatalError {}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
