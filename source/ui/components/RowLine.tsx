import { Text } from 'ink';
import { GLYPH } from '../theme.js';
import { useUiOptions } from '../ui-context.js';
import type { Row } from './row.js';
import { useSpinnerFrame } from './spinner-clock.js';

/** A spinner's current frame, from the one clock all spinners share. */
function Spinner() {
  return <Text>{useSpinnerFrame()}</Text>;
}

/**
 * One row, exactly one terminal line. Rows that may be long are wrapped into rows before they get
 * here (`wrapRow`: the output, the result, a gate, blast radius); anything still wider than the
 * panel (a fixed-width table row) is cut at its end, never wrapped by Ink, so a panel keeps its size.
 */
export function RowLine({ row }: { readonly row: Row }) {
  const { palette, animate } = useUiOptions();
  return (
    <Text wrap="truncate-end">
      {row.map((segment, index) => {
        const color = segment.tone ? palette[segment.tone] : undefined;
        if ('spinner' in segment) {
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: segments are positional and never reordered
            <Text key={index} color={color}>
              {animate ? <Spinner /> : GLYPH.still}
            </Text>
          );
        }
        return (
          <Text
            // biome-ignore lint/suspicious/noArrayIndexKey: segments are positional and never reordered
            key={index}
            color={color}
            bold={segment.bold}
            dimColor={segment.dim}
            inverse={segment.inverse}
          >
            {segment.text}
          </Text>
        );
      })}
    </Text>
  );
}

/** Rows stacked top to bottom, one terminal line each. */
export function Rows({ rows }: { readonly rows: readonly Row[] }) {
  return (
    <>
      {rows.map((row, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are positional
        <RowLine key={index} row={row} />
      ))}
    </>
  );
}
