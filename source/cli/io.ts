/** What a command may touch of the outside world; main.ts passes the real process. */
export interface CommandIo {
  readonly cwd: string;
  /** Where a human answers gates; absent in tests that pass no terminal. */
  readonly stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: { write(text: string): unknown; isTTY?: boolean };
  readonly stderr: { write(text: string): unknown };
}

export function println(stream: CommandIo['stdout'], text = ''): void {
  stream.write(`${text}\n`);
}
