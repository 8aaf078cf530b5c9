import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import { truncate, widthOf } from '../format/text.js';
import type { Tone } from '../theme.js';
import { useUiOptions } from '../ui-context.js';

/**
 * A bordered panel of an exact size, with its title in the top border (`╭─ Phases ── 3/6 ─╮`).
 * Exact sizes are what keep the layout still: content never pushes a panel taller or wider.
 */
export function Frame(props: {
  readonly title: string;
  /** Right side of the top border (a counter, a scroll position). */
  readonly aside?: string;
  readonly width: number;
  readonly height: number;
  /** Border colour, for the panel that wants attention (a gate, a failure). */
  readonly tone?: Tone;
  readonly children: ReactNode;
}) {
  const { palette } = useUiOptions();
  const color = props.tone ? palette[props.tone] : undefined;
  const dim = props.tone === undefined;
  if (props.height < 2 || props.width < 4)
    return <Box width={props.width} height={Math.max(0, props.height)} />;
  return (
    <Box flexDirection="column" width={props.width} height={props.height} flexShrink={0}>
      <Text color={color} dimColor={dim} wrap="truncate-end">
        {topBorder(props.title, props.aside ?? '', props.width)}
      </Text>
      <Box
        flexDirection="column"
        width={props.width}
        height={props.height - 1}
        borderStyle="round"
        borderTop={false}
        borderColor={color}
        borderDimColor={dim}
        paddingX={1}
        overflow="hidden"
      >
        {props.children}
      </Box>
    </Box>
  );
}

/** `╭─ Title ───── aside ─╮`, exactly `width` columns. */
export function topBorder(title: string, aside: string, width: number): string {
  const inner = width - 2;
  const left = truncate(` ${title} `, Math.max(0, inner - 1));
  const room = inner - 1 - widthOf(left);
  const right = aside && room >= widthOf(aside) + 3 ? ` ${aside} ` : '';
  const fill = Math.max(0, room - widthOf(right) - (right ? 1 : 0));
  return `╭─${left}${'─'.repeat(fill)}${right}${right ? '─' : ''}╮`;
}

/** Content rows inside a frame of `height` rows. */
export function innerHeight(height: number): number {
  return Math.max(0, height - 2);
}

/** Content columns inside a frame of `width` columns (borders and padding). */
export function innerWidth(width: number): number {
  return Math.max(0, width - 4);
}
