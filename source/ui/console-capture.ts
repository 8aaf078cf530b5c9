import { format } from 'node:util';
import type { UiStore } from './store/create-store.js';

/**
 * While the app owns the screen, a stray console.log would print over the panels. Console calls
 * go to the output panel as log lines instead; the returned function puts the console back.
 */
export function captureConsole(store: UiStore): () => void {
  const methods = ['log', 'info', 'debug', 'warn', 'error'] as const;
  const saved = methods.map((name) => [name, console[name]] as const);
  for (const name of methods) {
    const level = name === 'warn' ? 'warn' : name === 'error' ? 'error' : 'info';
    console[name] = (...args: unknown[]) => {
      store.dispatch({ type: 'log', level, message: format(...args), at: new Date().toISOString() });
    };
  }
  return () => {
    for (const [name, original] of saved) console[name] = original;
  };
}
