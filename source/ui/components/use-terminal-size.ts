import { useStdout } from 'ink';
import { useEffect, useState } from 'react';

export interface TerminalSize {
  readonly columns: number;
  readonly rows: number;
}

/**
 * The terminal's size, followed on resize (the layout is recomputed from it). A size given as
 * props wins: tests and screenshots render at a fixed size.
 */
export function useTerminalSize(fixedColumns?: number, fixedRows?: number): TerminalSize {
  const { stdout } = useStdout();
  const [size, setSize] = useState<TerminalSize>(() => measure(stdout));
  useEffect(() => {
    const onResize = () => setSize(measure(stdout));
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return { columns: fixedColumns ?? size.columns, rows: fixedRows ?? size.rows };
}

function measure(stdout: NodeJS.WriteStream): TerminalSize {
  return { columns: stdout.columns || 80, rows: stdout.rows || 24 };
}
