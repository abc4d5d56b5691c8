import { WebSocket } from 'undici';

/** The targets a Node inspector lists (`/json/list`). */
export async function inspectorTargets(port: number): Promise<{ url: string; webSocketDebuggerUrl: string }[]> {
  const response = await fetch(`http://127.0.0.1:${port}/json/list`);
  return (await response.json()) as { url: string; webSocketDebuggerUrl: string }[];
}

interface Message {
  id?: number;
  method?: string;
  params?: any;
  result?: any;
  error?: { message: string };
}

/** A Chrome DevTools Protocol session over the inspector's WebSocket: commands, and events waited for. */
export async function connectInspector(webSocketUrl: string) {
  const socket = new WebSocket(webSocketUrl);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`cannot connect to ${webSocketUrl}`)), { once: true });
  });
  let seq = 0;
  const pending = new Map<number, { resolve: (result: any) => void; reject: (error: Error) => void }>();
  const events: Message[] = [];
  const waiters: { method: string; match: (params: any) => boolean; resolve: (params: any) => void }[] = [];
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as Message;
    if (message.id !== undefined) {
      const call = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) call?.reject(new Error(message.error.message));
      else call?.resolve(message.result);
      return;
    }
    events.push(message);
    for (const waiter of [...waiters]) {
      if (waiter.method === message.method && waiter.match(message.params)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message.params);
      }
    }
  });
  return {
    send(method: string, params: Record<string, unknown> = {}): Promise<any> {
      const id = ++seq;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    },
    /** The next event `method` (from now on) whose params match; rejects after `timeoutMs`. */
    next(method: string, match: (params: any) => boolean = () => true, timeoutMs = 15_000): Promise<any> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${method} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ method, match, resolve: (params) => (clearTimeout(timer), resolve(params)) });
      });
    },
    /** The URL a script was parsed under (Debugger.scriptParsed): a call frame's `url` is empty for eval'd code. */
    scriptUrl(scriptId: string): string | undefined {
      return events.find((event) => event.method === 'Debugger.scriptParsed' && event.params.scriptId === scriptId)
        ?.params.url;
    },
    close: () => socket.close(),
  };
}
