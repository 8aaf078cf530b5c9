import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted stand-in for the OpenAI Responses API on 127.0.0.1, so the REAL `codex` binary runs
 * offline (docs/ARCHITECTURE.md: `-c model_provider=fake` pointing at this server, SSE on POST /v1/responses).
 * Only the model is fake: Codex's sandbox, its shell tool (the function `exec_command` with
 * `{"cmd": "..."}`) and its JSONL events are the real ones.
 */

export interface ResponsesRequest {
  readonly model: string;
  /** Every user `input_text` of the conversation, joined: the prompt Codex was given. */
  readonly prompt: string;
  /** Outputs of the shell commands run so far in this turn, in order. */
  readonly toolOutputs: readonly string[];
  readonly toolNames: readonly string[];
}

export interface ResponsesReply {
  readonly text?: string;
  /** Shell commands for Codex to run (one `exec_command` call each) before it asks again. */
  readonly commands?: readonly string[];
}

export type ResponsesScript = (request: ResponsesRequest) => ResponsesReply;

export interface ScriptedResponses {
  /** Base URL including `/v1`, as Codex's provider `base_url` wants it. */
  readonly url: string;
  readonly requests: ResponsesRequest[];
  close(): Promise<void>;
}

export async function startScriptedResponses(script: ResponsesScript): Promise<ScriptedResponses> {
  const requests: ResponsesRequest[] = [];
  let counter = 0;
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (req.method !== 'POST' || !req.url?.endsWith('/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not scripted', type: 'not_found' } }));
        return;
      }
      const request = parseRequest(body);
      requests.push(request);
      let reply: ResponsesReply;
      try {
        reply = script(request);
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: (error as Error).message, type: 'server_error' } }));
        return;
      }
      counter++;
      streamReply(res, reply, counter);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The `-c` overrides that point codex at a scripted server (API key from OPENAI_API_KEY). */
export function fakeProviderOverrides(url: string): string[] {
  return [
    'model_provider=fake',
    `model_providers.fake={name="fake",base_url="${url}",env_key="OPENAI_API_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0}`,
  ];
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

interface InputItem {
  type?: string;
  role?: string;
  content?: Array<{ type?: string; text?: string }>;
  output?: unknown;
}

function parseRequest(body: string): ResponsesRequest {
  const json = JSON.parse(body || '{}') as {
    model?: string;
    input?: InputItem[];
    tools?: Array<{ name?: string; type?: string }>;
  };
  const input = json.input ?? [];
  const prompt = input
    .filter((i) => i.type === 'message' && i.role === 'user')
    .flatMap((i) => (i.content ?? []).filter((c) => c.type === 'input_text').map((c) => c.text ?? ''))
    .join('\n');
  const toolOutputs = input
    .filter((i) => i.type === 'function_call_output')
    .map((i) => (typeof i.output === 'string' ? i.output : JSON.stringify(i.output)));
  return {
    model: json.model ?? 'unknown',
    prompt,
    toolOutputs,
    toolNames: (json.tools ?? []).map((t) => t.name ?? t.type ?? ''),
  };
}

function streamReply(res: ServerResponse, reply: ResponsesReply, id: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: Record<string, unknown> & { type: string }) =>
    res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  send({ type: 'response.created', response: { id: `resp_${id}` } });
  if (reply.text !== undefined) {
    send({
      type: 'response.output_item.done',
      item: {
        type: 'message',
        role: 'assistant',
        id: `msg_${id}`,
        content: [{ type: 'output_text', text: reply.text }],
      },
    });
  }
  (reply.commands ?? []).forEach((cmd, i) => {
    send({
      type: 'response.output_item.done',
      item: {
        type: 'function_call',
        id: `fc_${id}_${i}`,
        call_id: `call_${id}_${i}`,
        name: 'exec_command',
        arguments: JSON.stringify({ cmd }),
      },
    });
  });
  send({
    type: 'response.completed',
    response: {
      id: `resp_${id}`,
      usage: {
        input_tokens: 120,
        input_tokens_details: null,
        output_tokens: 40,
        output_tokens_details: null,
        total_tokens: 160,
      },
    },
  });
  res.end();
}
