import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted stand-in for the Anthropic Messages API on 127.0.0.1, so the REAL `claude` binary can
 * run offline (docs/ARCHITECTURE.md: ANTHROPIC_BASE_URL + SSE on POST /v1/messages). Only the model is fake:
 * Claude Code's tools, permissions and output formats are the real ones. Used by the e2e tests and
 * by the bundled demo.
 */

export interface ModelRequest {
  readonly model: string;
  readonly system: string;
  readonly messages: ReadonlyArray<{ role: string; content: unknown }>;
  readonly toolNames: readonly string[];
  readonly stream: boolean;
}

export interface ToolUse {
  readonly name: string;
  readonly input: Record<string, unknown>;
}

export interface ModelReply {
  readonly text?: string;
  readonly toolUses?: readonly ToolUse[];
}

export type ModelScript = (request: ModelRequest) => ModelReply;

export interface ScriptedModel {
  readonly url: string;
  readonly requests: ModelRequest[];
  close(): Promise<void>;
}

export async function startScriptedModel(script: ModelScript): Promise<ScriptedModel> {
  const requests: ModelRequest[] = [];
  let counter = 0;
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (
        req.method !== 'POST' ||
        !req.url?.startsWith('/v1/messages') ||
        req.url.startsWith('/v1/messages/count_tokens')
      ) {
        res.writeHead(req.url?.startsWith('/v1/messages/count_tokens') ? 200 : 404, {
          'content-type': 'application/json',
        });
        res.end(
          JSON.stringify(
            req.url?.startsWith('/v1/messages/count_tokens')
              ? { input_tokens: 100 }
              : { type: 'error', error: { type: 'not_found_error', message: 'not scripted' } },
          ),
        );
        return;
      }
      const request = parseRequest(body);
      requests.push(request);
      let reply: ModelReply;
      try {
        reply = script(request);
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ type: 'error', error: { type: 'api_error', message: (error as Error).message } }),
        );
        return;
      }
      counter++;
      if (request.stream) streamReply(res, request.model, reply, counter);
      else jsonReply(res, request.model, reply, counter);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function parseRequest(body: string): ModelRequest {
  const json = JSON.parse(body || '{}') as {
    model?: string;
    system?: string | Array<{ text?: string }>;
    messages?: Array<{ role: string; content: unknown }>;
    tools?: Array<{ name?: string }>;
    stream?: boolean;
  };
  const system =
    typeof json.system === 'string' ? json.system : (json.system ?? []).map((b) => b.text ?? '').join('\n');
  return {
    model: json.model ?? 'unknown',
    system,
    messages: json.messages ?? [],
    toolNames: (json.tools ?? []).map((t) => t.name ?? ''),
    stream: json.stream === true,
  };
}

function contentBlocks(reply: ModelReply, id: number): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = [];
  if (reply.text !== undefined) blocks.push({ type: 'text', text: reply.text });
  (reply.toolUses ?? []).forEach((tool, i) => {
    blocks.push({ type: 'tool_use', id: `toolu_${id}_${i}`, name: tool.name, input: tool.input });
  });
  return blocks;
}

const usage = {
  input_tokens: 120,
  output_tokens: 40,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};

function jsonReply(res: ServerResponse, model: string, reply: ModelReply, id: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      model,
      content: contentBlocks(reply, id),
      stop_reason: reply.toolUses?.length ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage,
    }),
  );
}

function streamReply(res: ServerResponse, model: string, reply: ModelReply, id: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: string, data: Record<string, unknown>) =>
    res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  send('message_start', {
    message: {
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  contentBlocks(reply, id).forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', {
    delta: { stop_reason: reply.toolUses?.length ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send('message_stop', {});
  res.end();
}
