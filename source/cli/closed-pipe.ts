/**
 * `relais status | head`: the reader leaves while lines are still coming, and every later write
 * fails with EPIPE, reported as an 'error' event that, unheard, crashes the process with a stack
 * trace. Those lines have no reader left, so they are dropped: the command finishes its work as it
 * would have (a run still stops its agents, rolls back and releases the lock) and exits with its
 * own code. Node ignores SIGPIPE, so this event is the only sign of a closed pipe.
 *
 * Any other write error is left as it was: heard by a listener the command added for it (the
 * session's, for a closed terminal), or else thrown.
 */
export function dropOutputToClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') return;
    if (stream.listenerCount('error') > 1) return;
    throw error;
  });
}
