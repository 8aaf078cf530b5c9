/**
 * The Ink front end: a full-screen app fed only by the engine's bus, answering gates from keys.
 * The engine never imports this module; the CLI starts it when the terminal is interactive.
 */

// First: it must run before React is loaded (see react-mode.ts).
import './react-mode.js';

export { App, type AppProps } from './components/App.js';
export { type InkFrontEnd, type InkFrontEndOptions, startInkFrontEnd } from './front-end.js';
export { KeyboardGates } from './gates/keyboard-gates.js';
export { createUiController, type UiController } from './keys/controller.js';
export type { AgentLogEntry, AgentLogPort } from './logs/agent-logs.js';
export { createUiStore, type UiSnapshot, type UiStore, type UiStoreOptions } from './store/create-store.js';
export type { UiState, UiView } from './store/ui-state.js';
