// A reader that goes away (`sessionhouse demo | head`) ends the output, not the command: the
// write fails with EPIPE, the stream is destroyed, and every later write to it is discarded. The
// command goes on, stores what it was fetching and closes its warehouse as usual. Without a
// listener the EPIPE is an uncaught error, and the process dies in the middle of a sync with
// the embedded engine still open.

/** Lets `stream` end quietly when its reader goes away; any other error is thrown as before. */
export function endQuietlyOnBrokenPipe(stream: NodeJS.EventEmitter): void {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
  });
}
